"""The compare page: 2 to 4 models side by side, grouped bars per language and one axis per task."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.urls import reverse

from evaluation.engine.registry import TASKS
from evaluation.models import Run, Score
from leaderboard.columns import compare_axes
from leaderboard.tables.cells import percent
from tests.leaderboard.html import tables

pytestmark = pytest.mark.django_db
URL = reverse("leaderboard:compare")


def figure(html: str, name: str) -> dict:
    return json.loads(re.search(rf'<script id="{name}" type="application/json">(.*?)</script>', html, re.S).group(1))


def runs(*names: str) -> list[int]:
    return [Run.objects.get(model__display_name=name).pk for name in names]


def test_it_puts_three_models_side_by_side(client, published):
    ids = runs("BGE-M3", "E5-Large-Instruct", "LaBSE")
    page = client.get(URL + "?" + "&".join(f"runs={pk}" for pk in ids)).content.decode()
    table = tables(page)["compare-table"]
    # Each name, with the origin badge that leads to its run.
    assert [row[0] for row in table[1:]] == ["BGE-M3 published", "E5-Large-Instruct published", "LaBSE published"]
    # Published averages carry the mean of their per-language Wilson intervals.
    assert table[2][1].startswith("27.4 [") and table[1][3].startswith("32.1 [")
    bars = figure(page, "figure-bars")["data"]
    assert [trace["name"] for trace in bars] == ["BGE-M3", "E5-Large-Instruct", "LaBSE"]
    assert len(bars[0]["x"]) == 12
    per_metric = figure(page, "figure-axes")
    titles = [note["text"] for note in per_metric["layout"]["annotations"]]
    # One axis per task of the registry with results (T5 has no published results: no empty axis).
    assert titles == ["T1", "T2", "T3", "T3x", "T4 AUROC"]
    # Five axes of three bars; each model keeps the colour it has in the per-language bars.
    assert len(per_metric["data"]) == 15
    colours = {trace["name"]: trace["marker"]["color"] for trace in bars}
    assert all(trace["marker"]["color"] == colours[trace["name"]] for trace in per_metric["data"])


def test_it_asks_for_two_to_four_models(client, published):
    one = client.get(URL + f"?runs={runs('BGE-M3')[0]}").content.decode()
    assert "Choose between 2 and 4 models" in one and "figure-bars" not in one
    five = runs("BGE-M3", "E5-Large-Instruct", "LaBSE", "IndicSBERT (NLI)", "IndicSBERT-STS")
    page = client.get(URL + "?" + "&".join(f"runs={pk}" for pk in five)).content.decode()
    assert "you chose 5" in page
    bogus = client.get(URL + "?runs=999999&runs=abc").content.decode()
    assert "not finished runs of this benchmark version" in bogus


def test_it_compares_a_cross_lingual_task_per_query_language(client, published):
    ids = runs("BGE-M3", "LaBSE")
    page = client.get(URL + f"?runs={ids[0]}&runs={ids[1]}&task=t3x&languages=hin&languages=tam").content.decode()
    bars = figure(page, "figure-bars")
    assert bars["data"][0]["x"] == ["Hindi", "Tamil"]
    assert "T3X Recall@1 per query language" in bars["layout"]["title"]["text"]


def test_it_compares_the_cross_lingual_tasks_on_one_language_pair(client, published):
    ids = runs("BGE-M3", "LaBSE")
    query = f"runs={ids[0]}&runs={ids[1]}&task=t2&language_pair=tam-hin"
    page = client.get(f"{URL}?{query}").content.decode()
    assert '<option value="tam-hin" selected>Tamil → Hindi only</option>' in page
    assert "compared on one pair: Tamil queries retrieving Hindi documents" in page
    table = tables(page)["compare-table"]
    labels = {task: label for task, _, label in compare_axes()}
    for row, pk in zip(table[1:], ids, strict=True):
        for task in ("t2", "t3x"):
            column = table[0].index(labels[task])
            stored = Score.objects.get(
                run_id=pk, task=task, metric=TASKS[task].main_metric, source_id="tam", target_id="hin"
            )
            assert row[column].startswith(f"{percent(stored.value)} ["), (task, row[column])
    bars = figure(page, "figure-bars")
    assert [trace["x"] for trace in bars["data"]] == [["Tamil → Hindi"], ["Tamil → Hindi"]]
    # The download carries the pair: its differences are over that pair on the cross-lingual tasks only.
    assert f'href="?{query.replace("&", "&amp;")}&amp;format=csv&amp;table=differences"' in page
    rows = list(
        csv.DictReader(
            io.StringIO(client.get(f"{URL}?{query}&format=csv&table=differences").content.decode("utf-8-sig"))
        )
    )
    languages = {row["task"]: row["languages"] for row in rows}
    assert languages["t2"] == languages["t3x"] == "tam hin"
    assert len(languages["t1"].split()) > 2
    # Without the pair, the same columns are means over every selected pair.
    mean = tables(client.get(f"{URL}?runs={ids[0]}&runs={ids[1]}&task=t2").content.decode())["compare-table"]
    assert mean[1] != table[1]


def test_it_says_when_a_version_has_no_such_pair(client, published):
    ids = runs("BGE-M3", "LaBSE")
    page = client.get(f"{URL}?runs={ids[0]}&runs={ids[1]}&language_pair=tam-eng").content.decode()
    assert "no cross-lingual results for that pair; the mean is shown instead" in page
