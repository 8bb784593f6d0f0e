"""The compare page: 2 to 4 models side by side, grouped bars per language and one axis per task."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from evaluation.models import Run
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
    assert [row[0] for row in table[1:]] == ["BGE-M3", "E5-Large-Instruct", "LaBSE"]
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
