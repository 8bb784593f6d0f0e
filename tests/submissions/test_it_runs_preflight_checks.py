"""The preflight_run task: pins and checks the model, measures its tokenizer, then hands over to evaluation."""

from __future__ import annotations

import pytest
from safetensors import safe_open

from evaluation.models import Run
from evaluation.submissions import Submission, submit
from evaluation.tasks import preflight_run
from evaluation.worker import PASSED, SKIPPED, RetryLater, run_preflight
from tests.people import make_admin, make_researcher
from tests.submissions.data import drain_queue

pytestmark = pytest.mark.django_db


def submitted(user, model: str) -> Run:
    return submit(user, Submission(model=model))


def test_it_checks_a_local_model_and_chains_its_evaluation(dataset, tiny_model, django_capture_on_commit_callbacks):
    run = submitted(make_admin(), str(tiny_model))
    drain_queue("gpu")
    with django_capture_on_commit_callbacks(execute=True):
        outcome = preflight_run.apply(args=(run.pk,)).get()
    assert outcome == PASSED
    run.refresh_from_db()
    assert run.status == Run.Status.QUEUED and run.progress == 5.0 and run.worker == ""
    assert run.stage_detail == "pre-flight checks passed; waiting for an evaluation worker"
    assert "PREFLIGHT" in run.stage_timestamps and run.started_at is not None
    assert run.lifecycle["preflight"]["passed"] is True
    assert run.lifecycle["preflight"]["commit"] == run.resolved_commit
    assert "Pre-flight checks passed" in run.log_tail
    assert drain_queue("gpu") == [("evaluation.evaluate_run", [run.pk])]


def test_it_measures_tokenizer_coverage_per_script(dataset, tiny_model):
    run = submitted(make_admin(), str(tiny_model))
    run_preflight(run.pk)
    run.refresh_from_db()
    coverage = run.tokenizer_coverage
    assert set(coverage) == {"Latn", "Deva", "Beng", "Arab", "Taml"}
    assert coverage["Deva"]["languages"] == ["hin", "mar"] and coverage["Arab"]["languages"] == ["urd"]
    # The tiny vocabulary holds English words, Latin and Devanagari letters, and nothing of the others.
    assert coverage["Arab"]["unk_rate"] == coverage["Taml"]["unk_rate"] == 1.0
    # Bengali ends sentences with the danda of the Devanagari block, the only Bengali text it knows.
    assert 0.9 < coverage["Beng"]["unk_rate"] < 1.0
    assert coverage["Deva"]["unk_rate"] < 0.2 and coverage["Latn"]["unk_rate"] < 0.2
    # Words outside the small vocabulary are spelled out letter by letter.
    assert coverage["Deva"]["tokens_per_word"] > 1 and coverage["Latn"]["tokens_per_word"] > 1
    assert coverage["Deva"]["texts"] == 12  # The first three items of two languages, persona and instruction.
    assert run.lifecycle["preflight"]["tokenizer_coverage"] == coverage


def test_it_does_nothing_for_a_run_that_is_not_waiting(dataset, tiny_model):
    run = submitted(make_admin(), str(tiny_model))
    assert run_preflight(run.pk) == PASSED
    assert run_preflight(run.pk) == SKIPPED
    run.cancel()
    run.refresh_from_db()
    assert run_preflight(run.pk) == SKIPPED and run.status == Run.Status.CANCELLED


def test_it_fails_the_submitter_when_the_folder_changed_after_submission(dataset, tiny_model):
    run = submitted(make_admin(), str(tiny_model))
    (tiny_model / "config.json").write_text('{"model_type": "bert", "auto_map": {"AutoModel": "x.Y"}}')
    run_preflight(run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED and run.failure_category == Run.FailureCategory.SUBMITTER
    assert "needs remote code" in run.message
    assert run.finished_at is not None and "FAILED" in run.stage_timestamps


def test_it_checks_a_hub_model_from_configs_and_weight_headers(dataset, tiny_model, fake_hub):
    repo = fake_hub.add("tiny-org/tiny-encoder", tiny_model)
    run = submitted(make_researcher(), "tiny-org/tiny-encoder")
    assert run_preflight(run.pk) == PASSED
    run.refresh_from_db()
    with safe_open(str(tiny_model / "model.safetensors"), "np") as weights:
        counted = sum(weights.get_tensor(name).size for name in weights.keys())  # noqa: SIM118
    assert run.lifecycle["preflight"]["parameter_count"] == counted
    assert run.model.parameter_count == counted
    assert set(run.tokenizer_coverage) == {"Latn", "Deva", "Beng", "Arab", "Taml"}
    fetched = [request for request in fake_hub.requests if f"/resolve/{repo.commit}/" in request]
    assert any(request.endswith("/config.json") for request in fetched)
    assert any(request.endswith("/model.safetensors") for request in fetched)  # The header only (a range).


def test_it_retries_when_the_hub_is_away_then_gives_up(dataset, tiny_model, fake_hub, settings):
    fake_hub.add("tiny-org/tiny-encoder", tiny_model)
    run = submitted(make_researcher(), "tiny-org/tiny-encoder")
    fake_hub.stop()
    settings.RUN_MAX_ATTEMPTS = 2
    with pytest.raises(RetryLater, match="Cannot reach the Hugging Face Hub"):
        run_preflight(run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.QUEUED and run.lifecycle["preflight_tries"] == 1
    assert run.message.startswith("Retrying the pre-flight checks: Cannot reach the Hugging Face Hub")
    run_preflight(run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED and run.failure_category == Run.FailureCategory.OURS
    assert "Pre-flight checks failed 2 times" in run.message
