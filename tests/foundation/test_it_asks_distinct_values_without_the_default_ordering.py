"""A query for distinct values clears the model's default ordering first.

Django adds the columns of a queryset's ordering to a DISTINCT query's select list, and every model here
that is read this way orders by something more than the values asked for: `Score` by its run (and so by
the run's creation time), `Item` by its item id, `EmbeddingModel` by its names. So
`Score.objects.filter(run__dataset=version).values_list("source_id", flat=True).distinct()` returned every
score, not every language: the version page of a board of 1,000 runs fetched and typed 1.2 million rows
and their runs' timestamps (6.1 s a build, 0.18 s with `.order_by()`), and a run's start fetched every item
of its version to learn its languages.
"""

from __future__ import annotations

import ast
from pathlib import Path

from django.db import connection
from django.test.utils import CaptureQueriesContext

from evaluation.models import Dataset, EmbeddingModel, Language, Run, Score
from leaderboard.pages.dataset import dataset_page

ROOT = Path(__file__).resolve().parents[2]
PROJECT_PACKAGES = ("accounts", "annotation", "config", "evaluation", "leaderboard")
# What may follow `.distinct()` because Django clears the ordering for it (an aggregate over the rows).
ORDERING_CLEARED_AFTER = {"count", "exists", "aggregate"}


def chain_names(node: ast.expr) -> list[str]:
    """The method names of a call chain, from the last call back to its start (`a.b().c()` -> [c, b])."""
    names = []
    while isinstance(node, ast.Call | ast.Attribute):
        if isinstance(node, ast.Attribute):
            names.append(node.attr)
            node = node.value
        else:
            node = node.func
    return names


def unordered_distinct_values(source: str) -> list[int]:
    """Lines where `.values(...)`/`.values_list(...)` are made distinct with the default ordering left on."""
    tree = ast.parse(source)
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "distinct"):
            continue
        if node.args:
            continue  # DISTINCT ON (fields) names its own columns and needs an ordering that starts with them.
        earlier = chain_names(node.func.value)
        if not {"values", "values_list"} & set(earlier) or "order_by" in earlier:
            continue
        later = []
        outer: ast.AST = node
        while isinstance(parents.get(outer), ast.Attribute | ast.Call):
            outer = parents[outer]
            if isinstance(outer, ast.Attribute):
                later.append(outer.attr)
        if "order_by" in later or (later and later[0] in ORDERING_CLEARED_AFTER):
            continue
        found.append(node.end_lineno or node.lineno)
    return found


def test_the_finder_sees_a_distinct_left_ordered_and_passes_a_cleared_one():
    assert unordered_distinct_values("Score.objects.filter(run=run).values_list('source_id').distinct()") == [1]
    assert unordered_distinct_values("x = (\n  Item.objects.values('language_id')\n  .distinct()\n)") == [3]
    assert unordered_distinct_values("Score.objects.values_list('source_id').order_by().distinct()") == []
    assert unordered_distinct_values("Score.objects.values_list('source_id').distinct().order_by()") == []
    assert unordered_distinct_values("Run.objects.values('model').distinct().count()") == []
    assert unordered_distinct_values("Language.objects.filter(items__dataset=d).distinct()") == []


def test_no_project_module_asks_distinct_values_with_the_default_ordering():
    offenders = []
    for package in PROJECT_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            offenders += [
                f"{path.relative_to(ROOT)}:{line}" for line in unordered_distinct_values(path.read_text("utf-8"))
            ]
    assert not offenders, f"Clear the default ordering (.order_by()) before .distinct(): {offenders}"


def test_a_version_stored_as_results_lists_its_languages_from_one_row_each(db):
    """The version page's languages of a version without items come from its scores, one row a language."""
    version = Dataset.objects.create(name="nirdesha", version="results-only", declared_pool_size=50_000)
    hindi, tamil = Language.objects.get(code="hin"), Language.objects.get(code="tam")
    for index in range(3):
        model = EmbeddingModel.objects.create(name=f"org/model-{index}", display_name=f"Model {index}")
        run = Run.objects.create(model=model, dataset=version, status=Run.Status.DONE, origin=Run.Origin.PUBLISHED)
        Score.objects.bulk_create(
            Score(run=run, task="t1", source=language, metric=metric, value=0.5)
            for language in (hindi, tamil)
            for metric in ("recall@1", "mrr@10")
        )
    with CaptureQueriesContext(connection) as building:
        page = dataset_page(version.pk)
    assert [row["info"].code for row in page.context["languages"]] == ["hin", "tam"]
    [languages_query] = [query["sql"] for query in building.captured_queries if "DISTINCT" in query["sql"]]
    assert "ORDER BY" not in languages_query
    with connection.cursor() as cursor:
        cursor.execute(languages_query)
        assert len(cursor.fetchall()) == 2
