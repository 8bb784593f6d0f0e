"""The board's averages are read from the scores' covering index alone, and a version's coverage by
skipping through an index of units, on PostgreSQL.

`ScoreQuerySet.column_means` asks one query a column (task and metric fixed), so that each part reads
the index (task, metric, run) with the other columns it needs stored beside the keys: no row of the
table is read, and the averages are grouped in the index's run order without a sort. At 1,000 models
the overview's averages took 80 ms so, against 280 ms for one aggregate over an OR of the columns.
`RunQuerySet.covered_units` skips from one (source, target) of a column to the next through the expression index
score_units, which no query of the averages can be planned on. A small test table would be scanned
whole by the planner's own choice, so the plans are asked for with the table scans switched off: what
is checked is that the index can answer every part.
"""

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from evaluation.models import Run, Score
from tests.factories import FIVE, make_dataset, make_run

pytestmark = pytest.mark.django_db

COLUMNS = [("t1", "recall@1"), ("t2", "recall@1"), ("t3x", "mrr@10"), ("t4", "auroc")]


def plans_of(read) -> list[str]:
    """The plans of the queries `read` sends, with scans of whole tables switched off."""
    with CaptureQueriesContext(connection) as captured:
        answer = read()
    assert answer, "the read found nothing to average"
    plans = []
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        for query in captured.captured_queries:
            if "evaluation_score" in query["sql"]:
                cursor.execute("EXPLAIN " + query["sql"])
                plans.append("\n".join(row[0] for row in cursor.fetchall()))
    return plans


def reads_only_the_covering_index(plan: str) -> bool:
    score_scans = [line for line in plan.splitlines() if "on evaluation_score" in line]
    return bool(score_scans) and all("Index Only Scan using score_column_covering" in line for line in score_scans)


def needs_postgresql() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the covering index stores its non-key columns on PostgreSQL only")


@pytest.fixture
def board():
    dataset = make_dataset()
    runs = [make_run(dataset, f"org/model-{index}", level=0.2 + index / 20) for index in range(4)]
    # A model declaring three of the five languages puts a clause of its own into every column's part.
    make_run(dataset, "org/three-languages", languages=FIVE[:3])
    return dataset, runs


def test_the_averages_of_every_column_are_read_from_the_covering_index(board):
    needs_postgresql()
    dataset, _ = board
    run_ids = [run.pk for run in Run.objects.filter(dataset=dataset)]
    three = Run.objects.get(model__name="org/three-languages")
    plans = plans_of(
        lambda: Score.objects.for_runs(run_ids).column_means(
            COLUMNS, list(FIVE), "both", languages_by_run={three.pk: list(FIVE[:3])}
        )
    )
    assert len(plans) == 1
    assert plans[0].count("score_column_covering") == len(COLUMNS), plans[0]
    assert reads_only_the_covering_index(plans[0]), plans[0]
    assert "Sort" not in plans[0], plans[0]


def test_a_versions_coverage_is_found_by_skipping_through_the_units_index(board):
    needs_postgresql()
    dataset, _ = board
    plans = plans_of(lambda: Run.objects.filter(dataset=dataset).covered_units(COLUMNS))
    assert len(plans) == 1
    score_scans = [line for line in plans[0].splitlines() if "on evaluation_score" in line]
    assert score_scans and all("using score_units" in line for line in score_scans), plans[0]


def test_the_averages_are_never_planned_on_the_units_index(board):
    """Without the covering index (dropped inside a transaction, then put back), the averages and the
    per-language reads still cannot use score_units, whose keys are expressions they do not name: their
    scores keep being read in an order the units index could not give them."""
    needs_postgresql()
    dataset, _ = board
    run_ids = [run.pk for run in Run.objects.filter(dataset=dataset)]
    reads = [
        lambda: Score.objects.for_runs(run_ids).column_means(COLUMNS, list(FIVE), "both"),
        lambda: Score.objects.for_runs(run_ids).per_source_means("t2", ["recall@1"], list(FIVE)),
        lambda: Score.objects.for_runs(run_ids).per_language("t1", ["recall@1"], list(FIVE)),
    ]
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("DROP INDEX score_column_covering")
        plans = [plan for read in reads for plan in plans_of(read)]
        transaction.set_rollback(True)
    assert len(plans) == len(reads)
    assert not any("score_units" in plan for plan in plans), plans
    # The same planner does use the index for a query written in its expressions.
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        cursor.execute(
            "EXPLAIN SELECT run_id FROM evaluation_score WHERE (task || ' ' || metric) = 't1 recall@1' "
            "AND (source_id || ' ' || COALESCE(target_id, '')) = 'hin '"
        )
        assert "score_units" in "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("RESET enable_seqscan")


