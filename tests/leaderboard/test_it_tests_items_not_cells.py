"""Significance respects how the data were drawn: items, not (language, query) cells (issue 33).

Constructed data where the truth is known, without a database: cells of one item that move together
across languages, a pair of published results with a tiny difference, and random inputs on which no
p-value the compare page would show contradicts the interval beside it.
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from leaderboard.significance import (
    A_BETTER,
    B_BETTER,
    CANNOT_TELL,
    INTERVAL_WITHHELD,
    PairedHits,
    agrees,
    bootstrap_p_value,
    holm,
    paired_items,
    sign_flip_p,
    unpaired_proportions,
)


def correlated_hits(items: int = 150, languages: int = 6, differing: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Two models' hits (languages × items): equal everywhere except `differing` items, where B hits in
    every language and A in none, so each differing item gives one discordant cell per language."""
    rng = np.random.default_rng(3)
    base = rng.random(items) < 0.4
    a = np.tile(base, (languages, 1)).astype(float)
    b = a.copy()
    a[:, :differing] = 0.0
    b[:, :differing] = 1.0
    return a, b


def test_the_pooled_mcnemar_would_call_cells_that_move_together_but_the_item_level_test_does_not():
    a, b = correlated_hits()
    pooled = PairedHits.from_hits(a.ravel(), b.ravel())
    # 24 discordant cells, all favouring B: counted as independent, they look overwhelming.
    assert (pooled.only_a, pooled.only_b) == (0, 24) and pooled.mcnemar_p < 1e-6
    # They are 4 items: every sign flip of 4 items is as likely, and 2 of the 16 are as extreme.
    difference, _ = paired_items(a, b, n_resamples=1000, seed=0)
    assert sign_flip_p((a - b).mean(axis=0)) == 0.125
    assert difference.p_value == 0.125 and difference.verdict == CANNOT_TELL
    # The percentile bootstrap of 4 items calls it (its interval excludes 0), so that interval is withheld.
    assert difference.ci_low is None and INTERVAL_WITHHELD in difference.method
    assert agrees(difference)


def test_the_item_level_test_still_calls_a_difference_many_items_carry():
    a, b = correlated_hits(differing=20)
    difference, _ = paired_items(a, b, n_resamples=1000, seed=0)
    assert difference.verdict == B_BETTER and difference.p_value < 1e-4 and difference.ci_high < 0


def test_one_language_one_direction_is_the_exact_mcnemar_test():
    a, b = correlated_hits(languages=1, differing=12)
    difference, _ = paired_items(a, b, n_resamples=1000, seed=0)
    assert difference.p_value == PairedHits.from_hits(a[0], b[0]).mcnemar_p == 2 * 0.5**12
    assert "McNemar" in difference.method and difference.verdict == B_BETTER


def test_the_sign_flip_test_enumerates_small_cases_exactly():
    # Sums of the 8 sign flips of (3, 1, 1): |±3 ±1 ±1| is 5 twice, 3 four times, 1 twice.
    assert sign_flip_p(np.array([3.0, 1.0, 1.0, 0.0])) == 0.25
    assert sign_flip_p(np.array([3.0, -1.0, 1.0])) == 0.75
    assert sign_flip_p(np.zeros(5)) == 1.0


def test_a_published_pair_with_a_tiny_difference_cannot_be_told_apart_and_says_so_with_its_p_value():
    n = 49_949
    # Δ = 0.05 points on 12 languages: the score test over 12 × 49,949 "independent" queries gave p ≈ 0.013.
    a = [0.30 + 0.01 * k for k in range(12)]
    b = [value - 0.0005 for value in a]
    difference = unpaired_proportions(a, b, n)
    assert difference.ci_low < 0 < difference.ci_high
    assert difference.verdict == CANNOT_TELL and difference.p_value > 0.5 and agrees(difference)


def test_a_published_pair_with_a_clear_difference_is_called_with_a_p_value_that_matches():
    n = 49_949
    difference = unpaired_proportions([0.40, 0.35], [0.37, 0.32], n)
    assert difference.verdict == A_BETTER and difference.p_value < 0.05 and agrees(difference)


proportions = st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(proportions, st.floats(-0.05, 0.05), st.integers(20, 60_000))
def test_no_shown_published_p_value_contradicts_its_interval(values, shift, n):
    other = [min(1.0, max(0.0, value + shift)) for value in values]
    assert agrees(unpaired_proportions(values, other, n))


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 4),
    st.integers(8, 80),
    st.floats(0.0, 0.5),
    st.integers(0, 2**31 - 1),
    st.booleans(),
)
# Hypothesis found this one: 499 of 9,999 sign flips as extreme give p = 500 / 10,000 = 0.05 exactly,
# which `p < 1 - 0.95` (0.050000000000000044) called significant.
@example(units=1, items=29, rate=0.3494070988398144, seed=758672, binary=False)
def test_no_shown_paired_p_value_contradicts_its_interval(units, items, rate, seed, binary):
    rng = np.random.default_rng(seed)
    if binary:
        a = (rng.random((units, items)) < 0.5).astype(float)
        b = np.where(rng.random((units, items)) < rate, 1 - a, a)
    else:
        a = rng.random((units, items))
        b = a + rng.normal(rate / 5, 0.2, size=a.shape)
    difference, _ = paired_items(a, b, n_resamples=400, seed=seed % 1000)
    assert agrees(difference)
    # A verdict never outruns its figures: it names a model only beside a small p-value and an interval excluding 0.
    if difference.verdict != CANNOT_TELL:
        assert difference.p_value < 0.05 and (difference.ci_low > 0 or difference.ci_high < 0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1.0, 1.0), min_size=2, max_size=300))
def test_the_bootstrap_p_value_inverts_the_percentile_interval(draws):
    values = np.asarray(draws)
    low, high = np.percentile(values, [2.5, 97.5])
    p_value = bootstrap_p_value(values)
    # Exactly at the boundary (an end of the interval at 0 to rounding) either answer is fair.
    if min(abs(low), abs(high)) > 1e-12:
        assert (p_value < 0.05) == (low > 0 or high < 0)


def test_holm_keeps_a_verdict_only_beside_a_small_corrected_p_value():
    n = 10_000
    rows = [unpaired_proportions([0.5], [0.5 - shift], n) for shift in (0.03, 0.014, 0.0)]
    for row in holm(rows):
        assert row.verdict == CANNOT_TELL or row.p_value < 0.05
