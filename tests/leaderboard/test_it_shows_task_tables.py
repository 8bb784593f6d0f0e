"""Per-task pages: R@1, R@5 and MRR@10 per language for each model, best values marked."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from evaluation.models import Score
from tests.factories import make_dataset, make_run
from tests.leaderboard.html import rows_by_first_cells, tables

pytestmark = pytest.mark.django_db


def task_tables(client, task: str, query: str = "") -> dict[str, list[list[str]]]:
    response = client.get(reverse("leaderboard:task", args=[task]) + query)
    assert response.status_code == 200
    return tables(response.content)


def test_it_shows_every_language_and_the_mean(client, published):
    found = list(task_tables(client, "t1").values())
    r_at_1, r_at_5, mrr = found[:3]
    header = r_at_1[0]
    assert header[0] == "Model" and header[-1] == "Mean" and len(header) == 14
    e5 = rows_by_first_cells(r_at_1, 0)
    e5_row = next(row for name, row in e5.items() if name.startswith("E5-Large-Instruct"))
    hindi = Score.objects.get(run__model__display_name="E5-Large-Instruct", task="t1", metric="recall@1", source="hin")
    assert e5_row[header.index("Hindi")] == f"{100 * hindi.value:.1f}"
    assert e5_row[-1] == "27.4"
    assert r_at_5[0] == header and mrr[0] == header
    page = client.get(reverse("leaderboard:task", args=["t1"])).content.decode()
    assert page.count('class="best"') >= 3 * 13  # at least one best per language column and the mean, per metric


def test_it_averages_pair_tasks_per_query_language(client, published):
    found = list(task_tables(client, "t2").values())
    header = found[0][0]
    bge = next(row for name, row in rows_by_first_cells(found[0], 0).items() if name.startswith("BGE-M3"))
    from_hindi = list(
        Score.objects.filter(run__model__name="BAAI/bge-m3", task="t2", metric="recall@1", source="hin").values_list(
            "value", flat=True
        )
    )
    assert len(from_hindi) == 11
    assert bge[header.index("Hindi")] == f"{100 * sum(from_hindi) / 11:.1f}"
    assert bge[-1] == "14.3"


def test_it_marks_languages_a_model_does_not_cover(client):
    dataset = make_dataset()
    make_run(dataset, "org/full", display_name="Full", level=0.3)
    make_run(dataset, "bm25", display_name="BM25", level=0.1, kind="lexical", languages=("hin", "mar", "ben", "tam"))
    found = list(task_tables(client, "t3").values())
    header = found[0][0]
    bm25 = next(row for name, row in rows_by_first_cells(found[0], 0).items() if name.startswith("BM25"))
    assert bm25[header.index("Urdu")] == "—, not covered"
    assert bm25[-1].endswith("4/5")


def test_it_downloads_the_per_language_values(client, published):
    response = client.get(reverse("leaderboard:task", args=["t3"]) + "?format=csv&languages=hin&languages=tam")
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert {row["query_language"] for row in rows} == {"hin", "tam"}
    assert len(rows) == 8 * 2 * 5  # models × languages × (R@1, R@5, R@10, MRR@10, nDCG@10)


def test_it_refuses_an_unknown_task(client):
    assert client.get(reverse("leaderboard:task", args=["t9"])).status_code == 404
