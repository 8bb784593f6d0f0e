"""Wilson and Newcombe intervals and Holm's correction, bit for bit as statsmodels computes them, faster.

Pure Python, no Django. The board asks statsmodels for these thousands of times per page build, and two of
its costs have nothing to do with the arithmetic (measured over the leaderboard's tests on a 2-core EPYC):

* `proportion_confint(method="wilson")` looks up the normal quantile through scipy's distribution machinery
  on every call (0.28 ms, about as much as the rest of the call); inverting a mean of Newcombe intervals
  for its p-value (`leaderboard.significance.newcombe_inverted_p`) evaluates the interval at ~50 values of
  α for every language, 157,000 interval calls and 60 s of the 450 s those tests took.
* `multipletests(method="holm")` ends with `gc.collect()`, a full collection of the process's heap on
  every call: 17 s over 25 calls in a test process, and the same pause in a web worker building a page.

The functions here repeat statsmodels 0.15's expressions in the same order on Python floats (each of
+, −, ×, ÷ and √ is rounded once, as numpy's are), with the quantile computed once per α by the same scipy
call. `tests/leaderboard/test_it_computes_intervals_exactly_as_statsmodels.py` checks, bit for bit against
statsmodels' own: every Wilson interval at 150 queries at six levels, Newcombe's on a grid of 4,681 count
pairs there, both on random pools and levels, and Holm on random p-values with ties. `statsmodels_*` are the
library's calls, kept as the reference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from scipy import stats


# Pages ask for a few fixed levels (95%) many times; the p-value's root search asks for ~50 new ones each.
@lru_cache(maxsize=1024)
def normal_quantile(alpha: float) -> float:
    """The two-sided critical value z_{1−α/2}, as statsmodels computes it (`stats.norm.isf(alpha / 2.0)`)."""
    return float(stats.norm.isf(alpha / 2.0))


def wilson_bounds(count: int, nobs: int, crit: float) -> tuple[float, float]:
    """Wilson's score interval of count / nobs at the critical value crit (from `normal_quantile`)."""
    crit2 = float(np.float64(crit) ** 2)
    q = count / nobs
    denom = 1 + crit2 / nobs
    center = (q + crit2 / (2 * nobs)) / denom
    # statsmodels squares nobs as a numpy array (x·x) and crit as a numpy scalar (pow); nobs² is exact either
    # way for any pool below 2**26 queries, and crit2 is computed here as statsmodels computes it.
    dist = crit * math.sqrt(q * (1.0 - q) / nobs + crit2 / (4.0 * float(nobs) ** 2))
    dist /= denom
    return min(max(center - dist, 0.0), 1.0), min(max(center + dist, 0.0), 1.0)


def newcombe_bounds(count1: int, nobs1: int, count2: int, nobs2: int, crit: float) -> tuple[float, float]:
    """Newcombe's hybrid score interval of p1 − p2 (statsmodels' `confint_proportions_2indep`, "newcomb")."""
    p1 = count1 / nobs1
    p2 = count2 / nobs2
    diff = p1 - p2
    low1, upp1 = wilson_bounds(count1, nobs1, crit)
    low2, upp2 = wilson_bounds(count2, nobs2, crit)
    d_low = math.sqrt((p1 - low1) ** 2 + (upp2 - p2) ** 2)
    d_upp = math.sqrt((p2 - low2) ** 2 + (upp1 - p1) ** 2)
    return diff - d_low, diff + d_upp


def holm_adjusted(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given (statsmodels' `multipletests`, "holm")."""
    values = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(values)
    ordered = np.take(values, order)
    adjusted = np.maximum.accumulate(ordered * np.arange(len(ordered), 0, -1))
    adjusted[adjusted > 1] = 1
    unsorted = np.empty_like(adjusted)
    unsorted[order] = adjusted
    return [float(value) for value in unsorted]


def statsmodels_wilson(count: int, nobs: int, alpha: float) -> tuple[float, float]:
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(count, nobs, alpha=alpha, method="wilson")
    return float(low), float(high)


def statsmodels_newcombe(count1: int, nobs1: int, count2: int, nobs2: int, alpha: float) -> tuple[float, float]:
    from statsmodels.stats.proportion import confint_proportions_2indep

    low, high = confint_proportions_2indep(count1, nobs1, count2, nobs2, method="newcomb", compare="diff", alpha=alpha)
    return float(low), float(high)


def statsmodels_holm(p_values: Sequence[float]) -> list[float]:
    from statsmodels.stats.multitest import multipletests

    _, adjusted, _, _ = multipletests(list(p_values), alpha=0.05, method="holm")
    return [float(value) for value in adjusted]
