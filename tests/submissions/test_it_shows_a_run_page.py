"""The run page and the small JSON document it polls: who may see what, and what it shows."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from evaluation.models import Run
from tests.factories import make_submitted_run
from tests.people import make_admin, make_outsider, make_researcher

pytestmark = pytest.mark.django_db


def page_url(run: Run) -> str:
    return reverse("evaluation:run_detail", args=[run.pk])


def status_url(run: Run) -> str:
    return reverse("evaluation:run_status", args=[run.pk])


def test_it_shows_the_submitter_their_run_live(client, dataset):
    researcher = make_researcher()
    run = make_submitted_run(
        dataset,
        researcher,
        status=Run.Status.ENCODING,
        progress=42.5,
        stage_detail="language 2 of 4 (hin): 10 of 40 texts",
        log_tail="12:00:01 Encoding: language 1 of 4\n12:00:02 Encoding: language 2 of 4",
        stage_timestamps={"QUEUED": "2026-01-01T00:00:00", "ENCODING": "2026-01-01T00:01:00"},
    )
    client.force_login(researcher)
    page = client.get(page_url(run)).content.decode()
    assert "language 2 of 4 (hin): 10 of 40 texts" in page
    assert 'value="42.5"' in page and "12:00:02 Encoding: language 2 of 4" in page
    assert f'data-status-url="{status_url(run)}"' in page
    assert "Cancel this run" in page and "Re-queue" not in page
    assert 'id="run-status-data"' in page and "evaluation/run_detail.js" in page
    data = client.get(status_url(run)).json()
    assert data["status"] == "ENCODING" and data["progress"] == 42.5 and not data["is_terminal"]
    assert data["log_tail"].endswith("language 2 of 4")


def test_it_hides_an_unfinished_run_from_other_people(client, dataset):
    run = make_submitted_run(dataset, make_researcher(), status=Run.Status.FAILED, message="Traceback in /srv/secret")
    assert client.get(page_url(run)).status_code == 404
    assert client.get(status_url(run)).status_code == 404
    client.force_login(make_outsider())
    assert client.get(page_url(run)).status_code == 404
    assert client.get(status_url(run)).status_code == 404
    client.force_login(make_admin())
    page = client.get(page_url(run)).content.decode()
    assert "Traceback in /srv/secret" in page and "Re-queue" in page


def test_it_shows_a_finished_run_to_everyone_with_a_link_to_its_results(client, dataset):
    run = make_submitted_run(
        dataset, make_researcher(), status=Run.Status.DONE, finished_at=timezone.now(), progress=100
    )
    page = client.get(page_url(run)).content.decode()
    assert f'<a href="{reverse("leaderboard:run_detail", args=[run.pk])}">see the results</a>' in page
    assert "Cancel this run" not in page
    assert client.get(status_url(run)).json()["is_terminal"] is True


def test_it_counts_the_queue_in_submission_order(client, dataset):
    researcher = make_researcher()
    runs = [make_submitted_run(dataset, researcher) for _ in range(3)]
    make_submitted_run(dataset, researcher, status=Run.Status.ENCODING)
    client.force_login(researcher)
    positions = [client.get(status_url(run)).json()["queue_position"] for run in runs]
    assert positions == [1, 2, 3]
    runs[0].cancel()
    assert client.get(status_url(runs[2])).json()["queue_position"] == 2
    assert "position 2 in the queue" in client.get(page_url(runs[2])).content.decode()


def test_it_shows_tokenizer_coverage_and_attempts(client, dataset):
    researcher = make_researcher()
    details = {
        "tokenizer_coverage": {
            "Deva": {"languages": ["hin", "mar"], "texts": 12, "tokens_per_word": 2.456, "unk_rate": 0.0123},
        },
    }
    # A worker's name as Celery gives it (name@host): the hyphen, the dot and the @ cannot occur by
    # chance in the page's random tokens (the CSRF token is letters and digits, and held "w1" once).
    worker = "celery@gpu-worker-1.internal"
    lifecycle = {"attempts": [{"number": 1, "worker": worker, "batch_size": 32, "outcome": "lost"}]}
    run = make_submitted_run(dataset, researcher, status=Run.Status.ENCODING, details=details, lifecycle=lifecycle)
    client.force_login(researcher)
    page = client.get(page_url(run)).content.decode()
    assert "<td>Deva</td><td>hin, mar</td><td>12</td><td>2.46</td><td>1.2%</td>" in page
    # The worker's name (a host) is for staff only.
    assert "<td>1</td><td>32</td><td>lost</td>" in page and "gpu-worker-1" not in page
    client.force_login(make_admin())
    assert f"<td>1</td><td>{worker}</td><td>32</td><td>lost</td>" in client.get(page_url(run)).content.decode()


def test_it_shows_the_time_since_the_start_and_an_estimate_from_the_stage_progress(client, dataset):
    researcher = make_researcher()
    now = timezone.now()
    # Encoding is 10 % to 85 % of the bar: at 40 % it is 40 % done, after 40 s, so about 60 s are left.
    run = make_submitted_run(
        dataset,
        researcher,
        status=Run.Status.ENCODING,
        progress=40.0,
        started_at=now - timedelta(seconds=100),
        stage_timestamps={"ENCODING": (now - timedelta(seconds=40)).isoformat()},
    )
    client.force_login(researcher)
    page = client.get(page_url(run)).content.decode()
    assert "since it started" in page and "about 1 min left in this stage" in page
    data = client.get(status_url(run)).json()
    assert 100 <= data["elapsed_seconds"] <= 160
    assert 55 <= data["stage_remaining_seconds"] <= 120


def test_it_gives_no_estimate_before_a_stage_has_some_progress(client, dataset):
    researcher = make_researcher()
    run = make_submitted_run(
        dataset,
        researcher,
        status=Run.Status.ENCODING,
        progress=10.5,
        started_at=timezone.now(),
        stage_timestamps={"ENCODING": timezone.now().isoformat()},
    )
    client.force_login(researcher)
    assert client.get(status_url(run)).json()["stage_remaining_seconds"] is None
    assert "left in this stage" not in client.get(page_url(run)).content.decode()
