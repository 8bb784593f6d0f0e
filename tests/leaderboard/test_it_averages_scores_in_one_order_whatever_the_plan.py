"""The means the pages show are computed by one PostgreSQL process, so they add their scores in one order.

A floating-point sum depends on the order of its terms, and a parallel plan adds its workers' partial
sums in the order the workers finish: at 1,000 models the T2 and T3x pages' downloads differed in their
last digits from one request to the next (six requests, six different files; bench/leaderboard_latency.py
--keep leaves such a database). The site's connections plan every query for one process
(config/settings/base.py). Here PostgreSQL is also told that parallel plans cost nothing and to read
tables whole, so that any query it may plan in parallel is planned so; the queries of the score means
must still be planned without a Gather node.
"""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from evaluation.models import Score
from tests.factories import FIVE, make_dataset, make_run

pytestmark = pytest.mark.django_db

# Parallel plans cost nothing, and the tables are read whole (on these few rows an index would win).
PARALLEL_PLANS_PREFERRED = (
    "parallel_setup_cost = 0",
    "parallel_tuple_cost = 0",
    "min_parallel_table_scan_size = 0",
    "min_parallel_index_scan_size = 0",
    "enable_indexscan = off",
    "enable_indexonlyscan = off",
    "enable_bitmapscan = off",
)

MEANS = {
    "column_means": lambda scores: scores.column_means([("t1", "recall@1"), ("t2", "recall@1")], list(FIVE)),
    "per_source_means": lambda scores: scores.per_source_means("t2", ["recall@1", "mrr@10"], list(FIVE)),
    "script_split": lambda scores: scores.script_split("t2", "recall@1", list(FIVE)),
}


class Undo(Exception):
    """Raised to roll a savepoint back, and with it whatever SET LOCAL ran inside it."""


def set_locally(*settings: str) -> None:
    with connection.cursor() as cursor:
        for setting in settings:
            cursor.execute(f"SET LOCAL {setting}")


def plans(statements: list[str]) -> list[str]:
    found = []
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(f"EXPLAIN {statement}")
            found.append("\n".join(line for (line,) in cursor.fetchall()))
    return found


@pytest.fixture
def scores():
    if connection.vendor != "postgresql":
        pytest.skip("Parallel plans are PostgreSQL's (SQLite reads and adds rows in one order)")
    dataset = make_dataset()
    runs = [make_run(dataset, f"model-{index}", level=0.2 + index / 10) for index in range(3)]
    # SET LOCAL ends with the test's transaction.
    set_locally(*PARALLEL_PLANS_PREFERRED)
    return Score.objects.for_runs([run.pk for run in runs])


def test_the_sites_connections_plan_for_one_process():
    if connection.vendor != "postgresql":
        pytest.skip("Parallel plans are PostgreSQL's")
    with connection.cursor() as cursor:
        cursor.execute("SHOW max_parallel_workers_per_gather")
        (workers,) = cursor.fetchone()
    assert workers == "0"


@pytest.mark.parametrize("mean", list(MEANS))
def test_the_means_are_planned_without_parallel_workers(scores, mean):
    with CaptureQueriesContext(connection) as captured:
        rows = MEANS[mean](scores)
    assert rows
    statements = [query["sql"] for query in captured.captured_queries if query["sql"].startswith(("SELECT", "("))]
    assert statements
    assert not any("Gather" in plan for plan in plans(statements)), plans(statements)

    # With workers allowed, the same statements are planned in parallel: the check above can fail.
    try:
        with transaction.atomic():
            set_locally("max_parallel_workers_per_gather = 2")
            assert all("Gather" in plan for plan in plans(statements)), plans(statements)
            raise Undo
    except Undo:
        pass
