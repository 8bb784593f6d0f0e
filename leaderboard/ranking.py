"""Rank intervals from confidence intervals. Pure Python, no Django.

A single rank suggests more certainty than a benchmark has: two models whose confidence intervals
overlap cannot be told apart. Each model therefore gets a rank interval

    [1 + #models whose ci_low > its ci_high,  #models whose ci_high >= its ci_low]

(the best and worst rank it could hold given the intervals; the model itself is counted in the
upper end). Models whose intervals overlap share part of their rank band. A model without an
interval (the published results carry none) is treated as a point, so with no intervals at all the
bands collapse to ordinary ranks by point value, where only exact ties share a band ("2–3").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Estimate:
    value: float
    ci_low: float | None = None
    ci_high: float | None = None

    def bounds(self, higher_is_better: bool) -> tuple[float, float]:
        """(low, high) on a scale where higher is better; a missing interval is the point itself."""
        low = self.value if self.ci_low is None else self.ci_low
        high = self.value if self.ci_high is None else self.ci_high
        if higher_is_better:
            return low, high
        return -high, -low


def rank_intervals(estimates: Sequence[Estimate], *, higher_is_better: bool = True) -> list[tuple[int, int]]:
    """The (best, worst) rank of every estimate, in input order."""
    bounds = [estimate.bounds(higher_is_better) for estimate in estimates]
    intervals = []
    for low, high in bounds:
        above = sum(1 for other_low, _ in bounds if other_low > high)
        reachable = sum(1 for _, other_high in bounds if other_high >= low)
        intervals.append((1 + above, reachable))
    return intervals


def rank_label(interval: tuple[int, int] | None) -> str:
    if interval is None:
        return "—"
    best, worst = interval
    return str(best) if best == worst else f"{best}–{worst}"
