"""Rank intervals from bootstrap replicates. Pure Python, no Django.

A single rank suggests more certainty than a benchmark has, so each model gets the 95% interval of its
rank: in every bootstrap replicate all models are ranked, and a model's interval is the spread of its
rank over the replicates (leaderboard.significance.rank_intervals_from_replicates). This is a test of
the differences, unlike the overlap of two intervals (which can hide a clearly significant paired
difference).

- A re-run brings its own replicates of the score (the engine's resamples of the shared items, the
  same draws for every re-run on a benchmark version), so re-runs are compared paired.
- A published score has no per-query data: it enters each replicate as an independent normal draw
  whose 95% interval is its own (Wilson-based) interval, and a rank over such rows says it is unpaired.
- A score without any interval is a point: the same in every replicate. With only points, the ranks
  are ordinary ranks by value, where only exact ties share a band ("2–3").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from evaluation.engine import bootstrap
from leaderboard.significance import CONFIDENCE, rank_intervals_from_replicates

# The seed of the independent draws given to scores that carry no replicates (published rows).
UNPAIRED_SEED = 20
Z95 = 1.959963984540054
PAIRED = "paired: every model's rank in each bootstrap replicate over the same item draws"
MIXED = "partly paired: re-runs over the same item draws, published scores as independent draws from their intervals"
UNPAIRED = "unpaired: each score an independent draw from its interval in every replicate"


@dataclass(frozen=True)
class Estimate:
    value: float
    ci_low: float | None = None
    ci_high: float | None = None
    # The score's bootstrap replicates (a re-run's resampled average), when it has them.
    samples: np.ndarray | None = field(default=None, compare=False, repr=False)

    def replicates(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """This score in `count` replicates: its own, or independent draws from its interval, or the point."""
        if self.samples is not None and len(self.samples) == count:
            return np.asarray(self.samples, dtype=np.float64)
        if self.ci_low is None or self.ci_high is None or self.ci_high <= self.ci_low:
            return np.full(count, self.value, dtype=np.float64)
        spread = (self.ci_high - self.ci_low) / (2 * Z95)
        return rng.normal(self.value, spread, size=count)


def replicate_count(estimates: Sequence[Estimate]) -> int:
    counts = {len(estimate.samples) for estimate in estimates if estimate.samples is not None}
    return max(counts) if counts else bootstrap.DEFAULT_RESAMPLES


PER_MODEL = "per model: each interval covers that model's rank with 95% probability on its own"
SIMULTANEOUS = (
    "simultaneous: all intervals together cover every model's rank with at least 95% probability "
    "(Bonferroni over the ranked models, each at 1 − 0.05/m)"
)


def rank_intervals(
    estimates: Sequence[Estimate], *, higher_is_better: bool = True, simultaneous: bool = False
) -> list[tuple[int, int]]:
    """The (best, worst) ends of every estimate's 95% rank interval, in input order.

    Per model by default; `simultaneous` widens each to 1 − 0.05/m (Bonferroni over the m models), so
    that the whole set of intervals holds at once, as a reader comparing several rows assumes."""
    if not estimates:
        return []
    count = replicate_count(estimates)
    rng = np.random.default_rng(UNPAIRED_SEED)
    matrix = np.vstack([estimate.replicates(count, rng) for estimate in estimates])
    confidence = 1 - (1 - CONFIDENCE) / len(estimates) if simultaneous else CONFIDENCE
    return rank_intervals_from_replicates(matrix, higher_is_better=higher_is_better, confidence=confidence)


def pairing(estimates: Sequence[Estimate]) -> str:
    """Whether the rank intervals of these estimates are paired, unpaired or partly paired (for the pages)."""
    with_samples = sum(1 for estimate in estimates if estimate.samples is not None)
    if with_samples == len(estimates):
        return PAIRED
    return MIXED if with_samples else UNPAIRED


def rank_label(interval: tuple[int, int] | None) -> str:
    if interval is None:
        return "—"
    best, worst = interval
    return str(best) if best == worst else f"{best}–{worst}"
