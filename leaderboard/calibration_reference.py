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
