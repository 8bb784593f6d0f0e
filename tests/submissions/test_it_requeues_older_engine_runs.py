"""Runs of an older engine version: marked everywhere, never ranked against the current engine, re-queued by staff."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from evaluation.engine import ENGINE_VERSION
from evaluation.models import Run
from tests.factories import make_dataset, make_run
from tests.people import make_admin, make_researcher
from tests.submissions.data import drain_queue

pytestmark = pytest.mark.django_db

OLDER = "0.9.0"


@pytest.fixture
def board():
    """One current-engine run and one older-engine run of another model on the same benchmark version."""
    assert OLDER != ENGINE_VERSION
    dataset = make_dataset()
    current = make_run(dataset, "org/current-model", level=0.30)
    current.engine_version = ENGINE_VERSION
    current.save(update_fields=["engine_version"])
    old = make_run(dataset, "org/old-model", level=0.35)
    old.engine_version = OLDER
    old.save(update_fields=["engine_version"])
    return dataset, current, old


def test_it_marks_the_older_run_and_ranks_it_against_nobody(client, board):
    _, current, old = board
    rows = {row["run_id"]: row for row in json.loads(client.get("/api/leaderboard/").content)["rows"]}
    assert rows[old.pk]["older_engine"] is True and rows[old.pk]["engine_version"] == OLDER
    assert rows[old.pk]["rank_best"] is None and rows[old.pk]["rank_worst"] is None
    assert rows[old.pk]["ranked_over"] == ""
    # The current run is ranked alone, although the older run scores higher.
    assert rows[current.pk]["older_engine"] is False
    assert (rows[current.pk]["rank_best"], rows[current.pk]["rank_worst"]) == (1, 1)
    page = client.get(reverse("leaderboard:overview")).content.decode()
    assert f"older engine {OLDER}" in page
    assert "Scored by an older engine version" in page
    # "Common languages only" ranks every shown current-engine model, never the older one.
    common = {row["run_id"]: row for row in json.loads(client.get("/api/leaderboard/?common=on").content)["rows"]}
    assert common[old.pk]["rank_best"] is None and common[current.pk]["rank_best"] == 1


def test_it_marks_the_older_run_on_its_task_page(client, board):
    _, _, old = board
    page = client.get(reverse("leaderboard:task", args=["t1"])).content.decode()
    assert f"older engine {OLDER}" in page
    assert old.is_older_engine and Run.objects.older_engine().get() == old
    export = json.loads(client.get(reverse("leaderboard:task", args=["t1"]), {"format": "json"}).content)
    rows = export["tables"]["t1"]
    assert {(row["block"], row["older_engine"]) for row in rows if row["run_id"] == old.pk} == {("older_engine", True)}
    assert {row["older_engine"] for row in rows if row["run_id"] != old.pk} == {False}
    # The run page and the runs API say so too.
    assert f"older engine {OLDER}" in client.get(reverse("leaderboard:run_detail", args=[old.pk])).content.decode()
    assert json.loads(client.get(f"/api/runs/{old.pk}/").content)["older_engine"] is True


def test_staff_requeue_brings_it_to_the_current_engine_through_the_submission_path(
    board, django_capture_on_commit_callbacks
):
    _, current, old = board
    make_admin()
    drain_queue("preflight")
    with django_capture_on_commit_callbacks(execute=True):
        call_command("requeue_older_engine", "--by", "alice.admin")
    new = Run.objects.exclude(pk__in=[current.pk, old.pk]).get()
    assert new.status == Run.Status.QUEUED and new.engine_version == ENGINE_VERSION
    assert (new.model, new.resolved_commit, new.dataset) == (old.model, old.resolved_commit, old.dataset)
    assert new.life.requeued_from == {"run": old.pk, "engine_version": OLDER}
    assert "requeued_from" not in new.details  # the engine's results are the only writer of details
    # The outbox sent its pre-flight task once the transaction committed.
    assert drain_queue("preflight") == [("evaluation.preflight_run", [new.pk])]
    new.refresh_from_db()
    assert new.enqueue_pending_since is None
    # The duplicate rule holds: a second re-queue of the same commit is refused and writes nothing.
    call_command("requeue_older_engine", "--by", "alice.admin", "--model", "org/old-model")
    assert Run.objects.count() == 3


def test_the_command_refuses_people_who_are_not_staff(board):
    make_researcher()
    with pytest.raises(CommandError, match="not a staff account"):
        call_command("requeue_older_engine", "--by", "rahul.researcher")
    assert Run.objects.count() == 2


def test_staff_requeue_one_model_from_the_admin(client, board):
    _, current, old = board
    client.force_login(make_admin())
    response = client.post(
        reverse("admin:evaluation_run_changelist"),
        {"action": "requeue_on_current_engine", "_selected_action": [old.pk, current.pk]},
        follow=True,
    )
    body = response.content.decode()
    new = Run.objects.exclude(pk__in=[current.pk, old.pk]).get()
    assert f"Queued on the current engine: runs {new.pk}." in body
    assert f"Skipped run {current.pk}: Run {current.pk} is not a finished re-run of an older engine" in body
    assert new.engine_version == ENGINE_VERSION and new.model == old.model
