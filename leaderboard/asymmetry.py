"""Whether a language pair's asymmetry (A→B minus B→A) is more than noise. Pure computation, no Django.

The asymmetry heatmap used to colour every cell better or worse, yet a difference of a point or two
between two directions measured on a few hundred items is often within noise. Each unordered pair is
tested once (the matrix is antisymmetric, so the cell B→A is the same test with the sign turned):

- Re-runs keep their per-query results (rank files), and the items are paired across directions: the
  same item id is the same sentence pair in every language, so A→B and B→A are scored on the same
  items. Their difference is the paired comparison the compare page makes of two models
  (leaderboard.significance.paired_items): the paired bootstrap over whole items (the engine's seeded
  item draws) for the interval, the item-level sign-flip test (or exact McNemar for one binary cell
  per item) for the p-value, a figure that claims a difference withheld where the two disagree.
- Published results carry no per-query data, so the two directions enter as two independent
  proportions over the published pool (Newcombe's interval, leaderboard.significance.unpaired_proportions).
  The directions are scored on the same items and positively correlated, so this errs wide: some real
  asymmetries are called noise, none the other way round.
- A published metric that is not a proportion (MRR, nDCG) has no interval from its value alone and is
  left untested, which the page says.

Every interval is the cell's own 95% interval: over many truly tied pairs about one in twenty would
still show as a difference, and the page says the intervals are not simultaneous.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from leaderboard.significance import CANNOT_TELL, Difference, paired_items, unpaired_proportions

PAIRED = (
    "paired over items: the same items in both directions, resampled whole (paired bootstrap of A→B minus B→A "
    "with the engine's item draws; p from the item-level sign-flip test, exact McNemar for one binary cell per item)"
)
UNPAIRED = (
    "unpaired: the two directions' published proportions as if independent (Newcombe's interval over the "
    "published pool), which errs wide because both directions are scored on the same items"
)
UNTESTED = "not tested: no per-query data (rank files) and no published proportion to compare"
WITHIN_NOISE = "within noise"
BETTER, WORSE = "better this way", "worse this way"


@dataclass(frozen=True)
class AsymmetryTest:
    """One ordered pair's asymmetry (row→column minus column→row) with its 95% interval and its verdict."""

    delta: float
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    method: str
    # None when untested; True when the interval contains 0 (or the tests disagree, see paired_items).
    within_noise: bool | None

    @property
    def verdict(self) -> str:
        if self.within_noise is None:
            return "not tested"
        if self.within_noise:
            return WITHIN_NOISE
        return BETTER if self.delta > 0 else WORSE

    def reversed(self) -> AsymmetryTest:
        """The same test seen from the other direction (column→row minus row→column)."""
        return AsymmetryTest(
            delta=-self.delta,
            ci_low=None if self.ci_high is None else -self.ci_high,
            ci_high=None if self.ci_low is None else -self.ci_low,
            p_value=self.p_value,
            method=self.method,
            within_noise=self.within_noise,
        )


def _from_difference(difference: Difference, method: str) -> AsymmetryTest:
    # Higher is better for the direction test whatever the metric: the sign says which direction scores
    # more, and the colour follows the metric's direction elsewhere on the page.
    return AsymmetryTest(
        delta=difference.delta,
        ci_low=difference.ci_low,
        ci_high=difference.ci_high,
        p_value=difference.p_value,
        method=f"{method} [{difference.method}]",
        within_noise=difference.verdict == CANNOT_TELL,
    )


def paired_asymmetry(forward: np.ndarray, backward: np.ndarray, *, n_resamples: int, seed: int) -> AsymmetryTest:
    """A→B minus B→A from each item's per-query values in both directions (the same items, same order)."""
    difference, _ = paired_items(forward, backward, n_resamples=n_resamples, seed=seed)
    return _from_difference(difference, PAIRED)


def unpaired_asymmetry(forward: float, backward: float, pool: int) -> AsymmetryTest:
    """A→B minus B→A from two published proportions over `pool` queries each, treated as independent."""
    return _from_difference(unpaired_proportions([forward], [backward], pool), UNPAIRED)


def untested(forward: float, backward: float) -> AsymmetryTest:
    return AsymmetryTest(forward - backward, None, None, None, UNTESTED, None)


def asymmetry_tests(
    matrix: Sequence[Sequence[float | None]],
    test: Callable[[int, int], AsymmetryTest | None],
) -> list[list[AsymmetryTest | None]]:
    """Every off-diagonal cell's test, computing `test(i, j)` once per unordered pair (i < j).

    `matrix` is the pair matrix (source × target); a cell with either direction missing has no test."""
    size = len(matrix)
    tests: list[list[AsymmetryTest | None]] = [[None] * size for _ in range(size)]
    for i in range(size):
        for j in range(i + 1, size):
            if matrix[i][j] is None or matrix[j][i] is None:
                continue
            found = test(i, j)
            if found is not None:
                tests[i][j], tests[j][i] = found, found.reversed()
    return tests


def counts(tests: Sequence[Sequence[AsymmetryTest | None]]) -> dict[str, int]:
    """How many unordered pairs are a difference, within noise, or untested (each pair counted once)."""
    found = {"different": 0, "within_noise": 0, "untested": 0}
    for i, row in enumerate(tests):
        for test in row[i + 1 :]:
            if test is None:
                continue
            key = "untested" if test.within_noise is None else "within_noise" if test.within_noise else "different"
            found[key] += 1
    return found
