"""The interval of a re-run's average over some of its languages, from what the run stored.

The rule lives in leaderboard.intervals (pure); this module only asks the run's reader (Run.results,
evaluation/stored_results.py) for its stored averages, its kept replicates and, when it kept none for
the units asked, its per-query rank files.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evaluation.engine import bootstrap
from evaluation.engine.metrics import per_query_retrieval
from evaluation.models import Run
from evaluation.stored_results import read_gold_ranks
from leaderboard.intervals import (
    joint_interval_of_means,
    joint_samples_from_ranks,
    stored_joint_interval,
)

Unit = tuple[str, "str | None"]


def _aligned_ranks(run: Run, task: str, units: Sequence[Unit]) -> list[np.ndarray] | None:
    """The run's gold ranks of `task` on each of `units`, read from its rank files.

    None when a unit has no rank file, a file is missing from storage, or the units' queries are not
    in one item order (their per-query values could then not be averaged query by query)."""
    paths = {(entry.task, entry.source, entry.target): entry.path for entry in run.results.ranks}
    if not units or any((task, source, target) not in paths for source, target in units):
        return None
    loaded = [read_gold_ranks(paths[(task, source, target)]) for source, target in units]
    if any(found is None for found in loaded):
        return None
    order = loaded[0][0]  # type: ignore[index]
    if any(not np.array_equal(found[0], order) for found in loaded):  # type: ignore[index]
        return None
    return [found[1] for found in loaded]  # type: ignore[index]


def _samples(run: Run, task: str, metric: str, units: Sequence[Unit]) -> np.ndarray | None:
    """The resamples of the run's mean of `metric` over `units`: kept at evaluation time
    (evaluation/replicates.py), else recomputed from its rank files."""
    kept = run.results.replicates(task, metric, units)
    if kept is not None:
        return kept
    ranks = _aligned_ranks(run, task, units)
    if ranks is None:
        return None
    seed, resamples = bootstrap_settings(run)
    try:
        return joint_samples_from_ranks(ranks, metric, seed=seed, n_resamples=resamples)
    except KeyError:
        return None


def average_samples(run: Run, task: str, metric: str, units: Sequence[Unit]) -> np.ndarray | None:
    """The bootstrap replicates of the run's mean of `metric` over `units`, paired across re-runs (the
    same item draws in replicate r for every re-run on a version), for rank intervals of one column."""
    return _samples(run, task, metric, units)


def joint_average_interval(run: Run, task: str, metric: str, units: Sequence[Unit]) -> tuple[float, float] | None:
    """The joint bootstrap interval of `run`'s mean of `metric` over `units` ((source, target) of `task`).

    The engine's stored interval when the average spans all the run's units, else recomputed from
    its rank files; None when the run has neither (a published run, or not a retrieval metric)."""
    stored = stored_joint_interval(run.results.averages, task, metric, len(units))
    if stored is not None:
        return stored
    samples = _samples(run, task, metric, units)
    return None if samples is None else bootstrap.percentile_interval(samples)


def joint_overall_interval(run: Run, groups: Sequence[tuple[str, str, Sequence[Unit]]]) -> tuple[float, float] | None:
    """The joint interval of the mean of several averages ((task, metric, units) each): the overall
    score. The engine draws the same items for every task, so the resamples average across tasks."""
    samples = [_samples(run, task, metric, units) for task, metric, units in groups]
    if any(found is None for found in samples):
        return None
    return joint_interval_of_means(samples)  # type: ignore[arg-type]


def joint_overall_samples(run: Run, groups: Sequence[tuple[str, str, Sequence[Unit]]]) -> np.ndarray | None:
    """The bootstrap replicates of the overall score (the mean of several averages), for rank intervals.

    Every re-run on a benchmark version draws the same items in replicate r (same seed, same item
    order), so these replicates are paired across runs."""
    samples = [_samples(run, task, metric, units) for task, metric, units in groups]
    if not samples or any(found is None for found in samples):
        return None
    return np.mean(np.stack(samples), axis=0)  # type: ignore[arg-type]


def per_query_values(run: Run, task: str, metric: str, units: Sequence[Unit]) -> np.ndarray | None:
    """The run's per-query values of `metric` (units × queries, the engine's item order), from its rank files."""
    ranks = _aligned_ranks(run, task, units)
    if ranks is None:
        return None
    rows = [per_query_retrieval(found).get(metric) for found in ranks]
    if any(row is None for row in rows):
        return None
    return np.stack(rows)  # type: ignore[arg-type]


def bootstrap_settings(run: Run) -> tuple[int, int]:
    """(seed, resamples) of the run's bootstrap, as its manifest records them."""
    return run.results.bootstrap_settings


def pair_samples(run: Run, task: str, metric: str, source: str, target: str) -> np.ndarray | None:
    """The bootstrap replicates of the run's `metric` on one ordered pair, from its rank file.

    Paired across re-runs: the same seed draws the same items for every run."""
    return _samples(run, task, metric, [(source, target)])
