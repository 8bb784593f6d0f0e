"""What a perfectly calibrated classifier would score on the same test set. Pure computation, no Django.

The binned ECE is biased upward on small test sets: even a classifier whose predicted probabilities
are exactly right scores above 0, because each bin's share of positives is a noisy count. Its ECE
therefore needs a reference, and the right one is specific to the test set and to the model: a
classifier with the model's own predicted probabilities whose labels are drawn from them (each test
pair positive with its predicted probability), binned the same way. The engine keeps, per bin, the
number of test pairs and their mean predicted probability; each simulated bin's positives are a
binomial draw of that many pairs at that probability (the spread of probabilities within a bin is
ignored, which the fifteen narrow bins make small). The band is the middle 95% of the simulated ECEs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DRAWS = 4000
SEED = 0
CONFIDENCE = 0.95
METHOD = (
    "a perfectly calibrated classifier with this model's predicted probabilities on the same test pairs: "
    f"labels drawn from those probabilities ({DRAWS} simulations), binned as the engine bins; the middle 95%"
)


@dataclass(frozen=True)
class CalibratedReference:
    pairs: int
    ece: float | None  # the model's own binned ECE, from the same bins
    low: float
    median: float
    high: float

    @property
    def within(self) -> bool:
        """Whether the model's ECE is what a perfectly calibrated classifier could score here."""
        return self.ece is not None and self.ece <= self.high


def binned_ece(bins: Sequence[tuple[int, float, float]]) -> float | None:
    """ECE = Σ_b (n_b / N) · |mean_y_b − mean_p_b| from (count, mean_p, mean_y) per non-empty bin."""
    total = sum(count for count, _, _ in bins)
    if not total:
        return None
    return sum(count * abs(mean_y - mean_p) for count, mean_p, mean_y in bins) / total


def calibrated_reference(
    bins: Sequence[tuple[int, float, float]], *, draws: int = DRAWS, seed: int = SEED
) -> CalibratedReference | None:
    """The band of ECE a perfectly calibrated classifier scores on these bins (count, mean_p, mean_y)."""
    kept = [(count, mean_p, mean_y) for count, mean_p, mean_y in bins if count > 0]
    if not kept:
        return None
    counts = np.array([count for count, _, _ in kept], dtype=np.int64)
    probabilities = np.clip(np.array([mean_p for _, mean_p, _ in kept], dtype=np.float64), 0.0, 1.0)
    rng = np.random.default_rng(seed)
    positives = rng.binomial(counts, probabilities, size=(draws, len(kept)))
    simulated = np.abs(positives - counts * probabilities).sum(axis=1) / counts.sum()
    tail = (1 - CONFIDENCE) / 2
    low, median, high = np.quantile(simulated, [tail, 0.5, 1 - tail])
    return CalibratedReference(int(counts.sum()), binned_ece(kept), float(low), float(median), float(high))


# --- a debiased ECE with an interval that contains it ------------------------------------------------------
#
# The engine reports the plain binned ECE with the plain percentile interval of its resamples (it keeps
# the figure it measured, and the replicates are not kept for T4). The binned ECE is biased upward and its
# resamples more so, so that interval can lie wholly above its estimate (BM25's average 7.6 [8.9, 14.4]).
# Shifting the percentile interval by a bias estimate does not help: it contains the shifted estimate
# exactly when the plain one does. What does is the basic (pivot) bootstrap interval of the same
# resamples, [2θ̂ − upper, 2θ̂ − lower], reported with the bootstrap's bias-corrected estimate
# 2θ̂ − centre, where the centre of the resampled 95% range stands for the resamples' mean (which is not
# kept): the estimate is the interval's midpoint, so it always lies inside. Both are clipped at 0, the
# least an ECE can be, which keeps the estimate inside (clipping is monotone). On 150 test items the
# bias estimate is itself noisy, which is why the plain figure stays the engine's and this one is shown
# beside it, named for what it is.

DEBIASED_METHOD = (
    "debiased ECE: 2 × ECE − the centre of its resampled 95% range (the bootstrap's estimate of the binned "
    "ECE's upward bias, subtracted), with the basic bootstrap interval [2 × ECE − upper, 2 × ECE − lower] "
    "from the same resamples as the ECE's percentile interval; both clipped at 0"
)


@dataclass(frozen=True)
class DebiasedEce:
    value: float
    ci_low: float
    ci_high: float


def debiased_ece(estimate: float | None, low: float | None, high: float | None) -> DebiasedEce | None:
    """The bias-corrected ECE and its basic bootstrap interval, from the ECE and its percentile interval."""
    if estimate is None or low is None or high is None:
        return None
    centre = (low + high) / 2
    return DebiasedEce(max(0.0, 2 * estimate - centre), max(0.0, 2 * estimate - high), max(0.0, 2 * estimate - low))
