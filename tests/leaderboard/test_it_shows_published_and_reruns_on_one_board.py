"""Published figures and re-runs on one board: said beside the table; a model with both shows its re-run."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from evaluation.models import Run
from tests.factories import make_run

pytestmark = pytest.mark.django_db
E5 = "intfloat/multilingual-e5-large-instruct"


def test_a_model_with_both_shows_the_rerun_and_links_the_published_figures(client, published):
    published_e5 = Run.objects.get(model__name=E5, origin=Run.Origin.PUBLISHED)
    rerun = make_run(published, E5, level=0.25)
    rows = json.loads(client.get(reverse("leaderboard:overview"), {"format": "json"}).content)["tables"]["overview"]
    e5_rows = [row for row in rows if row["model_id"] == E5]
    assert [row["run_id"] for row in e5_rows] == [rerun.pk]
    assert len(rows) == 8
    page = client.get(reverse("leaderboard:overview")).content.decode()
    assert "This board mixes published figures" in page and "each a count over 49,949 queries" in page
    link = reverse("leaderboard:run_detail", args=[published_e5.pk])
    assert f'<a class="published-twin" href="{link}"' in page
    task = client.get(reverse("leaderboard:task", args=["t1"])).content.decode()
    assert 'id="mixed-origins"' in task


def test_a_board_of_one_origin_says_nothing(client, published):
    page = client.get(reverse("leaderboard:overview")).content.decode()
    assert 'id="mixed-origins"' not in page and "published-twin" not in page
