"""A board asks for the scores of all its runs at once (ScoreQuerySet.for_runs). On PostgreSQL the run ids
travel as one array parameter, not one parameter each (evaluation/lookups.py); on any database the same
scores come back as with an IN list, and the board's means are the same numbers."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import Q
from django.test.utils import CaptureQueriesContext

from evaluation.models import Score
from tests.factories import FIVE, make_dataset, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs():
    dataset = make_dataset()
    return [make_run(dataset, f"org/model-{index}", level=0.2 + 0.1 * index) for index in range(4)]


def scores_of(queryset) -> list[tuple]:
    return sorted(queryset.values_list("run_id", "task", "source_id", "target_id", "metric", "value"), key=repr)


def test_it_returns_the_scores_an_in_list_returns(runs):
    chosen = [runs[0].pk, runs[2].pk, runs[3].pk]
    assert scores_of(Score.objects.for_runs(chosen)) == scores_of(Score.objects.filter(run_id__in=chosen))
    assert {run_id for run_id, *_ in scores_of(Score.objects.for_runs(chosen))} == set(chosen)
    left_out = Score.objects.filter(~Q(run_id__any_of=chosen))
    assert scores_of(left_out) == scores_of(Score.objects.exclude(run_id__in=chosen))


def test_no_runs_means_no_scores_and_leaving_none_out_keeps_all(runs):
    assert not Score.objects.for_runs([]).exists()
    assert Score.objects.filter(~Q(run_id__any_of=[])).count() == Score.objects.count()


def test_the_boards_means_are_the_same_numbers(runs):
    ids = [run.pk for run in runs]
    columns = [("t1", "recall@1"), ("t2", "recall@1"), ("t2", "mrr@10")]
    by_array = Score.objects.for_runs(ids).column_means(columns, list(FIVE))
    by_list = Score.objects.filter(run_id__in=ids).column_means(columns, list(FIVE))
    assert by_array and sorted(by_array, key=repr) == sorted(by_list, key=repr)


def test_postgresql_gets_the_ids_as_one_parameter(runs):
    if connection.vendor != "postgresql":
        pytest.skip("the array parameter is PostgreSQL's; other databases get an IN list")
    ids = [run.pk for run in runs]
    with CaptureQueriesContext(connection) as captured:
        list(Score.objects.for_runs(ids).values_list("pk"))
    (query,) = captured.captured_queries
    assert "= ANY(" in query["sql"] and "::bigint[]" in query["sql"]
    assert " IN (" not in query["sql"]
