"""A re-run's average carries the engine's joint bootstrap interval, also over a subset of its languages."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from evaluation.models import Run, Score
from leaderboard.run_intervals import joint_average_interval
from tests.factories import FIVE, make_dataset, make_run
from tests.validation import create_validation_dataset

pytestmark = pytest.mark.django_db


def evaluate(dataset) -> Run:
    call_command("evaluate", "--model", "bm25", "--dataset", dataset.slug, "--tasks", "t1,t2", stdout=StringIO())
    return Run.objects.filter(dataset=dataset).get()


def test_it_uses_the_stored_interval_for_all_languages_and_recomputes_it_for_fewer():
    three = evaluate(create_validation_dataset(("Hindi", "Marathi", "Tamil"), version="three"))
    two = evaluate(create_validation_dataset(("Hindi", "Marathi"), version="two"))

    # All of a run's languages: exactly the engine's joint interval.
    for task, units in (
        ("t1", [("hin", None), ("mar", None), ("tam", None)]),
        ("t2", [(a, b) for a in ("hin", "mar", "tam") for b in ("hin", "mar", "tam") if a != b]),
    ):
        stored = three.details["averages"][task]["recall@1"]
        assert joint_average_interval(three, task, "recall@1", units) == (stored["ci_low"], stored["ci_high"])

    # Hindi and Marathi only: recomputed from the three-language run's rank files, it equals what the
    # engine stored for a run on just those two languages (same items, same seed, same resamples).
    for task, units in (("t1", [("hin", None), ("mar", None)]), ("t2", [("hin", "mar"), ("mar", "hin")])):
        for metric in ("recall@1", "mrr@10"):
            expected = two.details["averages"][task][metric]
            got = joint_average_interval(three, task, metric, units)
            assert got == pytest.approx((expected["ci_low"], expected["ci_high"]), abs=1e-12), (task, metric)
            # Narrower than the mean of the per-language bounds.
            scores = Score.objects.filter(run=three, task=task, metric=metric, source__in=["hin", "mar"])
            scores = scores.filter(target__in=["hin", "mar"]) if task == "t2" else scores
            bounds_width = sum(s.ci_high - s.ci_low for s in scores) / scores.count()
            assert got[1] - got[0] < bounds_width


def test_it_shows_the_engines_joint_interval_on_the_overview(client):
    dataset = create_validation_dataset(("Hindi", "Marathi", "Tamil"), version="overview")
    call_command("evaluate", "--model", "bm25", "--dataset", dataset.slug, "--tasks", "t1,t2,t3,t3x", stdout=StringIO())
    run = Run.objects.get(dataset=dataset)
    body = json.loads(client.get(reverse("leaderboard:overview"), {"dataset": dataset.pk, "format": "json"}).content)
    [row] = body["tables"]["overview"]
    for column in ("t1", "t2", "t3", "t3x"):
        stored = run.details["averages"][column]["recall@1"]
        assert row[f"{column}_recall@1"] == pytest.approx(stored["value"])
        interval = (row[f"{column}_recall@1_ci_low"], row[f"{column}_recall@1_ci_high"])
        assert interval == (stored["ci_low"], stored["ci_high"]), column
    # The overall score's interval is the joint one too: narrower than the mean of the columns' bounds.
    mean_width = sum(row[f"{c}_recall@1_ci_high"] - row[f"{c}_recall@1_ci_low"] for c in ("t1", "t2", "t3", "t3x")) / 4
    assert row["overall_ci_low"] < row["overall"] < row["overall_ci_high"]
    assert row["overall_ci_high"] - row["overall_ci_low"] < mean_width
    # Hindi and Marathi only: recomputed from the rank files, not the mean of per-language bounds.
    two = json.loads(
        client.get(
            reverse("leaderboard:overview"), {"dataset": dataset.pk, "languages": ["hin", "mar"], "format": "json"}
        ).content
    )["tables"]["overview"][0]
    expected = joint_average_interval(run, "t1", "recall@1", [("hin", None), ("mar", None)])
    assert (two["t1_recall@1_ci_low"], two["t1_recall@1_ci_high"]) == expected


def test_a_t4_average_shows_the_engines_joint_interval_not_the_mean_of_its_languages_bounds(client):
    dataset = make_dataset()
    # The engine's joint interval of the T4 AUROC average over all five languages (narrower than the
    # ±2 points every language's own interval has here).
    joint = {"value": 0.8, "ci_low": 0.79, "ci_high": 0.805, "n": len(FIVE)}
    run = make_run(dataset, "org/alpha", level=0.3, details={"averages": {"t4": {"auroc": joint}}})
    body = json.loads(client.get(reverse("leaderboard:overview"), {"dataset": dataset.pk, "format": "json"}).content)
    [row] = [row for row in body["tables"]["overview"] if row["run_id"] == run.pk]
    assert (row["t4_auroc_ci_low"], row["t4_auroc_ci_high"]) == (0.79, 0.805)
    # Over a subset of its languages the engine kept no joint interval: the mean of the bounds, said so.
    body = json.loads(client.get("/api/leaderboard/", {"dataset": dataset.pk, "languages": ["hin", "mar"]}).content)
    [row] = [row for row in body["rows"] if row["run_id"] == run.pk]
    assert row["t4_auroc_ci_low"] == pytest.approx(0.78) and "not joint" in body["intervals"]
