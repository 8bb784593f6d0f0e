"""Rank intervals from every model's rank in every bootstrap replicate (leaderboard.ranking), without a database."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.stats import rankdata

from leaderboard.ranking import (
    MIXED,
    PAIRED,
    PER_MODEL,
    SIMULTANEOUS,
    UNPAIRED,
    Estimate,
    pairing,
    rank_intervals,
    rank_label,
)
from leaderboard.significance import tied_ranks_by_replicate
from tests.factories import make_dataset, make_run


def ranks_by_hand(replicates: np.ndarray) -> list[tuple[int, int]]:
    """The definition spelled out with loops: rank per replicate (ties: best and worst), then the 95% spread."""
    models, count = replicates.shape
    best = np.zeros((models, count), dtype=int)
    worst = np.zeros((models, count), dtype=int)
    for r in range(count):
        for m in range(models):
            best[m, r] = 1 + sum(replicates[o, r] > replicates[m, r] for o in range(models))
            worst[m, r] = sum(replicates[o, r] >= replicates[m, r] for o in range(models))
    result = []
    for m in range(models):
        low = sorted(best[m])[int(np.floor(0.025 * (count - 1)))]
        high = sorted(worst[m])[int(np.ceil(0.975 * (count - 1)))]
        result.append((int(low), int(high)))
    return result


def test_it_separates_a_paired_difference_that_overlapping_intervals_would_hide():
    rng = np.random.default_rng(1)
    shared = rng.normal(0.30, 0.02, size=1000)  # what both models share in each replicate (the items drawn)
    a = shared + 0.004 + rng.normal(0, 0.001, size=1000)
    b = shared
    estimates = [Estimate(0.304, *np.percentile(a, [2.5, 97.5]), a), Estimate(0.300, *np.percentile(b, [2.5, 97.5]), b)]
    # Their marginal 95% intervals overlap widely...
    assert estimates[0].ci_low < estimates[1].ci_high
    # ...but in (nearly) every replicate A is above B: the ranks are told apart.
    assert rank_intervals(estimates) == [(1, 1), (2, 2)]
    assert pairing(estimates) == PAIRED


def test_it_matches_the_definition_on_random_replicates():
    rng = np.random.default_rng(7)
    for _ in range(30):
        models = int(rng.integers(1, 7))
        replicates = rng.normal(rng.random((models, 1)), 0.05, size=(models, 200)).round(2)
        estimates = [Estimate(float(row.mean()), samples=row) for row in replicates]
        intervals = rank_intervals(estimates)
        assert intervals == ranks_by_hand(replicates)
        for best, worst in intervals:
            assert 1 <= best <= worst <= models


@settings(max_examples=200, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 9), st.integers(1, 12)),
        # Few distinct values, so that most replicates hold ties; NaN as a missing score.
        elements=st.sampled_from([0.0, 0.25, 0.5, 0.5000000000000001, 1.0, -0.0, np.nan]),
    )
)
def test_one_sort_per_replicate_gives_scipys_tied_ranks(scores):
    best, worst = tied_ranks_by_replicate(scores)
    np.testing.assert_array_equal(best, rankdata(scores.T, method="min", axis=1))
    np.testing.assert_array_equal(worst, rankdata(scores.T, method="max", axis=1))


@settings(max_examples=200, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 9), st.integers(1, 12)),
        elements=st.floats(-1, 1, allow_nan=False),
        unique=True,
    ),
    st.integers(0, 3),
)
def test_replicates_without_ties_and_with_some_give_scipys_ranks(scores, tied_models):
    """Distinct scores take the untied path; copying one model's scores onto others makes ties again."""
    for candidate in (scores, np.vstack([scores, *[scores[:1]] * tied_models])):
        best, worst = tied_ranks_by_replicate(candidate)
        np.testing.assert_array_equal(best, rankdata(candidate.T, method="min", axis=1))
        np.testing.assert_array_equal(worst, rankdata(candidate.T, method="max", axis=1))


def test_it_ranks_points_by_value_when_no_interval_is_known():
    estimates = [Estimate(0.1), Estimate(0.3), Estimate(0.2), Estimate(0.2)]
    assert rank_intervals(estimates) == [(4, 4), (1, 1), (2, 3), (2, 3)]
    assert [rank_label(interval) for interval in rank_intervals(estimates)] == ["4", "1", "2–3", "2–3"]
    assert rank_label(None) == "—"


def test_it_puts_the_lowest_first_when_lower_is_better():
    # ECE: the smallest error ranks first.
    estimates = [Estimate(0.10, 0.08, 0.12), Estimate(0.02, 0.01, 0.03)]
    assert rank_intervals(estimates, higher_is_better=False) == [(2, 2), (1, 1)]


def test_it_draws_published_scores_independently_and_says_so():
    # A published point inside a re-run's interval cannot be told apart from it.
    rerun = np.random.default_rng(3).normal(0.25, 0.025, size=1000)
    estimates = [Estimate(0.25, 0.20, 0.30, rerun), Estimate(0.26, 0.21, 0.31)]
    assert rank_intervals(estimates) == [(1, 2), (1, 2)]
    assert pairing(estimates) == MIXED
    assert pairing([Estimate(0.26, 0.21, 0.31)]) == UNPAIRED
    # Far apart, independent draws still separate them.
    assert rank_intervals([Estimate(0.5, 0.48, 0.52), Estimate(0.2, 0.18, 0.22)]) == [(1, 1), (2, 2)]


def test_simultaneous_rank_intervals_contain_the_per_model_ones_and_say_so():
    rng = np.random.default_rng(6)
    base = rng.normal(0, 0.01, size=1000)
    estimates = [
        Estimate(0.30 + 0.004 * k, samples=0.30 + 0.004 * k + base + rng.normal(0, 0.004, 1000)) for k in range(8)
    ]
    per_model = rank_intervals(estimates)
    together = rank_intervals(estimates, simultaneous=True)
    assert all(b[0] <= a[0] and a[1] <= b[1] for a, b in zip(per_model, together, strict=True))
    assert together != per_model
    assert "Bonferroni" in SIMULTANEOUS and "per model" in PER_MODEL


@pytest.mark.django_db
def test_the_overview_and_api_say_which_kind_of_rank_interval_they_show(client):
    dataset = make_dataset()
    for index in range(3):
        make_run(dataset, f"org/model-{index}", level=0.3 + index / 100)
    page = client.get("/", {"dataset": dataset.pk}).content.decode()
    assert "These intervals are per model" in page and "Show simultaneous intervals" in page
    page = client.get("/", {"dataset": dataset.pk, "ranks": "simultaneous"}).content.decode()
    assert "These intervals are simultaneous" in page and "Show per-model intervals" in page
    body = json.loads(client.get("/api/leaderboard/", {"dataset": dataset.pk, "ranks": "simultaneous"}).content)
    assert body["rank_intervals"] == SIMULTANEOUS
