"""A retrieval task added to the registry shows on the site with no other change.

The test registers an extra TaskSpec for its duration, stores scores for it through the real
models, and reads the overview, the task's own page, the sub-navigation, the exports, the API
and the run page as a visitor would.
"""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from evaluation.engine import registry
from evaluation.models import Language, Score
from tests.factories import FIVE, make_dataset, make_run
from tests.leaderboard.html import tables

pytestmark = pytest.mark.django_db

EXTRA = registry.TaskSpec(
    "t9",
    "T9 · hard-negative retrieval (persona → instruction)",
    "T9",
    "retrieval",
    "persona",
    "instruction",
    cross_lingual=False,
    metrics=registry.RETRIEVAL_METRICS,
    main_metric="recall@1",
    table_metrics=("recall@1", "mrr@10"),
    in_overall=True,
    description="each persona's instruction among lexically similar ones",
)


@pytest.fixture
def extra_task(monkeypatch):
    monkeypatch.setitem(registry.TASKS, EXTRA.id, EXTRA)
    return EXTRA


@pytest.fixture
def runs(extra_task):
    dataset = make_dataset()
    alpha = make_run(dataset, "org/alpha", display_name="Alpha", level=0.3)
    beta = make_run(dataset, "org/beta", display_name="Beta", level=0.2)
    for run, level in ((alpha, 0.5), (beta, 0.6)):
        Score.objects.bulk_create(
            Score(
                run=run,
                task=extra_task.id,
                source=Language.objects.get(code=code),
                metric=metric,
                value=level + index / 100,
            )
            for index, code in enumerate(FIVE)
            for metric in extra_task.metrics
        )
    return alpha, beta


def test_it_gives_the_new_task_a_page_and_a_link(client, runs):
    overview = client.get(reverse("leaderboard:overview")).content.decode()
    task_url = reverse("leaderboard:task", args=["t9"])
    assert f'<a href="{task_url}" >T9</a>' in overview

    page = client.get(task_url)
    assert page.status_code == 200
    html = page.content.decode()
    assert "<h1>T9 · hard-negative retrieval (persona → instruction)</h1>" in html
    assert f'href="{task_url}" aria-current="page">T9</a>' in html
    # Its table metrics are the spec's, labelled from the metric registry; Beta leads on T9.
    assert "<h2>R@1</h2>" in html and "<h2>MRR@10</h2>" in html and "<h2>R@5</h2>" not in html
    first = next(table for table in tables(page.content).values() if table and table[0][0] == "Model")
    assert sorted(first[0]) == sorted(["Model", "Hindi", "Marathi", "Bengali", "Tamil", "Urdu", "Mean"])
    assert [row[0] for row in first[1:]] == ["Beta re-run", "Alpha re-run"]
    assert first[1][first[0].index("Hindi")] == "60.0"


def test_it_adds_the_new_task_to_the_overview_and_its_exports(client, runs):
    overview = tables(client.get(reverse("leaderboard:overview")).content)["overview-table"]
    assert "T9 R@1" in overview[0]
    column = overview[0].index("T9 R@1")
    by_model = {row[1]: row for row in overview[1:]}
    assert by_model["Beta"][column].startswith("62.0")

    exported = client.get(reverse("leaderboard:overview") + "?format=json").json()["tables"]["overview"]
    beta = next(row for row in exported if row["model"] == "Beta")
    assert beta["t9_recall@1"] == pytest.approx(0.62) and beta["t9_recall@1_covered"] == 5
    # In the overall score: the mean of the five retrieval columns now.
    means = [beta[f"{key}_recall@1"] for key in ("t1", "t2", "t3", "t3x", "t9")]
    assert beta["overall"] == pytest.approx(sum(means) / 5)

    task_csv = client.get(reverse("leaderboard:task", args=["t9"]) + "?format=csv")
    rows = list(csv.DictReader(io.StringIO(task_csv.content.decode("utf-8-sig"))))
    assert {row["metric"] for row in rows} == set(EXTRA.metrics) and len(rows) == 2 * 5 * 4


def test_it_serves_the_new_task_in_the_api(client, runs):
    alpha, _ = runs
    board = client.get("/api/leaderboard/").json()
    assert all("t9_recall@1" in row for row in board["rows"])
    scores = client.get(f"/api/scores/?task=t9&run={alpha.pk}&metric=recall@1").json()
    assert scores["count"] == 5 and {row["task"] for row in scores["results"]} == {"t9"}


def test_it_titles_the_new_tasks_scores_on_the_run_page(client, runs):
    alpha, _ = runs
    html = client.get(reverse("leaderboard:run_detail", args=[alpha.pk])).content.decode()
    assert "T9 · hard-negative retrieval (persona → instruction)" in html
    # Its per-language Recall@1 joins the monolingual bars.
    assert '"name": "T9 R@1"' in html or '"name":"T9 R@1"' in html


def test_it_has_no_page_for_a_task_outside_the_registry(client, runs):
    assert client.get(reverse("leaderboard:task", args=["t8"])).status_code == 404


def test_it_needs_no_model_change_or_migration_for_the_new_task(runs):
    from django.core.exceptions import ValidationError
    from django.core.management import call_command

    # --check exits non-zero (SystemExit) when the models differ from their migrations.
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)
    alpha, _ = runs
    hindi = Language.objects.get(code="hin")
    Score(run=alpha, task="t9", source=hindi, metric="recall@10", value=0.5).full_clean(
        validate_unique=False, validate_constraints=False
    )
    with pytest.raises(ValidationError, match="task"):
        Score(run=alpha, task="t8", source=hindi, metric="recall@10", value=0.5).full_clean(
            validate_unique=False, validate_constraints=False
        )
