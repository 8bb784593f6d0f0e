"""`import_published_results` reproduces the paper's averages and is safe to run twice or on bad files."""

from __future__ import annotations

import json
import shutil
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db.models import Avg, Count

from evaluation.models import Dataset, EmbeddingModel, Run, Score
from leaderboard.cache import current_generation

pytestmark = pytest.mark.django_db


def average(model: str, task: str, metric: str = "recall@1") -> tuple[float, int]:
    row = Score.objects.filter(run__model__name=model, task=task, metric=metric).aggregate(
        mean=Avg("value"), n=Count("id")
    )
    return round(100 * row["mean"], 1), row["n"]


def test_it_reproduces_the_published_averages(published_dir, django_capture_on_commit_callbacks):
    out, err = StringIO(), StringIO()
    generation = current_generation()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_published_results", str(published_dir), stdout=out, stderr=err)

    assert "8 runs created" in out.getvalue()
    # The one file labelled 'all' instead of a language is imported as published, not skipped.
    assert "Skipped" not in err.getvalue()
    assert current_generation() > generation, "the import must invalidate cached pages"
    assert average("intfloat/multilingual-e5-large-instruct", "t1") == (27.4, 12)
    assert average("intfloat/multilingual-e5-large-instruct", "t2") == (20.7, 132)
    assert average("BAAI/bge-m3", "t2") == (14.3, 132)
    assert average("BAAI/bge-m3", "t3") == (32.1, 12)
    assert Score.objects.filter(task="t3x").values("source", "target").distinct().count() == 132

    dataset = Dataset.objects.get(name="nirdesha", version="1.0")
    # A version with no items here takes its pool size from the published counts (49,949 queries).
    assert dataset.pool_size == 49_949
    assert dataset.license == "Apache-2.0"
    runs = Run.objects.filter(dataset=dataset)
    assert runs.count() == 8
    assert set(runs.values_list("origin", "status").distinct()) == {("published", "DONE")}

    # Folder names vary (distiluse "-cased" vs "-cased-v2"); both land on one canonical model.
    distiluse = EmbeddingModel.objects.get(name="sentence-transformers/distiluse-base-multilingual-cased-v2")
    assert distiluse.runs.get().scores.filter(task="t1").count() == 12 * 5
    assert EmbeddingModel.objects.get(name="BAAI/bge-m3").display_name == "BGE-M3"
    assert EmbeddingModel.objects.get(name="intfloat/multilingual-e5-large-instruct").parameter_count == 560_000_000

    # T4: language from the file name; the reference's ECE is kept apart, never as `ece`.
    t4 = Score.objects.filter(task="t4")
    assert set(t4.values_list("metric", flat=True).distinct()) == {"auroc", "auprc", "accuracy", "ece_reference"}
    assert t4.filter(metric="auroc").values("source").distinct().count() == 12
    assert distiluse.runs.get().scores.filter(task="t4", metric="auroc").count() == 11
    assert not Score.objects.filter(metric="ece").exists()


def test_it_keeps_every_t4_block_of_every_file_and_the_declared_languages(published_dir):
    call_command("import_published_results", str(published_dir), verbosity=0)
    distiluse = Run.objects.get(model__name="sentence-transformers/distiluse-base-multilingual-cased-v2")
    blocks = distiluse.details["t4_published"]
    # DistilUSE has T4: its 11 per-language files and its pooled 'all' file, the one the paper's Table 7 prints.
    assert sorted(blocks) == sorted(
        ["all", "asm", "ben", "guj", "hin", "kan", "mal", "mar", "ory", "pan", "tam", "tel"]
    )
    pooled = blocks["all"]
    assert pooled["file"] == "distiluse-base-multilingual-cased-v2-all-dev_test-20251005T105856Z.json"
    for split in ("dev", "test"):
        assert set(pooled[split]) == {"base", "calibrated", "ece_base", "ece_calibrated"}
        assert set(pooled[split]["base"]) == {"auroc", "auprc", "accuracy"}
    # Table 7, DistilUSE test: AUROC 71.0, Acc (calibrated) 66.1, ECEcal 0.199.
    assert round(100 * pooled["test"]["base"]["auroc"], 1) == 71.0
    assert round(100 * pooled["test"]["calibrated"]["accuracy"], 1) == 66.1
    assert round(pooled["test"]["ece_calibrated"], 3) == 0.199
    for run in Run.objects.all():
        assert len(run.details["t4_published"]) == 12
    declared = dict(EmbeddingModel.objects.values_list("name", "declared_languages"))
    assert declared["sentence-transformers/paraphrase-xlm-r-multilingual-v1"] == ["guj", "hin", "mar", "urd"]
    assert declared["sentence-transformers/paraphrase-multilingual-mpnet-base-v2"] == ["guj", "hin", "mar", "urd"]
    assert len(declared["BAAI/bge-m3"]) == 12
    assert Score.objects.filter(value__lt=0).count() == 0 and Score.objects.filter(value__gt=1).count() == 0


