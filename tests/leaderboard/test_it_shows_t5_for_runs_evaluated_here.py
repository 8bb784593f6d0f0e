"""T5 hard-negative retrieval is on the leaderboard for the runs evaluated here, like the other tasks."""

from io import StringIO

import pytest
from django.core.management import call_command

from evaluation.models import Dataset, Run, Score
from tests.leaderboard.html import tables

pytestmark = pytest.mark.django_db


def test_the_demo_baselines_have_a_t5_page_with_their_scores(client):
    call_command("load_demo", "--no-shared", stdout=StringIO(), stderr=StringIO())
    demo = Dataset.objects.get(is_demo=True)
    bm25 = Run.objects.get(model__name="bm25", dataset=demo)
    assert "t5" in bm25.manifest["tasks"] and len(bm25.details["t5"]["pools"]) == 5

    overview = client.get(f"/?dataset={demo.pk}").content.decode()
    assert f'href="/tasks/t5/?dataset={demo.pk}"' in overview

    page = client.get(f"/tasks/t5/?dataset={demo.pk}")
    assert page.status_code == 200
    html = page.content.decode()
    assert "T5 · hard-negative retrieval" in html
    recall = Score.objects.filter(run=bm25, task="t5", metric="recall@1")
    assert recall.count() == 5
    mean = sum(score.value for score in recall) / 5
    cells = [cell for table in tables(html).values() for row in table for cell in row]
    assert any(cell.startswith(f"{100 * mean:.1f}") for cell in cells), cells[:40]
