"""A new task with a new unit method and its own details type: only the spec, the method and this test.

The test defines a TaskSpec, a UnitMethod and the method's frozen details block, and adds them with the
registry's hooks (registry.register_task, units.register_method) for its duration. Nothing else of the
project learns about them: the engine plans and scores the task, the typed results read its block back
through `from_dict`, and the demo's real evaluation (load_demo) stores it for the site, whose task page
and API then show it. Outside the hooks the task is unknown again, so the test fails if the registry
ignored the new spec.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from io import StringIO
from typing import Any

import numpy as np
import pytest
from django.core.management import call_command

from evaluation.engine import registry, units
from evaluation.engine.backends import LexicalBackend
from evaluation.engine.corpus import build_corpus
from evaluation.engine.errors import DatasetError
from evaluation.engine.metrics import per_query_retrieval
from evaluation.engine.registry import TaskSpec
from evaluation.engine.results import Details
from evaluation.engine.retrieval import rank_golds
from evaluation.engine.runner import evaluate, plan_tasks
from evaluation.models import Dataset, Run, Score
from tests.engine.golden_outputs import demo_triples
from tests.leaderboard.html import tables


@dataclass(frozen=True)
class MedianRanks:
    """The new method's block of run details: each language's median gold rank and its number of queries."""

    median_rank: dict[str, float]
    queries: dict[str, int]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MedianRanks:
        return cls(median_rank=dict(data["median_rank"]), queries=dict(data["queries"]))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class MedianRankRetrieval(units.UnitMethod):
    """Each persona's instruction ranked among all instructions of its language; reports the median rank."""

    details_type = MedianRanks

    def score(self, spec: TaskSpec, context: units.Context, source: str, target: str | None) -> units.Unit:
        queries = context.text_set(source, spec.query_field, spec.query_role)
        documents = context.text_set(source, spec.document_field, "document")
        result = rank_golds(context.backend.scorer(queries, documents), np.arange(len(queries.texts)), k=units.TOP_K)
        ranks = result.ranks[:, 0]
        unit = units.Unit(spec.id, source, target, per_query_retrieval(ranks))
        unit.info["median_rank"] = float(np.median(ranks))
        return unit

    def details(self, spec: TaskSpec, context: units.Context, scored: list[units.Unit]) -> MedianRanks:
        return MedianRanks(
            median_rank={unit.source: unit.info["median_rank"] for unit in scored},
            queries={unit.source: len(unit.per_query["recall@1"]) for unit in scored},
        )


# No nav_label, columns or compare_label: the site derives them from the spec.
SPEC = TaskSpec(
    "t6",
    "T6 · median-rank retrieval (persona → instruction)",
    "T6",
    "retrieval",
    "persona",
    "instruction",
    cross_lingual=False,
    metrics=registry.RETRIEVAL_METRICS,
    main_metric="recall@1",
    method="median_rank",
    description="each persona's instruction among all instructions of its language, with the median rank",
)


@pytest.fixture
def new_task():
    with units.register_method("median_rank", MedianRankRetrieval()), registry.register_task(SPEC):
        yield SPEC
    assert SPEC.id not in registry.TASKS and "median_rank" not in units.METHODS


@pytest.fixture(scope="module")
def corpus():
    return build_corpus(demo_triples(), requested_languages=None, name="demo", version="1", content_hash="h")


def test_the_engine_does_not_know_the_task_outside_the_hooks(corpus):
    with pytest.raises(DatasetError, match="Unknown task"):
        plan_tasks([SPEC.id], corpus)


def test_the_engine_scores_the_new_task_and_reads_its_block_back_typed(new_task, corpus):
    result = evaluate(corpus, LexicalBackend("bm25"), tasks=[new_task.id, "t1"], n_resamples=50)

    assert result.manifest.tasks == ["t1", new_task.id]
    rows = [row for row in result.scores if row.task == new_task.id]
    assert {row.metric for row in rows} == set(registry.RETRIEVAL_METRICS)
    assert {row.source for row in rows} == set(corpus.languages)
    # Its method ranks like T1's full pool, so its scores are T1's, per language and metric.
    t1 = {(row.source, row.metric): row.value for row in result.scores if row.task == "t1"}
    assert all(row.value == t1[(row.source, row.metric)] for row in rows)
    assert set(result.averages[new_task.id]) == set(registry.RETRIEVAL_METRICS)

    block = result.details.tasks[new_task.id]
    assert isinstance(block, MedianRanks)
    assert set(block.median_rank) == set(corpus.languages)
    assert all(count == corpus.pool_size for count in block.queries.values())

    stored = json.loads(json.dumps(result.details.to_dict()))
    assert stored[new_task.id] == block.to_dict()
    assert Details.from_dict(stored) == result.details
    assert Details.from_dict(stored).tasks[new_task.id] == block


@pytest.mark.django_db
def test_the_site_shows_the_new_task_after_the_demos_real_evaluation(new_task, client):
    call_command("load_demo", "--no-shared", stdout=StringIO(), stderr=StringIO())
    demo = Dataset.objects.get(is_demo=True)
    bm25 = Run.objects.get(model__name="bm25", dataset=demo)
    assert new_task.id in bm25.manifest["tasks"]
    block = Details.from_dict(bm25.details).tasks[new_task.id]
    assert isinstance(block, MedianRanks) and len(block.median_rank) == 5

    recall = Score.objects.filter(run=bm25, task=new_task.id, metric="recall@1")
    assert recall.count() == 5
    mean = sum(score.value for score in recall) / 5

    overview = client.get(f"/?dataset={demo.pk}").content.decode()
    assert f'href="/tasks/{new_task.id}/?dataset={demo.pk}"' in overview
    page = client.get(f"/tasks/{new_task.id}/?dataset={demo.pk}")
    assert page.status_code == 200
    html = page.content.decode()
    assert "T6 · median-rank retrieval (persona → instruction)" in html
    cells = [cell for table in tables(html).values() for row in table for cell in row]
    assert any(cell.startswith(f"{100 * mean:.1f}") for cell in cells), cells[:40]

    scores = client.get(f"/api/scores/?task={new_task.id}&run={bm25.pk}&metric=recall@1").json()
    assert scores["count"] == 5
    assert sorted(row["value"] for row in scores["results"]) == pytest.approx(sorted(s.value for s in recall))


@pytest.mark.django_db
def test_the_site_has_no_page_for_the_task_outside_the_hooks(client):
    assert client.get(f"/tasks/{SPEC.id}/").status_code == 404
