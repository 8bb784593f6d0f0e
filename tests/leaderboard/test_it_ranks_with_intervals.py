"""Rank intervals from confidence intervals (leaderboard.ranking), checked without a database."""

from __future__ import annotations

from leaderboard.ranking import Estimate, rank_intervals, rank_label


def brute_force(estimates: list[Estimate]) -> list[tuple[int, int]]:
    """The definition spelled out pairwise: who is surely better, who could be at least as good."""
    result = []
    for me in estimates:
        surely_better = 0
        possibly_not_worse = 0
        for other in estimates:
            low = other.ci_low if other.ci_low is not None else other.value
            high = other.ci_high if other.ci_high is not None else other.value
            my_low = me.ci_low if me.ci_low is not None else me.value
            my_high = me.ci_high if me.ci_high is not None else me.value
            surely_better += low > my_high
            possibly_not_worse += high >= my_low
        result.append((1 + surely_better, possibly_not_worse))
    return result


def test_it_gives_overlapping_models_a_shared_band():
    estimates = [
        Estimate(0.30, 0.28, 0.32),  # clearly first
        Estimate(0.20, 0.17, 0.23),  # overlaps with the next one
        Estimate(0.19, 0.16, 0.22),
        Estimate(0.05, 0.04, 0.06),  # clearly last
    ]
    assert rank_intervals(estimates) == [(1, 1), (2, 3), (2, 3), (4, 4)]
    assert [rank_label(interval) for interval in rank_intervals(estimates)] == ["1", "2–3", "2–3", "4"]


def test_it_matches_the_pairwise_definition_on_random_intervals():
    import random

    generator = random.Random(7)
    for _ in range(200):
        estimates = []
        for _ in range(generator.randint(1, 9)):
            value = generator.random()
            width = generator.random() * 0.2
            estimates.append(Estimate(value, value - width * generator.random(), value + width * generator.random()))
        intervals = rank_intervals(estimates)
        assert intervals == brute_force(estimates)
        for best, worst in intervals:
            assert 1 <= best <= worst <= len(estimates)


def test_it_ranks_points_by_value_when_no_interval_is_known():
    estimates = [Estimate(0.1), Estimate(0.3), Estimate(0.2), Estimate(0.2)]
    assert rank_intervals(estimates) == [(4, 4), (1, 1), (2, 3), (2, 3)]


def test_it_puts_the_lowest_first_when_lower_is_better():
    # ECE: the smallest error ranks first.
    estimates = [Estimate(0.10, 0.08, 0.12), Estimate(0.02, 0.01, 0.03)]
    assert rank_intervals(estimates, higher_is_better=False) == [(2, 2), (1, 1)]


def test_it_mixes_points_and_intervals():
    # A published point inside a re-run's interval cannot be told apart from it.
    estimates = [Estimate(0.25, 0.20, 0.30), Estimate(0.27)]
    assert rank_intervals(estimates) == [(1, 2), (1, 2)]
