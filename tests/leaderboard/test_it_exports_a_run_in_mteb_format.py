"""A run's scores download in MTEB's results format, and the real `mteb` (2.26.24) loads every file.

Each task file is read back with `mteb.TaskResult.from_disk` and `model_meta.json` with mteb's own
`ModelMeta`, for a re-run here (BM25 on the validation sample) and for a published model.
"""

from __future__ import annotations

import io
import json
import zipfile
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from evaluation.engine.registry import TASKS
from evaluation.models import Dataset, Run, Score
from tests.data import VALIDATION_DIR, require_shared_data

pytestmark = pytest.mark.django_db(transaction=True)


def load_with_mteb(content: bytes, folder: Path) -> tuple[dict, object]:
    """Unzip an export and load it with mteb: {file name: TaskResult} and the ModelMeta."""
    from mteb import TaskResult
    from mteb.models import ModelMeta

    zipfile.ZipFile(io.BytesIO(content)).extractall(folder)
    results = {path.name: TaskResult.from_disk(path) for path in sorted(folder.rglob("*.json"))
               if path.name != "model_meta.json"}  # fmt: skip
    (meta_path,) = folder.rglob("model_meta.json")
    meta = ModelMeta.model_validate(json.loads(meta_path.read_text()))
    return results, meta


@pytest.fixture
def bm25_rerun() -> Run:
    require_shared_data(VALIDATION_DIR)
    quiet = {"stdout": StringIO(), "stderr": StringIO()}
    call_command("import_dataset", str(VALIDATION_DIR), **quiet)
    dataset = Dataset.objects.get(name="nirdesha-validation")
    call_command("evaluate", "--model", "bm25", "--dataset", dataset.slug, "--languages", "hin,urd", **quiet)
    return Run.objects.get(model__name="bm25", status=Run.Status.DONE)


@pytest.mark.slow
def test_it_exports_one_valid_mteb_file_per_task_with_the_run_scores(client, bm25_rerun, tmp_path):
    response = client.get(f"/results/{bm25_rerun.pk}/mteb.zip")
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="nirdesha-run{bm25_rerun.pk}-mteb-results.zip"'
    bundle = zipfile.ZipFile(io.BytesIO(response.content))
    names = sorted(bundle.namelist())
    # The folder is named after model_meta.json's name, as mteb's ResultCache looks it up.
    folder = f"nirdesha-baselines__bm25/{bm25_rerun.resolved_commit or bm25_rerun.revision or 'no_revision_available'}"
    assert all(name.startswith(folder + "/") for name in names)
    tasks_with_scores = set(Score.objects.filter(run=bm25_rerun).values_list("task", flat=True))
    task_files = [name for name in names if not name.endswith("model_meta.json")]
    assert len(task_files) == len(tasks_with_scores) >= 3

    loaded, meta = load_with_mteb(response.content, tmp_path)
    assert len(loaded) == len(task_files)
    t2 = None
    for name in task_files:
        result = loaded[name.rsplit("/", 1)[1]]
        assert name.endswith(f"/{result.task_name}.json")
        # The validation sample's tasks are its own, never the full benchmark's columns.
        assert result.task_name.startswith("NirdeshaValidation")
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
    # mteb names need an organisation; unknown facts are mteb's None, the baseline's size is mteb's 0.
    assert meta.name == "nirdesha-baselines/bm25" and meta.revision == bm25_rerun.resolved_commit
    assert meta.n_parameters == 0 and meta.memory_usage_mb is None and meta.license is None
    assert meta.model_type == ["sparse"] and meta.framework == []


def test_a_published_models_export_loads_in_mteb_with_its_facts(client, published, tmp_path):
    run = Run.objects.get(model__name="BAAI/bge-m3", dataset=published)
    response = client.get(f"/results/{run.pk}/mteb.zip")
    assert response.status_code == 200
    loaded, meta = load_with_mteb(response.content, tmp_path)
    tasks = set(Score.objects.filter(run=run).values_list("task", flat=True))
    assert len(loaded) == len(tasks) >= 4
    assert all(result.dataset_revision == "nirdesha@1.0" for result in loaded.values())
    # The facts this site knows, as mteb spells them ("MIT" is mteb's "mit"); a published result has no revision.
    assert (meta.name, meta.revision, meta.license) == ("BAAI/bge-m3", "no_revision_available", "mit")
    assert meta.n_parameters == run.model.parameter_count and meta.embed_dim == 1024 and meta.max_tokens == 8192
    assert len(meta.languages) == 12 and "urd-Arab" in meta.languages
    assert meta.training_datasets is None and meta.similarity_fn_name is None and meta.use_instructions is None


def test_it_refuses_to_export_a_run_that_is_not_done(client, bm25_rerun):
    bm25_rerun.status = Run.Status.FAILED
    bm25_rerun.save(update_fields=["status"])
    assert client.get(f"/results/{bm25_rerun.pk}/mteb.zip").status_code == 404


def test_a_local_folder_has_mtebs_unknown_name_and_an_unknown_licence_stays_unknown():
    from mteb.models import ModelMeta

    from leaderboard.mteb_export import RunFacts, model_meta

    facts = RunFacts("local folder my-encoder", "abc123", "nirdesha", "1.0", "1.0.0", 7, license="Custom licence")
    meta = ModelMeta.model_validate(model_meta(facts))
    assert (
        meta.name == "no_model_name/available" and meta.license is None and meta.framework == ["Sentence Transformers"]
    )
