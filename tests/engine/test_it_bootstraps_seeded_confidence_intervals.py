"""The vectorised bootstrap: seeded, equal to the plain resampling loop, intervals around the estimate."""

import numpy as np

from evaluation.engine import bootstrap


def test_it_gives_the_same_resampled_means_as_a_plain_loop_over_drawn_indices():
    rng = np.random.default_rng(3)
    values = rng.random((3, 40))
    means = bootstrap.bootstrap_means(values, n_resamples=250, seed=11)
    drawn = np.concatenate(list(bootstrap.resample_indices(40, 250, seed=11)))
    expected = np.stack([[row[indices].mean() for indices in drawn] for row in values])
    np.testing.assert_allclose(means, expected, rtol=1e-12)


def test_it_is_seeded_and_its_interval_contains_the_point_estimate():
    rng = np.random.default_rng(5)
    hits = (rng.random(150) < 0.3).astype(float)
    first = bootstrap.percentile_interval(bootstrap.bootstrap_means(hits, seed=1)[0])
    again = bootstrap.percentile_interval(bootstrap.bootstrap_means(hits, seed=1)[0])
    other = bootstrap.percentile_interval(bootstrap.bootstrap_means(hits, seed=2)[0])
    assert first == again
    assert first != other
    low, high = first
    assert low < hits.mean() < high
    # About ±1.96 standard errors for a proportion of 150 draws.
    standard_error = np.sqrt(hits.mean() * (1 - hits.mean()) / 150)
    assert abs((high - low) / 2 - 1.96 * standard_error) < 0.3 * standard_error


def test_it_uses_the_same_resamples_for_every_row_so_averages_are_paired():
    rng = np.random.default_rng(9)
    a = rng.random(50)
    b = 1.0 - a  # perfectly anti-correlated: their average is constant in every paired resample
    means = bootstrap.bootstrap_means(np.stack([a, b]), n_resamples=200, seed=4)
    np.testing.assert_allclose(means.mean(axis=0), 0.5, atol=1e-12)
