"""End to end with a real worker process: a submission goes QUEUED → … → DONE and its scores reach the API."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evaluation.models import Run
from tests.fakes.models import break_weights
from tests.people import make_admin, make_researcher
from tests.submissions.waiting import is_over, wait_for_run
from tests.workers import running_worker

pytestmark = [
    pytest.mark.worker,
    pytest.mark.slow,
    # The worker is another process: it sees only committed rows.
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def api():
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=make_admin()).key}")
    return client


def test_it_evaluates_a_staff_folder_and_serves_its_scores(api, dataset, tiny_model):
    response = api.post("/api/submissions/", {"model": str(tiny_model), "display_name": "Tiny"}, format="json")
    assert response.status_code == 201, response.content
    run_id = response.json()["id"]
    seen: list[str] = []
    with running_worker(queues="preflight,gpu"):
        run = wait_for_run(run_id, is_over, seen=seen)
    assert run.status == Run.Status.DONE, f"{run.message}\n{run.log_tail}"
    assert seen[0] == "QUEUED" and seen[-1] == "DONE"
    assert set(run.stage_timestamps) >= {"QUEUED", "PREFLIGHT", "DOWNLOADING", "ENCODING", "SCORING", "DONE"}
    assert run.progress == 100 and run.finished_at >= run.started_at and run.attempts == 1
    assert run.lifecycle["attempts"][0]["outcome"] == "done"
    assert run.manifest["texts_total"] == run.manifest["texts_encoded"] > 0

    body = api.get(f"/api/submissions/{run_id}/").json()
    assert body["status"] == "DONE" and body["is_terminal"] is True
    assert len(body["scores"]) == run.scores.count() > 0
    translated = set(dataset.item_counts_by_language()) - {"eng"}
    assert {score["source"] for score in body["scores"] if score["task"] == "t1"} == translated
    assert all(0.0 <= score["value"] <= 1.0 for score in body["scores"] if score["metric"].startswith("recall"))

    again = api.post("/api/submissions/", {"model": str(tiny_model)}, format="json")
    assert again.status_code == 409 and again.json()["run"]["id"] == run_id
    assert Run.objects.count() == 1


def test_it_fails_a_folder_that_does_not_load_as_the_submitters_problem(api, dataset, tiny_model):
    break_weights(tiny_model)
    response = api.post("/api/submissions/", {"model": str(tiny_model)}, format="json")
    assert response.status_code == 201, response.content
    with running_worker(queues="preflight,gpu"):
        run = wait_for_run(response.json()["id"], is_over)
    assert run.status == Run.Status.FAILED
    assert run.failure_category == Run.FailureCategory.SUBMITTER
    assert run.message and "Traceback" not in run.message
    assert run.scores.count() == 0
    detail = api.get(f"/api/submissions/{run.pk}/").json()
    assert detail["failure_category_label"] == "Problem with the submitted model"


def test_it_evaluates_a_researchers_hub_model_at_the_commit_it_checked(dataset, tiny_model, fake_hub, tmp_path):
    repo = fake_hub.add("tiny-org/tiny-encoder", tiny_model)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=make_researcher()).key}")
    response = client.post("/api/submissions/", {"model": "tiny-org/tiny-encoder", "revision": "main"}, format="json")
    assert response.status_code == 201, response.content
    # The branch moves on after the submission; the run must still evaluate the commit it pinned.
    repo.branches["main"] = "f" * 40
    # The worker inherits the loopback Hub's address and the test's own Hub cache from this process.
    with running_worker(queues="preflight,gpu"):
        run = wait_for_run(response.json()["id"], is_over)
    assert run.status == Run.Status.DONE, f"{run.message}\n{run.log_tail}"
    assert run.revision == "main" and run.resolved_commit == repo.commit
    assert run.manifest["model"]["resolved_revision"] == repo.commit
    assert run.lifecycle["preflight"]["parameter_count"] == run.model.parameter_count > 0
    downloads = [request for request in fake_hub.requests if "/resolve/" in request]
    assert downloads and all(f"/resolve/{repo.commit}/" in request for request in downloads)
    assert (tmp_path / "hf-hub-cache" / "models--tiny-org--tiny-encoder").is_dir()
