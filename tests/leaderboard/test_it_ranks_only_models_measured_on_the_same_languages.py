"""One ranking rule: a rank compares models measured on the same languages (leaderboard.tables.cells.block_of)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

FOUR = {
    "sentence-transformers/distiluse-base-multilingual-cased-v2",
    "sentence-transformers/paraphrase-xlm-r-multilingual-v1",
    "sentence-transformers/paraphrase-multilingual-mpnet-base-v2",
}


def api_rows(client, **params) -> list[dict]:
    return json.loads(client.get("/api/leaderboard/", params).content)["rows"]


def test_it_ranks_only_the_models_that_declare_every_selected_language(client, published):
    rows = api_rows(client)
    assert len(rows) == 8
    ranked = [row for row in rows if row["rank_best"] is not None]
    unranked = [row for row in rows if row["rank_best"] is None]
    assert {row["model_id"] for row in unranked} == FOUR
    assert all(row["rank_worst"] is None and row["ranked_over"] == "" for row in unranked)
    assert all(row["coverage"] == "4 of 12 languages" for row in unranked)
    # Every ranked row is ranked over the same twelve languages, and the ranks run 1..5 within that block.
    assert len({row["ranked_over"] for row in ranked}) == 1
    assert len(ranked[0]["ranked_over"].split()) == 12
    assert max(row["rank_worst"] for row in ranked) <= len(ranked) == 5
    # The unranked block comes after the ranked one.
    assert [row["rank_best"] is None for row in rows] == [False] * 5 + [True] * 3


def test_it_ranks_every_model_over_the_common_languages_when_asked(client, published):
    rows = api_rows(client, common="on")
    assert all(row["rank_best"] is not None for row in rows)
    assert {row["ranked_over"] for row in rows} == {"guj hin mar urd"}
    assert max(row["rank_worst"] for row in rows) <= 8


def test_it_shows_the_blocks_on_the_page_and_in_the_chart(client, published):
    page = client.get(reverse("leaderboard:overview")).content.decode()
    assert "Ranked over every selected language (12:" in page
    assert "Models declaring fewer of the selected languages" in page
    assert page.index("Ranked over every selected language") < page.index("Models declaring fewer")
    body = json.loads(client.get(reverse("leaderboard:overview"), {"format": "json"}).content)
    csv_rows = body["tables"]["overview"]
    assert sum(1 for row in csv_rows if row["rank_best"] is None) == 3


def test_a_runs_standing_follows_the_same_rule(published):
    from evaluation.models import Run
    from leaderboard.standing import run_standing

    e5 = run_standing(Run.objects.get(model__display_name="E5-Large-Instruct"))
    assert e5.overall.rank == "1" and e5.overall.count == 5
    assert not e5.unranked
    mpnet = run_standing(Run.objects.get(model__name__endswith="paraphrase-multilingual-mpnet-base-v2"))
    assert mpnet.places == [] and mpnet.unranked.startswith("Models declaring fewer")
