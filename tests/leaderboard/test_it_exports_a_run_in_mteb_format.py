"""A re-run's scores download in MTEB's results format, and MTEB's own schema accepts every file.

The `mteb` package itself is not installed: it pulls in datasets, pyarrow, polars and
pytrec-eval-terrier. The files are therefore validated against a pydantic copy of its TaskResult
(mteb 2.26.24, mteb/results/task_result.py: the fields, their types and `_validate_scores_dict`),
which is the check `TaskResult.from_disk` applies to files written by mteb 1.11 and later.
"""

from __future__ import annotations

import io
import json
import zipfile
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from pydantic import BaseModel, field_validator

from evaluation.engine.registry import TASKS
from evaluation.models import Dataset, Run, Score
from tests.data import VALIDATION_DIR, require_shared_data

pytestmark = pytest.mark.django_db(transaction=True)


class TaskResult(BaseModel):
    """mteb.results.task_result.TaskResult as of mteb 2.26.24 (fields and score validation)."""

    dataset_revision: str
    task_name: str
    mteb_version: str | None
    scores: dict[str, list[dict[str, Any]]]
    evaluation_time: float | None
    kg_co2_emissions: float | None = None

    @field_validator("scores")
    @classmethod
    def _validate_scores(cls, value: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
        for subsets in value.values():
            for scores in subsets:
                if "main_score" not in scores:
                    raise ValueError("'main_score' should be in scores")
                if not isinstance(scores.get("hf_subset"), str):
                    raise ValueError("hf_subset should be in scores and should be a string")
                if not isinstance(scores.get("languages"), list):
                    raise ValueError("languages should be in scores and should be a list")
                json.dumps(scores)
        return value


@pytest.fixture
def bm25_rerun() -> Run:
    require_shared_data(VALIDATION_DIR)
    quiet = {"stdout": StringIO(), "stderr": StringIO()}
    call_command("import_dataset", str(VALIDATION_DIR), **quiet)
    dataset = Dataset.objects.get(name="nirdesha-validation")
    call_command("evaluate", "--model", "bm25", "--dataset", dataset.slug, "--languages", "hin,urd", **quiet)
    return Run.objects.get(model__name="bm25", status=Run.Status.DONE)


def test_it_exports_one_valid_mteb_file_per_task_with_the_run_scores(client, bm25_rerun):
    response = client.get(f"/results/{bm25_rerun.pk}/mteb.zip")
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="nirdesha-run{bm25_rerun.pk}-mteb-results.zip"'
    bundle = zipfile.ZipFile(io.BytesIO(response.content))
    names = sorted(bundle.namelist())
    folder = f"bm25/{bm25_rerun.resolved_commit or bm25_rerun.revision or 'no_revision_available'}"
    assert all(name.startswith(folder + "/") for name in names)
    tasks_with_scores = set(Score.objects.filter(run=bm25_rerun).values_list("task", flat=True))
    task_files = [name for name in names if not name.endswith("model_meta.json")]
    assert len(task_files) == len(tasks_with_scores) >= 3

    t2 = None
    for name in task_files:
        result = TaskResult.model_validate_json(bundle.read(name))
        assert name.endswith(f"/{result.task_name}.json")
        assert result.mteb_version and result.dataset_revision == f"nirdesha-validation@{bm25_rerun.dataset.version}"
        task_id = json.loads(bundle.read(name))["nirdesha"]["task"]
        main = TASKS[task_id].main_metric
        for subset in result.scores["test"]:
            source, _, target = subset["hf_subset"].partition("-")
            stored = Score.objects.get(
                run=bm25_rerun, task=task_id, source_id=source, target_id=target or None, metric=main
            )
            # Fractions, exactly as stored, under MTEB's metric names.
            assert subset["main_score"] == stored.value == subset[main.replace("@", "_at_")]
        if task_id == "t2":
            t2 = result
    assert t2 is not None
    subsets = {entry["hf_subset"]: entry["languages"] for entry in t2.scores["test"]}
    assert subsets == {"hin-urd": ["hin-Deva", "urd-Arab"], "urd-hin": ["urd-Arab", "hin-Deva"]}
    meta = json.loads(bundle.read(f"{folder}/model_meta.json"))
    assert meta["name"] == "bm25"


def test_it_refuses_to_export_a_run_that_is_not_done(client, bm25_rerun):
    bm25_rerun.status = Run.Status.FAILED
    bm25_rerun.save(update_fields=["status"])
    assert client.get(f"/results/{bm25_rerun.pk}/mteb.zip").status_code == 404
