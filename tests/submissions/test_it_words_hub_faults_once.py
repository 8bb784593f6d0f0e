"""The Hub adapter words a fault once: the submit form, the pre-flight checks and the engine say the same.

And a run's revision is pinned once, at submission: the worker asks the Hub only for that commit.
"""

from __future__ import annotations

import pytest

from evaluation.engine import hub
from evaluation.engine.encoders import download_model, pinned_model, resolve_model
from evaluation.engine.errors import HubUnreachableError, ModelRejected
from evaluation.preflight import check_hub_model
from evaluation.submissions import Submission, SubmissionRefused, submit
from evaluation.worker import DONE, PASSED, run_evaluation, run_preflight
from tests.fakes.hub import closed_port_url
from tests.people import make_researcher

GATED = "tiny-org/tiny-encoder is gated on the Hub; only openly downloadable models can be evaluated."


def test_a_gated_model_is_refused_in_the_same_words_at_submission_and_at_evaluation(fake_hub, tiny_model, dataset):
    fake_hub.add("tiny-org/tiny-encoder", tiny_model, gated=True)
    with pytest.raises(SubmissionRefused) as at_submission:
        submit(make_researcher(), Submission(model="tiny-org/tiny-encoder"))
    with pytest.raises(ModelRejected) as at_preflight:
        check_hub_model("tiny-org/tiny-encoder", None, endpoint=fake_hub.url)
    with pytest.raises(ModelRejected) as at_resolution:
        resolve_model("tiny-org/tiny-encoder")
    with pytest.raises(ModelRejected) as at_download:
        download_model(pinned_model("tiny-org/tiny-encoder", "a" * 40))
    assert at_submission.value.code == "rejected"
    assert {str(at_submission.value), str(at_preflight.value), str(at_resolution.value), str(at_download.value)} == {
        GATED
    }


def test_an_unreachable_hub_is_our_side_in_the_same_words_everywhere(monkeypatch, settings, tiny_model):
    url = closed_port_url()
    settings.HF_ENDPOINT = url
    monkeypatch.setenv("HF_ENDPOINT", url)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    raised = []
    for call in (
        lambda: check_hub_model("tiny-org/tiny-encoder", None, endpoint=url, timeout=2),
        lambda: hub.resolve("tiny-org/tiny-encoder", "main", timeout=2),
        lambda: hub.download("tiny-org/tiny-encoder", "a" * 40),
    ):
        with pytest.raises(HubUnreachableError) as error:
            call()
        raised.append(str(error.value))
    assert set(raised) == {hub.UNREACHABLE_MESSAGE}


def test_the_worker_asks_the_hub_only_for_the_commit_pinned_at_submission(
    fake_hub, tiny_model, dataset, settings, tmp_path
):
    settings.EMBEDDING_CACHE_DIR = tmp_path / "embeddings"
    repo = fake_hub.add("tiny-org/tiny-encoder", tiny_model)
    run = submit(make_researcher(), Submission(model="tiny-org/tiny-encoder"))
    assert run.resolved_commit == repo.commit
    asked_at_submission = list(fake_hub.requests)

    # The branch moves after the submission; the run still evaluates the commit it was pinned to.
    repo.branches["main"] = "f" * 40
    run.tasks = ["t1"]
    run.save(update_fields=["tasks"])
    assert run_preflight(run.pk) == PASSED
    assert run_evaluation(run.pk) == DONE

    run.refresh_from_db()
    assert run.resolved_commit == repo.commit
    assert run.manifest["model"]["resolved_revision"] == repo.commit
    later = fake_hub.requests[len(asked_at_submission) :]
    assert later and not [request for request in later if "/main" in request]
