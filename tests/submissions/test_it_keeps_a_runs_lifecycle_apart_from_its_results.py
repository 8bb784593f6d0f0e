"""A run's submission, pre-flight facts and worker attempts live in Run.lifecycle, typed as RunLifecycle,
and keep the JSON shape they had under run.details (so the data migration only moves them)."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from evaluation.lifecycle import Attempt, RunLifecycle
from tests.factories import make_submitted_run

STORED = {
    "submission": {"commit": "c" * 40, "claims": {"display_name": "Alpha", "trained_on_nirdesha": True}},
    "preflight": {"passed": True, "commit": "c" * 40},
    "attempts": [
        {"number": 1, "worker": "w1", "batch_size": 32, "outcome": "lost", "last_progress": 40.0},
        {"number": 2, "worker": "w2", "started_at": "2026-01-01T00:00:00", "batch_size": None},
    ],
    "batch_size": 16,
    "preflight_tries": 1,
}


def test_it_reads_and_writes_the_stored_shape_unchanged():
    life = RunLifecycle.from_dict(STORED)
    assert life.to_dict() == STORED
    assert life.preflight_passed and life.claims == {"display_name": "Alpha", "trained_on_nirdesha": True}
    assert life.attempts[1] == Attempt(number=2, worker="w2", started_at="2026-01-01T00:00:00")
    assert RunLifecycle.from_dict(None) == RunLifecycle() and RunLifecycle().to_dict() == {}


def test_it_closes_only_the_attempts_that_never_ended():
    life = RunLifecycle.from_dict(STORED).with_open_attempts_closed("lost", "later", 55.0, "language 2 of 6")
    first, second = life.to_dict()["attempts"]
    assert first == STORED["attempts"][0]
    assert second["outcome"] == "lost" and second["ended_at"] == "later" and second["last_progress"] == 55.0


def test_a_requeue_forgets_the_checks_but_keeps_the_attempts():
    life = RunLifecycle.from_dict(STORED).without_preflight().with_preflight_try()
    assert not life.preflight_passed and "preflight" not in life.to_dict()
    assert life.to_dict()["attempts"] == STORED["attempts"] and life.preflight_tries == 2


@pytest.mark.django_db
def test_the_migration_moves_the_blocks_out_of_details_and_back(dataset):
    migration = importlib.import_module("evaluation.migrations.0012_run_lifecycle_moved_out_of_details")
    results = {"schema_version": 1, "averages": {}}
    run = make_submitted_run(dataset, details={**results, **STORED})
    migration.move_out_of_details(apps, None)
    run.refresh_from_db()
    assert run.details == results and run.lifecycle == STORED
    migration.move_back_into_details(apps, None)
    run.refresh_from_db()
    assert run.details == {**results, **STORED} and run.lifecycle == {}
