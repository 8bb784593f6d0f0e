"""Tests of a difference between two models measured on the same queries. Pure Python, no Django.

The compare page, the rank intervals and the two-run error analysis all ask the same question of
paired data (the same queries, scored by two models), so the test lives here once: the exact McNemar
test of two models' hits, the paired bootstrap of a difference of means (the engine's shared item
draws), Holm's correction when several comparisons are shown at once, an unpaired conservative
interval for published proportions (which carry no per-query data), and rank intervals from the
ranks of every model in every bootstrap replicate. Never the overlap of two intervals: overlapping
intervals can hide a clearly significant paired difference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest

from evaluation.engine import bootstrap


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
PAIRED_BOOTSTRAP = "paired bootstrap over the shared queries (same item draws for both models)"
MCNEMAR = "exact McNemar test on the discordant queries"
UNPAIRED = "unpaired, conservative: Newcombe interval for two proportions over the same queries"
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


def bootstrap_p_value(differences: np.ndarray) -> float:
    """Two-sided percentile-bootstrap p-value of a difference: twice the smaller tail beyond zero.

    It agrees with the percentile interval: the (1 − α) interval excludes 0 when p < α (up to the
    interpolation of the percentiles), so Holm's step-down on these p-values is a step-down on the
    intervals."""
    draws = np.asarray(differences, dtype=np.float64)
    draws = draws[~np.isnan(draws)]
    if draws.size == 0:
        return 1.0
    below = np.count_nonzero(draws <= 0) / draws.size
    above = np.count_nonzero(draws >= 0) / draws.size
    return float(min(1.0, 2 * min(below, above)))


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


def paired_recall_at_1(
    hits_a: np.ndarray, hits_b: np.ndarray, *, n_resamples: int, seed: int
) -> tuple[Difference, np.ndarray]:
    """Recall@1: the paired bootstrap interval decides the verdict; the p-value reported is McNemar's.

    The discordant queries are counted over every (language, query) unit the average spans."""
    difference, draws = paired_bootstrap(hits_a, hits_b, n_resamples=n_resamples, seed=seed)
    table = PairedHits.from_hits(np.ravel(hits_a), np.ravel(hits_b))
    return (
        Difference(
            **{**difference.__dict__, "p_value": table.mcnemar_p, "method": f"{PAIRED_BOOTSTRAP}; p: {MCNEMAR}"}
        ),
        draws,
    )


def unpaired_proportions(
    values_a: Sequence[float], values_b: Sequence[float], n: int, *, higher_is_better: bool = True
) -> Difference:
    """Δ of two published averages of proportions, each language a count over the same `n` queries.

    Published files carry no per-query results, so the pairing is lost: each language's difference
    gets Newcombe's hybrid score interval for two independent proportions (statsmodels), which is
    conservative here (paired results on the same queries are positively correlated, so the true
    interval is narrower), and the average's interval is the mean of those bounds (an upper bound on its
    width whatever the correlation between languages). The p-value is the two-proportion score test
    on the pooled counts over the languages, unpaired too."""
    from statsmodels.stats.proportion import confint_proportions_2indep, test_proportions_2indep

    if len(values_a) != len(values_b) or not values_a or n <= 0:
        raise ValueError("unpaired proportions need the same languages on both sides and a pool size")
    lows, highs = [], []
    for value_a, value_b in zip(values_a, values_b, strict=True):
        low, high = confint_proportions_2indep(
            round(value_a * n), n, round(value_b * n), n, method="newcomb", compare="diff", alpha=1 - CONFIDENCE
        )
        lows.append(float(low))
        highs.append(float(high))
    units = len(values_a)
    count_a = sum(round(value * n) for value in values_a)
    count_b = sum(round(value * n) for value in values_b)
    test = test_proportions_2indep(count_a, units * n, count_b, units * n, method="score", compare="diff")
    low, high = sum(lows) / units, sum(highs) / units
    mean_a, mean_b = sum(values_a) / units, sum(values_b) / units
    return Difference(
        a=mean_a,
        b=mean_b,
        delta=mean_a - mean_b,
        ci_low=low,
        ci_high=high,
        p_value=float(test.pvalue),
        method=UNPAIRED,
        verdict=verdict_of(low, high, higher_is_better=higher_is_better),
        paired=False,
    )


def holm(differences: Sequence[Difference], *, higher_is_better: Sequence[bool] | None = None) -> list[Difference]:
    """Holm-correct several comparisons shown at once (statsmodels' multipletests, method "holm").

    The p-values become Holm-adjusted ones, and a verdict stands only where the adjusted p-value is
    below 0.05 and the interval agrees; a comparison without a p-value is left as it is."""
    from statsmodels.stats.multitest import multipletests

    tested = [index for index, difference in enumerate(differences) if difference.p_value is not None]
    if len(tested) < 2:
        return list(differences)
    _, adjusted, _, _ = multipletests([differences[i].p_value for i in tested], alpha=1 - CONFIDENCE, method="holm")
    result = list(differences)
    for index, p_value in zip(tested, adjusted, strict=True):
        difference = differences[index]
        verdict = difference.verdict if p_value < 1 - CONFIDENCE else CANNOT_TELL
        result[index] = Difference(**{**difference.__dict__, "p_value": float(p_value), "verdict": verdict})
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
    from scipy.stats import rankdata

    values = np.asarray(replicates, dtype=np.float64)
    if values.ndim != 2 or values.shape[0] == 0:
        return []
    scores = -values if higher_is_better else values
    best = rankdata(scores, method="min", axis=0)
    worst = rankdata(scores, method="max", axis=0)
    tail = (1 - confidence) / 2
    low = np.quantile(best, tail, axis=1, method="lower")
    high = np.quantile(worst, 1 - tail, axis=1, method="higher")
    return [(int(a), int(b)) for a, b in zip(low, high, strict=True)]
