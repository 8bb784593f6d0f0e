"""One public view of a run's records: no worker hosts, process ids or server paths, in the API or the pages.

Staff keep the full records on the run's evaluation page and in the submissions API.
"""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client

from evaluation.public import public_details, public_manifest, public_model_name
from tests.world import PLANTED_HOST, PLANTED_PID, PLANTED_SERVER_DIR, build_world

pytestmark = pytest.mark.django_db


def test_it_names_a_local_folder_by_its_folder_name_only():
    assert public_model_name("/srv/models/e5-local/", True) == "local folder e5-local"
    assert public_model_name("intfloat/multilingual-e5-small", False) == "intfloat/multilingual-e5-small"


def test_it_keeps_attempts_and_paths_out_of_the_public_details():
    details = {
        "averages": {},
        "attempts": [{"worker": "gpu7 pid 4242 #deadbeef"}],
        "ranks": [{"task": "t1", "source": "hin", "target": None, "path": "/srv/x/ranks.npz"}],
        "skipped_tasks": {"t5": "failed at /srv/app/engine.py"},
        "multi": {"english_task": "t1", "english_t1": {}, "english_ranks": "runs/7/ranks-t1-eng.npz"},
    }
    public = public_details(details)
    assert "attempts" not in public and public["ranks"] == [{"task": "t1", "source": "hin", "target": None}]
    assert public["multi"] == {"english_task": "t1", "english_t1": {}}
    assert "/srv/app" not in str(public)
    manifest = public_manifest({"model": {"name": "/srv/m/e5"}}, model_name="/srv/m/e5", is_local=True)
    assert manifest == {"model": {"name": "local folder e5"}}


def test_it_shows_no_host_pid_or_server_path_in_the_run_api_pages_or_exports():
    world = build_world(with_campaign=False)
    run = world.local_run
    client = Client()
    detail = client.get(f"/api/runs/{run.pk}/").json()
    assert "attempts" not in detail["details"] and detail["model"]["name"] == "local folder e5-planted"
    texts = {
        "api run": str(detail),
        "api runs": client.get("/api/runs/").content.decode(),
        "api models": client.get("/api/models/").content.decode(),
        "api scores": client.get(f"/api/scores/?run={run.pk}").content.decode(),
        "run page": client.get(f"/results/{run.pk}/").content.decode(),
        "run csv": client.get(f"/results/{run.pk}/?format=csv").content.decode(),
        "overview csv": client.get("/?format=csv").content.decode(),
        "dataset page": client.get(f"/datasets/{world.dataset.pk}/").content.decode(),
        "evaluation page": client.get(f"/evaluation/runs/{run.pk}/").content.decode(),
        "status": client.get(f"/evaluation/runs/{run.pk}/status/").content.decode(),
    }
    for where, text in texts.items():
        assert PLANTED_HOST not in text and PLANTED_PID not in text and PLANTED_SERVER_DIR not in text, where
    rows = list(csv.reader(io.StringIO(texts["overview csv"])))
    assert any("local folder e5-planted" in row for row in rows)


def test_it_keeps_the_full_records_for_staff_on_the_evaluation_page():
    world = build_world(with_campaign=False)
    client = Client()
    client.force_login(world.staff)
    page = client.get(f"/evaluation/runs/{world.local_run.pk}/").content.decode()
    assert world.local_run.model.name in page and PLANTED_HOST in page
