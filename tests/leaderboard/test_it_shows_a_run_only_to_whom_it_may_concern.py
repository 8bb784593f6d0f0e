"""One visibility rule for runs and their files: finished runs are public; the rest belong to their
submitter and to staff, and answer 404 to everyone else on every page and in the API."""

from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import reverse

from evaluation.models import Run
from tests.factories import make_dataset, make_run
from tests.people import make_admin, make_outsider, make_researcher

pytestmark = pytest.mark.django_db


@pytest.fixture
def private_run():
    buffer = io.BytesIO()
    np.savez_compressed(buffer, ranks=np.arange(4))
    path = default_storage.save("runs/test/ranks-t1-hin.npz", ContentFile(buffer.getvalue()))
    run = make_run(
        make_dataset(), "org/secret", details={"ranks": [{"task": "t1", "source": "hin", "target": None, "path": path}]}
    )
    researcher = make_researcher()
    Run.objects.filter(pk=run.pk).update(
        status=Run.Status.FAILED,
        submitted_by=researcher,
        log_tail="Pre-flight checks started on gpu-box-7 pid 4242 #abcdef12\nLoading /srv/models/secret/model.bin",
    )
    return Run.objects.get(pk=run.pk)


def urls(run: Run) -> list[str]:
    return [
        reverse("leaderboard:run_detail", args=[run.pk]),
        reverse("leaderboard:run_artefact", args=[run.pk, "ranks-t1-hin"]),
        reverse("evaluation:run_detail", args=[run.pk]),
        reverse("evaluation:run_status", args=[run.pk]),
        f"/api/runs/{run.pk}/",
        f"/api/submissions/{run.pk}/",
    ]


def test_it_answers_404_for_a_private_run_to_anonymous_visitors_and_outsiders(client, private_run):
    # Anonymous: 404, or 401 where the API asks for credentials first.
    for url in urls(private_run):
        assert client.get(url).status_code in (401, 404), url
    client.force_login(make_outsider())
    assert [client.get(url).status_code for url in urls(private_run)] == [404] * 6


def test_it_shows_a_private_run_to_its_submitter_and_to_staff(client, private_run):
    client.force_login(private_run.submitted_by)
    assert client.get(reverse("leaderboard:run_detail", args=[private_run.pk])).status_code == 200
    assert client.get(reverse("leaderboard:run_artefact", args=[private_run.pk, "ranks-t1-hin"])).status_code == 200
    assert client.get(reverse("evaluation:run_detail", args=[private_run.pk])).status_code == 200
    client.force_login(make_admin())
    assert client.get(reverse("leaderboard:run_detail", args=[private_run.pk])).status_code == 200


def test_it_shows_finished_runs_to_everyone(client):
    run = make_run(make_dataset(), "org/public")
    assert client.get(reverse("leaderboard:run_detail", args=[run.pk])).status_code == 200
    assert client.get(reverse("evaluation:run_detail", args=[run.pk])).status_code == 200
    assert client.get(f"/api/runs/{run.pk}/").status_code == 200


def test_it_shows_the_submitter_e_mail_to_staff_only(client, private_run):
    Run.objects.filter(pk=private_run.pk).update(status=Run.Status.DONE)
    url = reverse("evaluation:run_detail", args=[private_run.pk])
    email = private_run.submitted_by.email
    page = client.get(url).content.decode()
    # Not even the e-mail's local part (the username sign-up makes): "user N" unless they chose a name.
    assert email.split("@")[0] not in page and f"<dd>user {private_run.submitted_by.pk}</dd>" in page
    client.force_login(make_outsider())
    assert email not in client.get(url).content.decode()
    client.force_login(make_admin())
    assert email in client.get(url).content.decode()


def test_it_keeps_worker_hosts_pids_and_paths_out_of_logs_for_anyone_but_staff(client, private_run):
    client.force_login(private_run.submitted_by)
    page = client.get(reverse("evaluation:run_detail", args=[private_run.pk])).content.decode()
    status = client.get(reverse("evaluation:run_status", args=[private_run.pk])).json()
    for shown in (page, status["log_tail"]):
        assert "gpu-box-7" not in shown and "4242" not in shown and "/srv/models" not in shown
        assert "Pre-flight checks started on a worker" in shown and "…/model.bin" in shown
    client.force_login(make_admin())
    staff_status = client.get(reverse("evaluation:run_status", args=[private_run.pk])).json()
    assert "gpu-box-7 pid 4242" in staff_status["log_tail"] and "/srv/models/secret" in staff_status["log_tail"]
