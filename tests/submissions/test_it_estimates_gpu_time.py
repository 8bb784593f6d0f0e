"""The GPU-time estimate of queue_catalogue: texts × parameters × a rate measured here, else a stated assumption."""

from __future__ import annotations

import pytest

from evaluation.gpu_estimate import ASSUMED_RATE, Observation, duration, gpu_seconds, measured_rate


def test_without_a_finished_gpu_run_it_says_the_rate_is_assumed():
    rate = measured_rate([])
    assert rate.seconds_per_text_parameter == ASSUMED_RATE == 2 * 64 / 50e12
    assert rate.basis.startswith("assumed: 64 tokens a text")


def test_it_takes_the_median_rate_of_the_finished_runs_and_ignores_empty_ones():
    runs = [
        Observation(encode_seconds=100, texts_encoded=1000, parameters=100_000_000),  # 1e-9
        Observation(encode_seconds=300, texts_encoded=1000, parameters=100_000_000),  # 3e-9
        Observation(encode_seconds=200, texts_encoded=1000, parameters=100_000_000),  # 2e-9
        Observation(encode_seconds=50, texts_encoded=0, parameters=100_000_000),
    ]
    rate = measured_rate(runs)
    assert rate.seconds_per_text_parameter == pytest.approx(2e-9)
    assert rate.basis == "measured: median of 3 finished GPU run(s) here"


def test_the_estimate_is_proportional_to_texts_and_parameters():
    rate = measured_rate([Observation(60, 1000, 1_000_000)])
    assert gpu_seconds(2000, 3_000_000, rate) == pytest.approx(360)
    assert gpu_seconds(2000, None, rate) is None


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(None, "unknown (model size unknown)"), (12, "under a minute"), (840, "about 14 min"), (9000, "about 2.5 h")],
)
def test_it_says_durations_in_words(seconds, said):
    assert duration(seconds) == said