def test_the_averages_are_those_of_the_scores_they_average(board):
    """Each part of the union averages its own column's scores, over each run's own languages."""
    _, runs = board
    three = Run.objects.get(model__name="org/three-languages")
    rows = Score.objects.for_runs([runs[0].pk, three.pk]).column_means(
        COLUMNS, list(FIVE), "both", languages_by_run={three.pk: list(FIVE[:3])}
    )
    assert len(rows) == 2 * len(COLUMNS)
    for row in rows:
        languages = FIVE[:3] if row["run_id"] == three.pk else FIVE
        scores = Score.objects.filter(
            run_id=row["run_id"], task=row["task"], metric=row["metric"], source__in=languages
        )
        if row["task"] in ("t2", "t3x"):
            scores = scores.filter(target__in=languages)
        values = list(scores.values_list("value", flat=True))
        assert row["n"] == len(values) > 0
        assert row["mean"] == pytest.approx(sum(values) / len(values), abs=1e-12)


def test_a_versions_coverage_lists_each_unit_with_a_result_once_in_one_order(board):
    """Every unit of a column that one of the runs has a score for, once, sorted; units that only a
    run outside the set has (another version's, or a failed one) are not listed."""
    dataset, _ = board
    other = make_dataset(version="other")
    make_run(other, "org/elsewhere", languages=("guj", "kan"))
    make_run(dataset, "org/failed", languages=("pan", "ory"), status=Run.Status.FAILED)
    runs = Run.objects.filter(dataset=dataset, status=Run.Status.DONE)
    units = runs.covered_units(COLUMNS)
    assert len(units) == len(set(units))
    scores = Score.objects.filter(run__in=runs)
    expected = {
        (task, source, target)
        for task, metric in COLUMNS
        for source, target in scores.filter(task=task, metric=metric).values_list("source_id", "target_id")
    }
    assert set(units) == expected
    assert ("t1", "hin", None) in expected and ("t2", "hin", "tam") in expected
    assert not any({"guj", "kan", "pan", "ory"} & {source, target} for _, source, target in units)
    assert units == sorted(units, key=lambda unit: (unit[0], unit[1], unit[2] or ""))
    assert Run.objects.none().covered_units(COLUMNS) == []
    assert runs.covered_units([]) == []


def bitmap_scans() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW enable_bitmapscan")
        return cursor.fetchone()[0]


def test_the_coverage_is_asked_without_bitmap_scans_and_the_setting_is_given_back(board):
    """A bitmap scan collects every run's score of a unit before it can stop at the first: the coverage
    statement alone is planned without one, whatever the caller had set, inside a transaction or not."""
    needs_postgresql()
    dataset, _ = board
    runs = Run.objects.filter(dataset=dataset)
    expected = runs.covered_units(COLUMNS)
    with CaptureQueriesContext(connection) as captured:
        assert runs.covered_units(COLUMNS) == expected
    statements = [query["sql"] for query in captured.captured_queries]
    coverage = next(index for index, sql in enumerate(statements) if sql.startswith("WITH RECURSIVE"))
    assert "set_config('enable_bitmapscan', 'off', true)" in statements[coverage - 1]
    assert statements[coverage + 1].startswith("ROLLBACK TO SAVEPOINT"), statements
    assert len(statements) == coverage + 2  # nothing more: the savepoint is rolled back, not also released
    assert bitmap_scans() == "on"
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_bitmapscan = off")
        assert runs.covered_units(COLUMNS) == expected
        assert bitmap_scans() == "off"
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_bitmapscan = on")
        assert runs.covered_units(COLUMNS) == expected
        assert bitmap_scans() == "on"
    assert bitmap_scans() == "on"
