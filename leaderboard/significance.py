"""Tests of a difference between two models measured on the same queries. Pure Python, no Django.

The compare page, the rank intervals and the two-run error analysis all ask the same question of
paired data (the same queries, scored by two models), so the test lives here once: the exact McNemar
test of two models' hits, the paired bootstrap of a difference of means (the engine's shared item
draws), the item-level sign-flip test, Holm's correction when several comparisons are shown at once,
an unpaired conservative interval for published proportions (which carry no per-query data), and
rank intervals from the ranks of every model in every bootstrap replicate. Never the overlap of two
intervals: overlapping intervals can hide a clearly significant paired difference.

The unit of every test is the item, never the cell: the same item appears once per language (or
language pair) and its cells move together, so a test that counts (language, query) cells as
independent understates the variance. And a p-value is only shown where it cannot contradict the
interval printed beside it (`agrees`): an interval and a p-value that disagree say two things at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest

from evaluation.engine import bootstrap
from evaluation.proportions import holm_adjusted, newcombe_bounds, normal_quantile


@dataclass(frozen=True)
class PairedHits:
    """The 2×2 table of two models' hits (e.g. gold at rank 1) on the same queries."""

    both: int
    only_a: int
    only_b: int
    neither: int

    @classmethod
    def from_hits(cls, hits_a: np.ndarray, hits_b: np.ndarray) -> PairedHits:
        a = np.asarray(hits_a, dtype=bool)
        b = np.asarray(hits_b, dtype=bool)
        if a.shape != b.shape:
            raise ValueError(f"paired hits need the same queries: {a.shape} against {b.shape}")
        return cls(
            both=int(np.count_nonzero(a & b)),
            only_a=int(np.count_nonzero(a & ~b)),
            only_b=int(np.count_nonzero(~a & b)),
            neither=int(np.count_nonzero(~a & ~b)),
        )

    @property
    def mcnemar_p(self) -> float:
        return mcnemar_exact_p(self.only_a, self.only_b)


