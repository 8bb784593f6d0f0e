"""The errors page's breakdowns: R@1 by query and gold length quartile (lengths the engine recorded), and
each query's English-preference signals from the multi-reference diagnostics."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.leaderboard.demo_runs import demo_reruns, demo_texts, rank_arrays
from tests.leaderboard.html import tables

pytestmark = pytest.mark.django_db


def independent_quartiles(lengths: list[int], ranks: list[int]) -> list[list[str]]:
    """Rows (quartile, length range, queries, R@1 in percent) computed with plain numpy percentiles."""
    edges = np.percentile(lengths, [25, 50, 75])
    rows = []
    for number in range(4):
        members = [
            i
            for i, length in enumerate(lengths)
            if next((q for q, edge in enumerate(edges) if length <= edge), 3) == number
        ]
        if not members:
            continue
        shortest, longest = min(lengths[i] for i in members), max(lengths[i] for i in members)
        span = f"{shortest}" if shortest == longest else f"{shortest}–{longest}"
        recall = 100 * sum(ranks[i] == 1 for i in members) / len(members)
        rows.append([f"Q{number + 1}", span, str(len(members)), f"{recall:.1f}"])
    return rows


def test_it_breaks_r_at_1_down_by_length_quartile_in_characters_for_a_lexical_baseline(client):
    run = demo_reruns()["bm25"]
    arrays = rank_arrays(run, "t1", "hin")
    hindi = demo_texts("hin")
    ids = arrays["query_item_ids"].tolist()
    # The engine recorded each text's length in characters (a lexical baseline has no model tokenizer).
    query_lengths = [len(hindi[item]["indian_context_persona"]) for item in ids]
    gold_lengths = [len(hindi[item]["indian_context_instruction"]) for item in ids]
    assert arrays["query_lengths"].tolist() == query_lengths
    assert arrays["gold_lengths"].tolist() == gold_lengths
    page = client.get(f"/results/{run.pk}/errors/?task=t1&language=hin").content.decode()
    found = tables(page)
    ranks = arrays["ranks"].tolist()
    assert found["query-length-quartiles"][1:] == independent_quartiles(query_lengths, ranks)
    assert found["gold-length-quartiles"][1:] == independent_quartiles(gold_lengths, ranks)
    assert "lengths in characters" in page


def test_it_shows_each_querys_english_preference_signals(client):
    run = demo_reruns()["bm25"]
    multi = rank_arrays(run, "multi", "hin", "eng")
    by_item = {
        int(item): (int(ranks[0]), int(ranks[1]), int(english))
        for item, ranks, english in zip(multi["query_item_ids"], multi["ranks"], multi["english_in_top10"], strict=True)
    }
    page = client.get(f"/results/{run.pk}/errors/?task=t1&language=hin").content.decode()
    shown = re.findall(
        r'data-item="(\d+)".*?own-language gold at rank (\d+), English gold at rank (\d+)'
        r"(?: <strong>\(prefers English\)</strong>)?; (\d+) of the top 10",
        page,
        re.S,
    )
    assert len(shown) == 20
    for item, own, english, count in shown:
        assert by_item[int(item)] == (int(own), int(english), int(count))
    # Reverse retrieval asks another question (instruction → persona): no such signals there.
    assert "English gold" not in client.get(f"/results/{run.pk}/errors/?task=t3&language=hin").content.decode()


def test_it_lists_the_languages_by_their_loss_against_english_to_english(client):
    from evaluation.models import Score

    run = demo_reruns()["bm25"]
    english = run.details["multi"]["english_t1"]["recall@1"]
    assert run.details["multi"]["english_task"] == "t1"
    rows_of_t1 = Score.objects.filter(run=run, task="t1", target__isnull=True, metric="recall@1")
    recall = dict(rows_of_t1.values_list("source_id", "value"))
    expected = sorted(((100 * (value - english["value"]), code) for code, value in recall.items()))
    page = client.get(f"/results/{run.pk}/errors/?task=t1&language=hin").content.decode()
    assert "Against English→English" in page and "largest loss first" in page
    rows = tables(page)["english-losses"][1:]
    assert [row[3] for row in rows] == [f"{drop:.1f}" for drop, _ in expected]
    assert len(rows) == len(recall) >= 2
    assert all(row[2] == f"{100 * english['value']:.1f}" for row in rows)
    body = client.get(f"/results/{run.pk}/errors/?task=t1&language=hin&format=json").json()["against_english"]
    assert [entry["language"] for entry in body["languages"]] == [code for _, code in expected]
    assert body["english_recall@1"]["value"] == english["value"]
