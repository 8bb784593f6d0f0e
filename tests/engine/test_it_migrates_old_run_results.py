"""Data migration evaluation/0006: run details and manifests written before schema 1 become schema 1."""

import importlib

import pytest
from django.apps import apps

from evaluation.engine.results import Details
from leaderboard.pages.tasks import reliability_curves
from tests.factories import make_dataset, make_run

migration = importlib.import_module("evaluation.migrations.0005_run_results_schema_1")
BINS = [{"count": 3, "mean_p": 0.2, "mean_y": 0.1}]
FULL_BINS = [{"lower": 0.0, "upper": 1.0, "count": 3, "mean_p": 0.2, "mean_y": 0.1}]


def test_it_rewrites_every_old_spelling_of_the_reliability_bins_into_the_one_the_reader_reads():
    columns = {"count": [3], "mean_p": [0.2], "mean_y": [0.1]}
    renamed = [{"n": 3, "confidence": 0.2, "accuracy": 0.1}]
    old = {"averages": {}, "t4": {"reliability": {"hin": {"before": BINS, "after": columns, "calibrator": "hist"}}}}
    upgraded = migration.upgrade_details(old)
    assert upgraded["schema_version"] == 1
    assert Details.from_dict(upgraded).tasks["t4"].reliability["hin"].calibrator == "hist"
    assert reliability_curves(Details.from_dict(upgraded), "t4") == {"hin": {"before": BINS, "after": BINS}}

    top_level = migration.upgrade_details(
        {"averages": {}, "t4": {"reliability": {"base": renamed, "calibrated": BINS}}}
    )
    assert reliability_curves(Details.from_dict(top_level), "t4") == {"all": {"before": BINS, "after": BINS}}
    assert top_level["t4"]["reliability"]["all"]["before"] == FULL_BINS


def test_it_leaves_rows_without_engine_results_and_current_rows_as_they_are():
    for details in ({}, {"published": True, "skipped_files": []}, {"attempts": [], "preflight": {"passed": True}}):
        assert migration.upgrade_details(details) == details
    current = {"schema_version": 1, "averages": {}, "ranks": []}
    assert migration.upgrade_details(current) == current
    published = {"origin": "published", "dataset": {"name": "n"}}
    assert migration.upgrade_manifest(published) == published
    assert migration.upgrade_manifest({"engine_version": "1.0.0"}) == {"engine_version": "1.0.0", "schema_version": 1}


@pytest.mark.django_db
def test_it_migrates_the_stored_runs():
    dataset = make_dataset()
    run = make_run(dataset, "org/old")
    old_details = {"attempts": [{"number": 1}], "averages": {}, "t4": {"reliability": {"base": BINS}}}
    type(run).objects.filter(pk=run.pk).update(details=old_details, manifest={"engine_version": "1.0.0"})

    migration.forwards(apps, None)

    run.refresh_from_db()
    assert run.details["schema_version"] == 1 and run.details["attempts"] == [{"number": 1}]
    assert run.manifest == {"engine_version": "1.0.0", "schema_version": 1}
    assert reliability_curves(Details.from_dict(run.details), "t4") == {"all": {"before": BINS}}
