"""/compare/errors/: two re-runs on the same queries, their 2×2 table of rank-1 hits and the exact McNemar test."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from tests.leaderboard.demo_runs import demo_reruns, rank_arrays

pytestmark = pytest.mark.django_db


def independent_table(a, b, task: str, source: str, target: str | None):
    """The 2×2 table and exact McNemar p-value from the two rank files, with numpy and statsmodels."""
    first, second = rank_arrays(a, task, source, target), rank_arrays(b, task, source, target)
    # Align the queries by item id, whatever order each file keeps them in.
    hits_a = dict(zip(first["query_item_ids"].tolist(), (first["ranks"] == 1).tolist(), strict=True))
    hits_b = dict(zip(second["query_item_ids"].tolist(), (second["ranks"] == 1).tolist(), strict=True))
    items = sorted(hits_a)
    assert items == sorted(hits_b)
    x, y = np.array([hits_a[i] for i in items]), np.array([hits_b[i] for i in items])
    table = np.array([[np.sum(x & y), np.sum(x & ~y)], [np.sum(~x & y), np.sum(~x & ~y)]])
    only_a = sorted(i for i in items if hits_a[i] and not hits_b[i])
    only_b = sorted(i for i in items if hits_b[i] and not hits_a[i])
    return table, mcnemar(table, exact=True).pvalue, only_a, only_b


@pytest.mark.parametrize(("task", "source", "target"), [("t1", "hin", None), ("t3", "urd", None), ("t2", "tam", "hin")])
def test_it_counts_the_2x2_table_and_the_exact_mcnemar_p_value_as_statsmodels_does(client, task, source, target):
    runs = demo_reruns()
    a, b = runs["bm25"], runs["tfidf-char"]
    query = f"a={a.pk}&b={b.pk}&task={task}&language={source}" + (f"&target={target}" if target else "")
    body = client.get(f"/compare/errors/?{query}&format=json").json()
    table, p_value, only_a, only_b = independent_table(a, b, task, source, target)
    counts = body["counts"]
    assert [[counts["both"], counts["only_a"]], [counts["only_b"], counts["neither"]]] == table.tolist()
    assert sum(counts.values()) == 36
    assert body["mcnemar_exact_p"] == pytest.approx(p_value, rel=1e-12)
    assert sorted(row["item_id"] for row in body["only_a"]) == only_a
    assert sorted(row["item_id"] for row in body["only_b"]) == only_b
    assert all(row["rank_a"] == 1 and row["rank_b"] > 1 for row in body["only_a"])
    assert all(row["rank_b"] == 1 and row["rank_a"] > 1 for row in body["only_b"])
    page = client.get(f"/compare/errors/?{query}").content.decode()
    assert 'id="paired-hits"' in page and f"{table[0][1]}</td>" in page


def test_it_shows_the_two_runs_disagreements_in_their_scripts(client):
    runs = demo_reruns()
    a, b = runs["bm25"], runs["tfidf-char"]
    page = client.get(f"/compare/errors/?a={a.pk}&b={b.pk}&task=t3&language=urd").content.decode()
    assert "Exact McNemar test" in page
    assert "A at rank 1, B not" in page and "B at rank 1, A not" in page
    # bm25 and tfidf-char disagree on some Urdu queries, so the test sees discordant rows, not only zeros.
    assert 'class="error-query" data-item=' in page


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("a=1&b=1&task=t1&language=hin", "two different runs"),
        ("a=999&b=1&task=t1&language=hin", "no run a"),
        ("a=1&b=99999999999999999999&task=t1&language=hin", "no run b"),
        ("a=1.5&b=2&task=t1&language=hin", "no run a"),
        ("a=1&b=2&task=t4&language=hin", "not a retrieval task"),
        ("a=1&b=2&task=t1&language=zzz", "no such evaluated language"),
    ],
)
def test_it_answers_404_with_a_reason(client, query, reason):
    runs = demo_reruns()
    ids = {"1": str(runs["bm25"].pk), "2": str(runs["tfidf-char"].pk)}
    query = "&".join(
        f"{name}={ids.get(value, value)}" if name in ("a", "b") else f"{name}={value}"
        for name, value in (part.split("=") for part in query.split("&"))
    )
    response = client.get(f"/compare/errors/?{query}&format=json")
    assert response.status_code == 404
    assert reason in response.json()["detail"].lower()


def test_it_is_reached_from_a_runs_errors_page(client):
    runs = demo_reruns()
    a, b = runs["bm25"], runs["tfidf-char"]
    page = client.get(f"/results/{a.pk}/errors/?task=t3&language=urd").content.decode()
    href = f"/compare/errors/?a={a.pk}&amp;b={b.pk}&amp;task=t3&amp;language=urd"
    assert href in page
    assert client.get(href.replace("&amp;", "&")).status_code == 200
