"""`manage.py evaluate` on the five-language validation sample with the real all-MiniLM-L6-v2 weights.

The run finds its embeddings in the cache the engine filled once for this test process
(tests/minilm_cache.py): a run on the same model, revision and precision resumes from it and encodes
nothing. How a fresh run encodes and counts each text once is tested with the tiny model
(tests/engine/test_it_resumes_from_the_embedding_cache.py).
"""

import json

import numpy as np
import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command

from evaluation.engine.registry import TASK_IDS
from evaluation.models import Dataset, Run, Score
from tests.data import VALIDATION_DIR
from tests.fakes.models import minilm_path
from tests.minilm_cache import MINILM_GROUP

pytestmark = [pytest.mark.slow, pytest.mark.django_db, MINILM_GROUP]

LANGUAGES = ["ben", "hin", "mar", "tam", "urd"]


def test_it_evaluates_every_task_and_writes_scores_manifest_and_json(tmp_path, settings, minilm_cache):
    settings.EMBEDDING_CACHE_DIR = minilm_cache
    call_command("import_dataset", str(VALIDATION_DIR), verbosity=0)
    dataset = Dataset.objects.get()
    output = tmp_path / "result.json"

    call_command("evaluate", "--model", str(minilm_path()), "--dataset", dataset.slug, "--output", str(output))

    run = Run.objects.get()
    assert run.status == Run.Status.DONE, run.message
    assert run.origin == Run.Origin.RERUN
    assert run.resolved_commit.startswith("local-")
    assert run.engine_version == run.manifest["engine_version"]
    # 6 languages (5 + English) × persona and instruction: MiniLM has no prompts, so the query and
    # document roles of a text are the same string and are encoded once. The imported dataset's texts
    # are the engine's, key for key: every one is read from the cache, none encoded again.
    assert run.manifest["texts_total"] == 6 * 2 * 150
    assert run.manifest["texts_from_cache"] == run.manifest["texts_total"]
    assert run.manifest["texts_encoded"] == 0
    assert run.manifest["tasks"] == list(TASK_IDS)

    scores = Score.objects.filter(run=run)
    assert scores.filter(task="t1", metric="recall@1").count() == 5
    assert scores.filter(task="t2", metric="recall@1").count() == 20
    assert scores.filter(task="t3", metric="recall@1").count() == 5
    assert scores.filter(task="t3x", metric="recall@1").count() == 20
    assert scores.filter(task="t4", metric="auroc").count() == 5
    assert scores.filter(task="multi", metric="english_preference").count() == 5
    for score in scores:
        if score.metric != "max@r":
            assert 0.0 <= score.value <= 1.0, score
        assert score.ci_low <= score.value + 1e-9 and score.value <= score.ci_high + 1e-9, score

    # The metric values agree with the stored per-query ranks (an independent recomputation).
    t1_hin = scores.get(task="t1", source="hin", metric="recall@5")
    entry = next(e for e in run.details["ranks"] if e["task"] == "t1" and e["source"] == "hin")
    with default_storage.open(entry["path"]) as handle:
        ranks = np.load(handle)["ranks"]
    assert len(ranks) == 150
    assert t1_hin.value == pytest.approx(np.mean(ranks <= 5))

    # MiniLM is an English model: its monolingual retrieval beats chance (1/150) by far on Latin-free
    # scripts only through shared numbers and names, and Recall@10 is at least Recall@1.
    averages = run.details["averages"]
    assert averages["t1"]["recall@10"]["value"] >= averages["t1"]["recall@1"]["value"] > 1 / 150
    assert set(run.details["t4"]["reliability"]) == set(LANGUAGES)
    assert len(run.details["t4"]["reliability"]["hin"]["before"]) == 15
    assert run.details["tokenizer_coverage"]["Deva"]["languages"] == ["hin", "mar"]
    assert "same_script" in run.details["script_groups"]["t2"]

    payload = json.loads(output.read_text(encoding="utf-8"))
    assert len(payload["scores"]) == scores.count()
    assert {"task", "source", "target", "metric", "value", "ci_low", "ci_high"} <= set(payload["scores"][0])
    manifest = payload["manifest"]
    assert manifest["dataset"]["content_hash"] == dataset.content_hash
    assert manifest["model"]["resolved_revision"] == run.resolved_commit
    assert manifest["model"]["prompts"] == {"query": "", "reverse_query": "", "document": ""}
    for key in ("code_version", "seed", "device", "libraries", "timings", "texts_total", "texts_encoded"):
        assert key in manifest
