"""The paired bootstrap, Holm's correction and the unpaired interval (leaderboard.significance), without a database."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import confint_proportions_2indep

from leaderboard.significance import (
    A_BETTER,
    B_BETTER,
    CANNOT_TELL,
    UNPAIRED,
    bootstrap_p_value,
    holm,
    paired_bootstrap,
    unpaired_proportions,
    verdict_of,
)


def test_the_paired_bootstrap_matches_draws_gathered_by_hand():
    rng = np.random.default_rng(5)
    a = rng.random((3, 250))
    b = a - 0.02 + rng.normal(0, 0.05, size=a.shape)
    difference, draws = paired_bootstrap(a, b, n_resamples=300, seed=9)
    generator = np.random.default_rng(np.random.SeedSequence([9, 250]))
    indices = np.concatenate([generator.integers(0, 250, size=(100, 250)) for _ in range(3)])
    by_hand = (a[:, indices].mean(axis=2) - b[:, indices].mean(axis=2)).mean(axis=0)
    assert draws == pytest.approx(by_hand, abs=1e-12)
    assert (difference.ci_low, difference.ci_high) == pytest.approx(tuple(np.percentile(by_hand, [2.5, 97.5])))
    assert difference.delta == pytest.approx(a.mean() - b.mean())
    assert difference.paired and difference.verdict == A_BETTER


def test_the_verdict_follows_the_interval_and_the_direction():
    assert verdict_of(0.01, 0.03) == A_BETTER
    assert verdict_of(-0.03, -0.01) == B_BETTER
    assert verdict_of(-0.01, 0.02) == CANNOT_TELL
    # Lower is better (ECE): a positive A − B means B is better.
    assert verdict_of(0.01, 0.03, higher_is_better=False) == B_BETTER


def test_the_bootstrap_p_value_agrees_with_the_interval():
    rng = np.random.default_rng(2)
    for shift in (0.0, 0.5, 1.0, 2.0, 3.0):
        draws = rng.normal(shift, 1.0, size=4000)
        low, high = np.percentile(draws, [2.5, 97.5])
        assert (bootstrap_p_value(draws) < 0.05) == (low > 0 or high < 0)


def test_holm_matches_statsmodels_and_withdraws_verdicts_it_no_longer_supports():
    rng = np.random.default_rng(8)
    found = []
    for shift in (0.03, 0.004, 0.0):
        a = rng.random((1, 400))
        found.append(paired_bootstrap(a, a - shift + rng.normal(0, 0.03, size=a.shape), n_resamples=500, seed=1)[0])
    corrected = holm(found)
    expected = multipletests([d.p_value for d in found], alpha=0.05, method="holm")[1]
    assert [d.p_value for d in corrected] == pytest.approx(list(expected))
    for before, after in zip(found, corrected, strict=True):
        assert after.verdict == (before.verdict if after.p_value < 0.05 else CANNOT_TELL)
        # The uncorrected p-value, which the (unwidened) interval matches, is kept beside the corrected one.
        assert after.p_uncorrected == before.p_value
        assert (after.p_uncorrected < 0.05) == (not after.ci_low <= 0 <= after.ci_high)
    assert holm(found[:1]) == found[:1] and found[0].p_uncorrected is None


def test_the_unpaired_interval_is_newcombes_for_two_proportions_over_the_same_queries():
    n = 49_949
    one = unpaired_proportions([0.30], [0.29], n)
    low, high = confint_proportions_2indep(round(0.30 * n), n, round(0.29 * n), n, method="newcomb", compare="diff")
    assert (one.ci_low, one.ci_high) == pytest.approx((low, high))
    assert not one.paired and one.method.startswith(UNPAIRED) and one.verdict == A_BETTER
    # Over two languages: the mean of the per-language bounds.
    two = unpaired_proportions([0.30, 0.20], [0.29, 0.21], n)
    second = confint_proportions_2indep(round(0.20 * n), n, round(0.21 * n), n, method="newcomb", compare="diff")
    assert two.ci_low == pytest.approx((low + second[0]) / 2) and two.delta == pytest.approx(0.0)
    assert two.verdict == CANNOT_TELL
    with pytest.raises(ValueError, match="same languages"):
        unpaired_proportions([0.3], [0.2, 0.1], n)
