"""The pair view of the cross-lingual page: pick a query and a document language, see every model ranked."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.urls import reverse

from evaluation.models import Run, Score
from tests.leaderboard.html import tables

pytestmark = pytest.mark.django_db
URL = reverse("leaderboard:crosslingual")


def test_it_ranks_the_models_that_declare_both_languages(client, published):
    params = {"task": "t2", "query_language": "hin", "document_language": "tam"}
    body = json.loads(client.get(URL, {**params, "format": "json"}).content)
    rows = body["tables"]["pair_view"]
    assert len(rows) == 8
    ranked = [row for row in rows if row["rank_best"] is not None]
    # The three 4-language models do not declare Tamil: listed below, without a rank.
    assert len(ranked) == 5 and rows[:5] == ranked
    assert {row["block"] for row in rows[5:]} == {"fewer_languages"}
    values = {
        score.run_id: score.value
        for score in Score.objects.filter(task="t2", source="hin", target="tam", metric="recall@1")
    }
    assert [row["value"] for row in ranked] == sorted((values[row["run_id"]] for row in ranked), reverse=True)
    assert ranked[0]["rank_best"] == 1
    for row in ranked:
        assert row["ci_low"] < row["value"] < row["ci_high"]
        assert 1 <= row["rank_best"] <= row["rank_worst"] <= 5

    page = client.get(URL, params).content.decode()
    table = tables(page)["pair-table"]
    assert table[0] == ["Rank", "Model", "Origin", "Recall@1 [95%]"]
    assert table[1][3].startswith("18.3")  # E5-Large-Instruct's Hindi→Tamil, rounded once


def test_each_heatmap_cell_links_to_its_pair(client, published):
    e5 = Run.objects.get(model__display_name="E5-Large-Instruct")
    page = client.get(URL, {"task": "t2", "run": e5.pk}).content.decode()
    figure = json.loads(re.search(r'<script id="figure-heatmap" type="application/json">(.*?)</script>', page, re.S)[1])
    [trace] = figure["data"]
    hindi, tamil = trace["y"].index("Hindi"), trace["x"].index("Tamil")
    # figures.js turns "pair:<query>:<document>" into this page's address with the pair chosen.
    assert trace["customdata"][hindi][tamil] == "pair:hin:tam"
    assert trace["customdata"][hindi][hindi] == ""
    script = (Path(__file__).resolve().parents[2] / "static" / "leaderboard" / "figures.js").read_text()
    assert 'url.searchParams.set("query_language", parts[1])' in script
    followed = client.get(
        URL, {"task": "t2", "run": e5.pk, "query_language": "hin", "document_language": "tam"}
    ).content.decode()
    assert 'id="pair-view"' in followed


def test_it_refuses_a_pair_it_does_not_have(client, published):
    page = client.get(URL, {"task": "t2", "query_language": "hin", "document_language": "hin"}).content.decode()
    assert "Choose two different languages of this benchmark version for the pair view." in page
    assert 'id="pair-view"' not in page
