"""`manage.py evaluate --model bm25|tfidf-char`: offline baselines through the whole pipeline."""

import json

import numpy as np
import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command

from evaluation.models import EmbeddingModel, Run, Score
from leaderboard.cache import current_generation
from tests.validation import create_validation_dataset

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("baseline", ["bm25", "tfidf-char"])
def test_it_evaluates_a_baseline_writes_artefacts_and_bumps_the_leaderboard_cache(
    baseline, tmp_path, django_capture_on_commit_callbacks
):
    dataset = create_validation_dataset(("Hindi", "Marathi", "Tamil"))
    generation = current_generation()
    output = tmp_path / "out.json"

    with django_capture_on_commit_callbacks(execute=True):
        call_command("evaluate", "--model", baseline, "--dataset", dataset.slug, "--output", str(output))

    run = Run.objects.get()
    assert run.status == Run.Status.DONE and run.progress == 100.0
    assert run.model.kind == EmbeddingModel.Kind.LEXICAL
    assert run.resolved_commit.startswith("lexical-")
    assert current_generation() == generation + 1
    assert run.manifest["texts_total"] == run.manifest["texts_encoded"] == run.manifest["texts_from_cache"] == 0
    scores = Score.objects.filter(run=run)
    assert scores.filter(task="t2", metric="mrr@10").count() == 6
    assert scores.filter(task="t4", metric="ece_calibrated").count() == 3
    for score in scores:
        assert score.ci_low <= score.value <= score.ci_high, score

    # Same-script pairs (Hindi–Marathi, Devanagari) share words; Hindi–Tamil share almost none.
    groups = run.details["script_groups"]["t2"]
    assert groups["script:Deva"]["pairs"] == ["hin->mar", "mar->hin"]
    assert groups["same_script"]["metrics"]["recall@1"] > 5 * groups["cross_script"]["metrics"]["recall@1"]

    paths = {(e["task"], e["source"], e["target"]): e["path"] for e in run.details["ranks"]}
    # T1, T2, T3, T3x, T5 and the diagnostics: one rank file per language or ordered pair.
    assert len(paths) == 3 + 6 + 3 + 6 + 3 + 3
    with default_storage.open(paths[("multi", "tam", "eng")]) as handle:
        multi = np.load(handle)
        # Stored as the site keeps them (evaluation/engine/rank_files.py): the top 3 and the top 10's English count.
        assert multi["ranks"].shape == (150, 2) and multi["top_item_ids"].shape == (150, 3)
        assert multi["english_in_top10"].shape == (150,) and int(multi["english_in_top10"].max()) <= 10

    payload = json.loads(output.read_text(encoding="utf-8"))
    assert payload["manifest"]["model"]["name"] == baseline
    t1 = [s for s in payload["scores"] if s["task"] == "t1" and s["metric"] == "recall@1"]
    assert {s["source"] for s in t1} == {"hin", "mar", "tam"} and all(s["target"] is None for s in t1)
    assert payload["averages"]["t1"]["recall@1"]["value"] == pytest.approx(np.mean([s["value"] for s in t1]))
