"""`bootstrap.percentile_intervals` gives each sample the interval `percentile_interval` gives it, to the
last bit, however the samples are made: of any length, tied, with NaN or infinities, at any confidence."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from evaluation.engine import bootstrap

values = st.floats(min_value=-1.0, max_value=2.0, allow_nan=False, allow_infinity=False, width=64)
awkward = st.one_of(values, st.sampled_from([0.0, -0.0, 0.5, 1.0, 5e-324, np.nan, np.inf, -np.inf]))
samples = st.lists(
    st.one_of(
        arrays(np.float64, st.integers(1, 60), elements=values),
        # Few distinct values: ties at and around the order statistics the interval reads.
        arrays(np.float64, st.integers(1, 60), elements=st.sampled_from([0.0, 0.25, 1 / 3, 0.5, 1.0])),
        arrays(np.float64, st.integers(1, 12), elements=awkward),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(samples, st.sampled_from([bootstrap.CONFIDENCE, 0.5, 0.9, 0.99, 0.999]))
def test_each_interval_is_percentile_intervals_to_the_last_bit(found, confidence):
    together = bootstrap.percentile_intervals(found, confidence)
    one_by_one = [bootstrap.percentile_interval(sample, confidence) for sample in found]
    assert len(together) == len(one_by_one)
    for got, expected in zip(together, one_by_one, strict=True):
        assert np.asarray(got).tobytes() == np.asarray(expected).tobytes(), (got, expected)


def test_a_boards_overall_replicates_get_the_same_intervals():
    """1,000 runs' worth of bootstrap replicates (1,000 resamples each, as the engine keeps them), some
    rounded to a few values as small pools' averages are, and two runs with another resample count."""
    generator = np.random.default_rng(7)
    found = [generator.normal(0.5, 0.02, 1000) for _ in range(900)]
    found += [np.round(generator.normal(0.5, 0.02, 1000) * 150) / 150 for _ in range(98)]
    found += [generator.random(200), generator.random(2000)]
    together = bootstrap.percentile_intervals(found)
    assert together == [bootstrap.percentile_interval(sample) for sample in found]
    assert bootstrap.percentile_intervals([]) == []
