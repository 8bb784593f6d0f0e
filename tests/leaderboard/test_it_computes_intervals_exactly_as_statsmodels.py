"""Wilson and Newcombe intervals and Holm's correction equal statsmodels' own, bit for bit (no database).

`evaluation.proportions` repeats statsmodels' expressions so that the board does not pay for scipy's
quantile lookup on every interval or for the full garbage collection `multipletests` runs on every call;
every figure it gives must be the one statsmodels gives, so these compare with `==`, not a tolerance.
"""

from __future__ import annotations

import gc
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.proportions import (
    holm_adjusted,
    newcombe_bounds,
    normal_quantile,
    statsmodels_holm,
    statsmodels_newcombe,
    statsmodels_wilson,
    wilson_bounds,
)
from leaderboard.significance import newcombe_inverted_p

# The 95% level the pages use, the ends of newcombe_inverted_p's root search, and levels in between.
LEVELS = (0.05, 1e-12, 1 - 1e-9, 0.0123456789, 0.3, 0.999)
POOL = 150  # queries per language in the validation sample


@pytest.mark.parametrize("alpha", LEVELS)
def test_every_wilson_interval_of_a_150_query_pool_is_statsmodels(alpha):
    crit = normal_quantile(alpha)
    for count in range(POOL + 1):
        assert wilson_bounds(count, POOL, crit) == statsmodels_wilson(count, POOL, alpha), count


def test_newcombe_intervals_of_a_150_query_pool_are_statsmodels():
    crit = normal_quantile(0.05)
    for count_a in range(0, POOL + 1, 6):
        for count_b in range(POOL + 1):
            expected = statsmodels_newcombe(count_a, POOL, count_b, POOL, 0.05)
            assert newcombe_bounds(count_a, POOL, count_b, POOL, crit) == expected, (count_a, count_b)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 60_000).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.integers(0, n),
            st.integers(1, 60_000).flatmap(lambda m: st.tuples(st.just(m), st.integers(0, m))),
        )
    ),
    st.floats(1e-12, 1 - 1e-9),
)
def test_newcombe_and_wilson_intervals_of_any_pools_and_level_are_statsmodels(counts, alpha):
    n1, count1, (n2, count2) = counts
    crit = normal_quantile(alpha)
    assert wilson_bounds(count1, n1, crit) == statsmodels_wilson(count1, n1, alpha)
    assert newcombe_bounds(count1, n1, count2, n2, crit) == statsmodels_newcombe(count1, n1, count2, n2, alpha)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0.0, 1.0) | st.sampled_from([0.0, 0.01, 0.05, 1.0]), min_size=1, max_size=40))
def test_holm_adjusted_p_values_are_statsmodels_ties_included(p_values):
    # statsmodels' full collection after each call (0.2 s here) changes no value; skipping it keeps the
    # 300 comparisons under a second (the next test shows that statsmodels collects and ours does not).
    with mock.patch.object(gc, "collect", lambda *args: 0):
        expected = statsmodels_holm(p_values)
    assert holm_adjusted(p_values) == expected


def test_holm_leaves_the_heap_alone():
    """statsmodels' Holm path ends in gc.collect(); ours must not collect (that pause is what it removes)."""
    collections = []

    def count(phase, info):
        if phase == "start" and info["generation"] == 2:
            collections.append(info)

    gc.callbacks.append(count)
    try:
        statsmodels_holm([0.01, 0.04, 0.2])
        assert collections, "statsmodels no longer collects: evaluation.proportions.holm_adjusted can go"
        collections.clear()
        holm_adjusted([0.01, 0.04, 0.2])
        assert not collections
    finally:
        gc.callbacks.remove(count)


def test_the_inverted_newcombe_p_value_is_the_one_statsmodels_intervals_give():
    """newcombe_inverted_p's root search over α lands on the same float with statsmodels' intervals."""
    counts_a, counts_b = [120, 97, 131, 88, 140], [111, 99, 120, 80, 133]

    def statsmodels_interval(count_a, count_b, n, alpha):
        return statsmodels_newcombe(count_a, n, count_b, n, alpha)

    expected = newcombe_inverted_p(counts_a, counts_b, POOL, interval=statsmodels_interval)
    assert newcombe_inverted_p(counts_a, counts_b, POOL) == expected
    assert 0 < expected < 1
    assert np.isfinite(expected)
