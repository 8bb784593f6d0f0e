"""Intervals for figures that carry none of their own. Pure Python, no Django.

A published figure's interval (the Wilson score interval of a proportion) is evaluation's, written by
the importer (evaluation/published_intervals.py); this module holds the intervals of averages of
re-runs, computed from the engine's joint bootstrap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from evaluation.engine import bootstrap
from evaluation.engine.metrics import per_query_retrieval
from evaluation.engine.results import Interval

# --- averages of re-runs: the engine's joint bootstrap ---------------------------------------------------
#
# The engine resamples the shared items once per run (same seed, same draws for every language and
# pair), so the interval of an average over languages is the percentile interval of the averaged
# resamples, not the mean of the per-language bounds (which is 2–3 times wider). It stores that
# interval for the average over all of a run's languages; an average over fewer (a language
# selection, a model's declared languages) is recomputed from the run's stored per-query ranks with
# the same seed and resample count, which gives exactly what the engine would have stored for them.

JOINT_LABEL = "joint bootstrap over the shared items (the engine's resamples)"
BOUNDS_LABEL = "mean of the per-language bounds (an upper bound on the width)"


def stored_joint_interval(
    averages: Mapping[str, Mapping[str, Interval]], task: str, metric: str, averaged_units: int
) -> tuple[float, float] | None:
    """The engine's interval for a run's average when that average spans all the run's units.

    `averages` are the run's typed details' (evaluation.engine.results.Details.averages). The
    averaged units are always a subset of the run's, so equal counts mean the same set."""
    entry = averages.get(task, {}).get(metric)
    if entry is None or entry.n != averaged_units or entry.ci_low is None or entry.ci_high is None:
        return None
    return float(entry.ci_low), float(entry.ci_high)


def joint_samples_from_ranks(
    ranks: Sequence[np.ndarray], metric: str, *, seed: int, n_resamples: int = bootstrap.DEFAULT_RESAMPLES
) -> np.ndarray | None:
    """The bootstrap resamples of the mean of `metric` over units given by their per-query ranks.

    Every unit must list its queries in the same item order (the engine's), so that one resample
    draws the same items in every language."""
    if not ranks or len({len(unit) for unit in ranks}) != 1:
        return None
    rows = np.stack([per_query_retrieval(unit)[metric] for unit in ranks])
    return bootstrap.bootstrap_means(rows, n_resamples, seed).mean(axis=0)


def joint_interval_from_ranks(
    ranks: Sequence[np.ndarray], metric: str, *, seed: int, n_resamples: int = bootstrap.DEFAULT_RESAMPLES
) -> tuple[float, float] | None:
    """The joint bootstrap interval of the mean of `metric` over units given by their per-query ranks."""
    samples = joint_samples_from_ranks(ranks, metric, seed=seed, n_resamples=n_resamples)
    return None if samples is None else bootstrap.percentile_interval(samples)


def joint_interval_of_means(samples: Sequence[np.ndarray]) -> tuple[float, float] | None:
    """The joint interval of a mean of averages (the overall score) from each average's resamples."""
    if not samples:
        return None
    return bootstrap.percentile_interval(np.mean(np.stack(samples), axis=0))