def test_it_replaces_scores_when_imported_again(published, published_dir):
    # `published` holds what the command wrote the first time (the last test here checks that it does).
    before = Score.objects.count()
    run_ids = set(Run.objects.values_list("pk", flat=True))
    out = StringIO()
    call_command("import_published_results", str(published_dir), stdout=out, stderr=StringIO())

    assert "8 replaced" in out.getvalue()
    assert Score.objects.count() == before
    assert set(Run.objects.values_list("pk", flat=True)) == run_ids


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda data: data["metrics"]["recall"].pop("1"), "metrics.recall['1'] is missing"),
        (lambda data: data["metrics"]["recall"].update({"1": 27.4}), "outside 0–1"),
        (lambda data: data.update({"backbone": "mystery-model"}), "unknown backbone 'mystery-model'"),
        (lambda data: data.update({"lang_or_pair": "xyz"}), "unknown language code 'xyz'"),
    ],
)
def test_it_refuses_a_malformed_file_and_changes_nothing(published, published_dir, tmp_path, damage, expected):
    counts = (Run.objects.count(), Score.objects.count(), Score.objects.aggregate(s=Avg("value"))["s"])
    # BGE-M3's files, one of them damaged: an import that would replace BGE-M3's published run.
    copy = tmp_path / "results"
    for folder in published_dir.glob("*-bge-m3"):
        shutil.copytree(folder, copy / folder.name)
    victim = sorted((copy / "t1_mono_retrieval-bge-m3").glob("*.json"))[3]
    data = json.loads(victim.read_text())
    damage(data)
    victim.write_text(json.dumps(data))

    with pytest.raises(CommandError) as error:
        call_command("import_published_results", str(copy), verbosity=0)

    assert victim.name in str(error.value)
    assert expected in str(error.value)
    assert (Run.objects.count(), Score.objects.count(), Score.objects.aggregate(s=Avg("value"))["s"]) == counts


def test_it_names_a_file_that_is_not_json(published_dir, tmp_path):
    copy = tmp_path / "results"
    shutil.copytree(published_dir / "t4_classification-LaBSE", copy / "t4_classification-LaBSE")
    victim = sorted((copy / "t4_classification-LaBSE").glob("*.json"))[0]
    victim.write_text(victim.read_text()[:200])

    with pytest.raises(CommandError, match=rf"{victim.name}: invalid JSON at line"):
        call_command("import_published_results", str(copy), verbosity=0)
    assert Run.objects.count() == 0


def test_it_refuses_a_folder_without_results(tmp_path):
    with pytest.raises(CommandError, match=r"no '<task>-<model>/\*\.json' result files found"):
        call_command("import_published_results", str(tmp_path), verbosity=0)


def test_it_refuses_to_put_full_pool_results_on_a_smaller_version(published_dir):
    from tests.data import VALIDATION_DIR

    # Imported as "nirdesha 1.0" by mistake, the 150-item validation sample must not take the results.
    call_command("import_dataset", str(VALIDATION_DIR), "--dataset=nirdesha@1.0", stdout=StringIO(), stderr=StringIO())
    assert Dataset.objects.get(name="nirdesha", version="1.0").pool_size == 150

    with pytest.raises(CommandError, match=r"holds 150 items per language.*50,000-item pools"):
        call_command("import_published_results", str(published_dir), verbosity=0)
    assert Run.objects.count() == 0 and Score.objects.count() == 0


def test_the_published_fixture_holds_exactly_what_the_command_writes(published, published_dir):
    def rows():
        scores = Score.objects.filter(run__dataset=published).values_list(
            "run__model__name", "task", "source", "target", "metric", "value", "ci_low", "ci_high"
        )
        models = EmbeddingModel.objects.filter(runs__dataset=published).values_list(
            "name", "display_name", "kind", "license", "parameter_count"
        )
        runs = Run.objects.filter(dataset=published).values_list("model__name", "status", "tasks", "languages")
        return sorted(scores, key=str), sorted(models), sorted(runs, key=str)

    copied = rows()
    call_command("import_published_results", str(published_dir), verbosity=0)
    assert rows() == copied
    assert len(copied[0]) > 10_000 and len(copied[1]) == 8
