"""A re-run keeps its bootstrap replicates when it is evaluated, so pages never re-bootstrap its rank files."""

from __future__ import annotations

from io import StringIO

import numpy as np
import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command

from evaluation.models import Run
from evaluation.replicates import read_samples, replicates_path
from leaderboard.intervals import joint_samples_from_ranks
from leaderboard.run_intervals import joint_average_interval
from tests.validation import create_validation_dataset

pytestmark = pytest.mark.django_db


def ranks_of(run: Run, task: str, units) -> list[np.ndarray]:
    paths = {(entry["task"], entry["source"], entry["target"]): entry["path"] for entry in run.details["ranks"]}
    found = []
    for source, target in units:
        with default_storage.open(paths[(task, source, target)]) as handle:
            found.append(np.load(handle)["ranks"])
    return found


def test_the_kept_replicates_equal_a_bootstrap_of_the_rank_files():
    dataset = create_validation_dataset(("Hindi", "Marathi", "Tamil"), version="replicates")
    call_command("evaluate", "--model", "bm25", "--dataset", dataset.slug, "--tasks", "t1,t2", stdout=StringIO())
    run = Run.objects.get(dataset=dataset)
    assert default_storage.exists(replicates_path(run.pk))
    seed = int(run.manifest.get("seed", 0))
    three = [("hin", None), ("mar", None), ("tam", None)]
    pairs = [("hin", "mar"), ("mar", "hin")]
    paths = [entry["path"] for entry in run.details["ranks"]]
    # Replicates are only read for the rank files they were computed from.
    assert read_samples(run.pk, paths[1:], "t1", "recall@1", three) is None
    for task, units, metric in (("t1", three, "recall@1"), ("t1", three, "mrr@10"), ("t2", pairs, "recall@1")):
        kept = read_samples(run.pk, paths, task, metric, units)
        expected = joint_samples_from_ranks(ranks_of(run, task, units), metric, seed=seed)
        assert kept is not None and kept == pytest.approx(expected, abs=1e-12), (task, metric)
    # The average over all of a run's units matches the engine's stored interval to the last bits.
    stored = run.details["averages"]["t1"]["recall@1"]
    kept = read_samples(run.pk, paths, "t1", "recall@1", three)
    assert np.percentile(kept, [2.5, 97.5]).tolist() == pytest.approx([stored["ci_low"], stored["ci_high"]], abs=1e-15)

    # With the rank files gone, the intervals over a subset still come, from the kept replicates.
    expected_interval = joint_average_interval(run, "t1", "recall@1", three[:2])
    for entry in run.details["ranks"]:
        default_storage.delete(entry["path"])
    assert joint_average_interval(run, "t1", "recall@1", three[:2]) == expected_interval