def mcnemar_exact_p(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts.

    Under the null hypothesis each discordant query is equally likely to favour either model, so the
    count favouring A is Binomial(only_a + only_b, 1/2); the concordant queries carry no information
    about the difference. With no discordant query there is no evidence of a difference: p = 1.
    """
    if only_a < 0 or only_b < 0:
        raise ValueError("discordant counts cannot be negative")
    discordant = only_a + only_b
    if discordant == 0:
        return 1.0
    return float(binomtest(only_a, discordant, 0.5, alternative="two-sided").pvalue)


# --- paired bootstrap of a difference ------------------------------------------------------------------
#
# The engine draws the same bootstrap items for every model (same seed, same item order), so the
# resampled means of two models in one replicate are of the very same queries: their difference per
# replicate is the paired bootstrap of the difference. Averaged over several languages, the same
# draws hold in every language (the items are parallel), so the difference of two averages is
# bootstrapped jointly too.

CONFIDENCE = 0.95
# The level every verdict is taken at, written out: 1 - CONFIDENCE is 0.050000000000000044 in binary
# floating point, so a p-value of exactly 0.05 (500 of 9,999 sign flips, say) would pass `p < 1 -
# CONFIDENCE` and be called significant while the page prints "p = 0.05".
ALPHA = 0.05
PAIRED_BOOTSTRAP = "paired bootstrap over the shared queries (same item draws for both models)"
UNPAIRED = "unpaired, conservative: Newcombe interval for two proportions over the same queries"
UNPAIRED_P = "that interval inverted (the smallest α at which it excludes 0)"
A_BETTER, B_BETTER, CANNOT_TELL = "A is better", "B is better", "cannot tell apart at 95%"


@dataclass(frozen=True)
class Difference:
    """Δ = A − B with its interval, its p-value, how both were had, and the verdict."""

    a: float
    b: float
    delta: float
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    method: str
    verdict: str
    paired: bool
    # The p-value before Holm's step, where one was taken: it is the one its interval matches (the
    # interval is not widened for the comparisons shown), so the page shows it beside the corrected one.
    p_uncorrected: float | None = None


def bootstrap_p_value(differences: np.ndarray) -> float:
    """Two-sided p-value of a difference from its bootstrap draws, by inverting the percentile interval.

    It is the smallest α at which the (1 − α) percentile interval (numpy's linear interpolation, as
    `bootstrap.percentile_interval` draws it) excludes 0, so it cannot contradict the interval: the
    95% interval excludes 0 exactly when p < 0.05, and Holm's step-down on these p-values is a
    step-down on the intervals. The quantile function Q is piecewise linear and non-decreasing, so
    {q: Q(q) ≤ 0} is [0, q≤] and {q: Q(q) ≥ 0} is [q≥, 1]; the interval [Q(α/2), Q(1 − α/2)] excludes 0
    exactly when α > 2·min(q≤, 1 − q≥)."""
    draws = np.sort(np.asarray(differences, dtype=np.float64))
    draws = draws[~np.isnan(draws)]
    size = draws.size
    if size == 0:
        return 1.0
    if size == 1:
        return 1.0 if draws[0] == 0 else 0.0
    q_at_most = _level_of_zero(draws, int(np.count_nonzero(draws <= 0)))
    q_at_least = _level_of_zero(draws, int(np.count_nonzero(draws < 0)))
    return float(min(1.0, 2 * min(q_at_most, 1.0 - q_at_least)))


def _level_of_zero(draws: np.ndarray, count: int) -> float:
    """The percentile level at which the (sorted) draws' linearly interpolated quantile crosses 0, where
    `count` draws lie on the lower side of 0: numpy's default quantile, inverted."""
    if count == 0:
        return 0.0
    if count == draws.size:
        return 1.0
    left, right = draws[count - 1], draws[count]
    return float((count - 1 + (0.0 - left) / (right - left)) / (draws.size - 1))


def excludes_zero(ci_low: float | None, ci_high: float | None) -> bool:
    return ci_low is not None and ci_high is not None and not ci_low <= 0 <= ci_high


def agrees(difference: Difference, *, alpha: float = ALPHA) -> bool:
    """Whether a difference's p-value and its interval say the same thing at level α (or one is absent).

    Every difference a page shows passes this: a p-value below α beside an interval that includes 0,
    or one above it beside an interval that excludes 0, would contradict the figure printed next to it."""
    if difference.p_value is None or difference.ci_low is None or difference.ci_high is None:
        return True
    return (difference.p_value < alpha) == excludes_zero(difference.ci_low, difference.ci_high)


def verdict_of(ci_low: float | None, ci_high: float | None, *, higher_is_better: bool = True) -> str:
    """The plain verdict from an interval of A − B: which is better, or that it cannot tell at 95%."""
    if ci_low is None or ci_high is None or ci_low <= 0 <= ci_high:
        return CANNOT_TELL
    a_higher = ci_low > 0
    return A_BETTER if a_higher == higher_is_better else B_BETTER


def paired_bootstrap(
    values_a: np.ndarray,
    values_b: np.ndarray,
    *,
    n_resamples: int,
    seed: int,
    higher_is_better: bool = True,
) -> tuple[Difference, np.ndarray]:
    """The paired bootstrap of the difference of two models' means over the same queries.

    `values_a` and `values_b` are (units × n) per-query values (one row per language or pair, the same
    items in the same order in every row and for both models). Returns the difference and its
    resampled values (one per replicate)."""
    a = np.atleast_2d(np.asarray(values_a, dtype=np.float64))
    b = np.atleast_2d(np.asarray(values_b, dtype=np.float64))
    if a.shape != b.shape:
        raise ValueError(f"paired values need the same units and queries: {a.shape} against {b.shape}")
    resampled = bootstrap.bootstrap_means(np.vstack([a, b]), n_resamples, seed)
    units = a.shape[0]
    draws = resampled[:units].mean(axis=0) - resampled[units:].mean(axis=0)
    low, high = bootstrap.percentile_interval(draws, CONFIDENCE)
    mean_a, mean_b = float(a.mean()), float(b.mean())
    difference = Difference(
        a=mean_a,
        b=mean_b,
        delta=mean_a - mean_b,
        ci_low=low,
        ci_high=high,
        p_value=bootstrap_p_value(draws),
        method=PAIRED_BOOTSTRAP,
        verdict=verdict_of(low, high, higher_is_better=higher_is_better),
        paired=True,
    )
    return difference, draws


# The sign flips drawn when an item-level test has too many differing items to enumerate every flip.
SIGN_FLIPS = 9999
EXACT_FLIPS_UP_TO = 16
SIGN_FLIP = "item-level sign-flip (paired permutation) test"
MCNEMAR_ITEMS = "exact McNemar test (one cell per item: one language, one direction)"
INTERVAL_WITHHELD = (
    "interval withheld: the percentile bootstrap excludes 0 but the item-level test does not reject "
    "(too few items differ for the bootstrap's interval to be trusted)"
)
P_WITHHELD = "p-value withheld: the item-level test rejects but the bootstrap interval includes 0"


def item_differences(values_a: np.ndarray, values_b: np.ndarray) -> np.ndarray:
    """Each item's difference A − B, averaged over the units (languages or pairs) it appears in.

    `values_a` and `values_b` are (units × items), the same items in every row: an item's cells in
    several languages move together, so the item, not the cell, is the independent unit."""
    a = np.atleast_2d(np.asarray(values_a, dtype=np.float64))
    b = np.atleast_2d(np.asarray(values_b, dtype=np.float64))
    if a.shape != b.shape:
        raise ValueError(f"paired values need the same units and items: {a.shape} against {b.shape}")
    return (a - b).mean(axis=0)


def sign_flip_p(differences: np.ndarray, *, flips: int = SIGN_FLIPS, seed: int = 0) -> float:
    """Two-sided p-value of the paired permutation test on items' differences.

    Under the null hypothesis each item's difference is as likely to have either sign, so the observed
    sum is compared with the sums of every sign flip of the items (exactly up to 2^16 flips, else
    `flips` random ones with the (1 + count)/(1 + flips) estimate). Items without a difference carry
    no information; when every differing item differs by the same amount the test is the exact
    binomial (McNemar) test."""
    values = np.asarray(differences, dtype=np.float64)
    values = values[np.abs(values) > 1e-12]
    if values.size == 0:
        return 1.0
    magnitudes = np.abs(values)
    if np.allclose(magnitudes, magnitudes[0], rtol=0, atol=1e-12):
        return mcnemar_exact_p(int(np.count_nonzero(values > 0)), int(np.count_nonzero(values < 0)))
    observed = abs(values.sum())
    # A tolerance keeps sums equal to the observed one (up to rounding) in the tail, as they should be.
    tolerance = 1e-9 * float(magnitudes.sum())
    if values.size <= EXACT_FLIPS_UP_TO:
        codes = np.arange(2**values.size)[:, None] >> np.arange(values.size) & 1
        sums = np.abs((1 - 2 * codes) @ values)
        return float(np.count_nonzero(sums >= observed - tolerance) / sums.size)
    rng = np.random.default_rng(np.random.SeedSequence([seed, values.size]))
    extreme = 0
    for start in range(0, flips, 500):
        signs = rng.integers(0, 2, size=(min(500, flips - start), values.size), dtype=np.int8) * 2 - 1
        extreme += int(np.count_nonzero(np.abs(signs @ values) >= observed - tolerance))
    return float((1 + extreme) / (1 + flips))


def paired_items(
    values_a: np.ndarray,
    values_b: np.ndarray,
    *,
    n_resamples: int,
    seed: int,
    higher_is_better: bool = True,
) -> tuple[Difference, np.ndarray]:
    """Δ of two re-runs over the same items: the paired bootstrap's interval, the item-level test's p.

    Both draw whole items (the bootstrap's shared item draws, the sign flips of items' differences):
    an exact McNemar test where each item contributes one binary cell (one language, one direction),
    the sign-flip test otherwise. Where the two disagree at 95% the figure that claims a difference is
    withheld, with the reason in the method, and the verdict is that they cannot be told apart."""
    difference, draws = paired_bootstrap(
        values_a, values_b, n_resamples=n_resamples, seed=seed, higher_is_better=higher_is_better
    )
    a = np.atleast_2d(np.asarray(values_a, dtype=np.float64))
    b = np.atleast_2d(np.asarray(values_b, dtype=np.float64))
    binary = bool(np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all())
    if a.shape[0] == 1 and binary:
        p_value, test = PairedHits.from_hits(a[0], b[0]).mcnemar_p, MCNEMAR_ITEMS
    else:
        p_value, test = sign_flip_p(item_differences(a, b), seed=seed), SIGN_FLIP
    low, high = difference.ci_low, difference.ci_high
    method = f"{PAIRED_BOOTSTRAP}; p: {test}"
    shown_p: float | None = p_value
    significant = p_value < ALPHA
    if significant and not excludes_zero(low, high):
        shown_p, method = None, f"{method}; {P_WITHHELD} (p = {p_value:.2g})"
    elif not significant and excludes_zero(low, high):
        low = high = None
        method = f"{method}; {INTERVAL_WITHHELD}"
    verdict = verdict_of(low, high, higher_is_better=higher_is_better) if shown_p is not None else CANNOT_TELL
    fields = {**difference.__dict__, "ci_low": low, "ci_high": high, "p_value": shown_p}
    return Difference(**{**fields, "method": method, "verdict": verdict}), draws


# Newcombe's interval of count_a / n − count_b / n at level 1 − α: (count_a, count_b, n, α) → (low, high).
NewcombeInterval = Callable[[int, int, int, float], tuple[float, float]]


def newcombe_interval(count_a: int, count_b: int, n: int, alpha: float) -> tuple[float, float]:
    return newcombe_bounds(count_a, n, count_b, n, normal_quantile(alpha))


def _mean_newcombe(
    counts_a: Sequence[int], counts_b: Sequence[int], n: int, alpha: float, interval: NewcombeInterval
) -> tuple[float, float]:
    """The mean over languages of Newcombe's (1 − α) interval for each language's difference."""
    lows, highs = [], []
    for count_a, count_b in zip(counts_a, counts_b, strict=True):
        low, high = interval(count_a, count_b, n, alpha)
        lows.append(low)
        highs.append(high)
    return sum(lows) / len(lows), sum(highs) / len(highs)


def newcombe_inverted_p(
    counts_a: Sequence[int], counts_b: Sequence[int], n: int, *, interval: NewcombeInterval = newcombe_interval
) -> float:
    """The smallest α at which the mean of the languages' (1 − α) Newcombe intervals excludes 0.

    Every bound narrows as α grows (Wilson's score intervals do), so the p-value is the root of the
    bound nearest 0 as a function of α; it is as conservative as the interval and cannot contradict it.
    `interval` is there for bench/interval_speed.py, which runs the same search on statsmodels' calls."""
    from scipy.optimize import brentq

    delta = (sum(counts_a) - sum(counts_b)) / (len(counts_a) * n)
    if delta == 0:
        return 1.0

    def nearest_bound(alpha: float) -> float:
        low, high = _mean_newcombe(counts_a, counts_b, n, alpha, interval)
        return low if delta > 0 else -high

    small, large = 1e-12, 1 - 1e-9
    if nearest_bound(small) > 0:
        return small
    if nearest_bound(large) <= 0:
        return 1.0
    return float(brentq(nearest_bound, small, large, xtol=1e-14, rtol=1e-12))


def unpaired_proportions(
    values_a: Sequence[float], values_b: Sequence[float], n: int, *, higher_is_better: bool = True
) -> Difference:
    """Δ of two published averages of proportions, each language a count over the same `n` queries.

    Published files carry no per-query results, so the pairing is lost: each language's difference
    gets Newcombe's hybrid score interval for two independent proportions (statsmodels', as
    `evaluation.proportions.newcombe_bounds` repeats it), which is conservative here (paired results
    on the same queries are positively correlated, so the true interval is narrower), and the
    average's interval is the mean of those bounds (an upper bound on its width whatever the
    correlation between languages). The p-value is that interval inverted (the smallest α at which it
    excludes 0), so it cannot contradict it: a test over languages × queries as if they were
    independent would understate the variance of items shared by every language."""
    if len(values_a) != len(values_b) or not values_a or n <= 0:
        raise ValueError("unpaired proportions need the same languages on both sides and a pool size")
    counts_a = [round(value * n) for value in values_a]
    counts_b = [round(value * n) for value in values_b]
    low, high = _mean_newcombe(counts_a, counts_b, n, 1 - CONFIDENCE, newcombe_interval)
    units = len(values_a)
    mean_a, mean_b = sum(values_a) / units, sum(values_b) / units
    return Difference(
        a=mean_a,
        b=mean_b,
        delta=mean_a - mean_b,
        ci_low=low,
        ci_high=high,
        p_value=newcombe_inverted_p(counts_a, counts_b, n),
        method=f"{UNPAIRED}; p: {UNPAIRED_P}",
        verdict=verdict_of(low, high, higher_is_better=higher_is_better),
        paired=False,
    )


def holm(differences: Sequence[Difference], *, higher_is_better: Sequence[bool] | None = None) -> list[Difference]:
    """Holm-correct several comparisons shown at once (statsmodels' multipletests, method "holm", as
    `evaluation.proportions.holm_adjusted` repeats it without its garbage collection).

    The p-values become Holm-adjusted ones, and a verdict stands only where the adjusted p-value is
    below 0.05 and the interval agrees; a comparison without a p-value is left as it is."""
    tested = [index for index, difference in enumerate(differences) if difference.p_value is not None]
    if len(tested) < 2:
        return list(differences)
    adjusted = holm_adjusted([differences[i].p_value for i in tested])
    result = list(differences)
    for index, p_value in zip(tested, adjusted, strict=True):
        difference = differences[index]
        verdict = difference.verdict if p_value < ALPHA else CANNOT_TELL
        result[index] = Difference(
            **{
                **difference.__dict__,
                "p_value": float(p_value),
                "verdict": verdict,
                "p_uncorrected": difference.p_value,
            }
        )
    return result


# --- rank intervals from bootstrap replicates ----------------------------------------------------------


def rank_intervals_from_replicates(
    replicates: np.ndarray, *, higher_is_better: bool = True, confidence: float = CONFIDENCE
) -> list[tuple[int, int]]:
    """Each model's 95% rank interval from its rank in every bootstrap replicate.

    `replicates` is (models × replicates): each model's resampled score in each replicate, the same
    item draws for every model where the data are paired. In each replicate the models are ranked
    (ties share the best rank for the lower end and the worst for the upper end); a model's interval
    is the (1−confidence)/2 quantile of its best-case ranks and the upper quantile of its worst-case ones."""
    values = np.asarray(replicates, dtype=np.float64)
    if values.ndim != 2 or values.shape[0] == 0:
        return []
    scores = -values if higher_is_better else values
    best, worst = tied_ranks_by_replicate(scores)
    tail = (1 - confidence) / 2
    low = np.quantile(best, tail, axis=0, method="lower")
    high = np.quantile(worst, 1 - tail, axis=0, method="higher")
    return [(int(a), int(b)) for a, b in zip(low, high, strict=True)]


def tied_ranks_by_replicate(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (replicates × models) ranks of each model within each replicate, lowest score first: ties
    share the best rank in the first array and the worst in the second, as scipy's rankdata with
    method "min" and "max" along the models' axis gives them.

    One sort of each replicate's row serves both (rankdata sorts twice, along the strided axis): at
    1,000 models and 1,000 replicates this is the overview's largest numerical step. A replicate with a
    missing score (NaN) is left to rankdata, whose rule for NaN the pages keep."""
    by_replicate = np.ascontiguousarray(scores.T)
    if np.isnan(by_replicate).any():
        from scipy.stats import rankdata

        return rankdata(by_replicate, method="min", axis=1), rankdata(by_replicate, method="max", axis=1)
    models = by_replicate.shape[1]
    order = np.argsort(by_replicate, axis=1)
    ordered = np.take_along_axis(by_replicate, order, axis=1)
    tied = ordered[:, 1:] == ordered[:, :-1]
    if not tied.any():
        # No two models share a score in any replicate (the usual case with re-runs' resampled means): each
        # model's rank is its place in the order, best and worst alike, in half the time of the tied case.
        ranks = np.empty(ordered.shape, dtype=np.int64)
        np.put_along_axis(ranks, order, np.broadcast_to(np.arange(1, models + 1), ordered.shape), axis=1)
        return ranks, ranks
    positions = np.broadcast_to(np.arange(models), ordered.shape)
    starts_group = np.ones(ordered.shape, dtype=bool)
    starts_group[:, 1:] = ~tied
    ends_group = np.ones(ordered.shape, dtype=bool)
    ends_group[:, :-1] = starts_group[:, 1:]
    # Each position's group starts at the last start at or before it and ends at the first end at or after it.
    group_start = np.maximum.accumulate(np.where(starts_group, positions, 0), axis=1)
    group_end = np.minimum.accumulate(np.where(ends_group, positions, models - 1)[:, ::-1], axis=1)[:, ::-1]
    best = np.empty(ordered.shape, dtype=np.int64)
    worst = np.empty(ordered.shape, dtype=np.int64)
    np.put_along_axis(best, order, group_start + 1, axis=1)
    np.put_along_axis(worst, order, group_end + 1, axis=1)
    return best, worst
