"""A perfectly calibrated classifier's ECE on the same test set, as the reference beside a model's (issue 33)."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse

from leaderboard.calibration_reference import binned_ece, calibrated_reference
from tests.factories import make_dataset, make_run
from tests.leaderboard.html import tables


def test_a_truly_calibrated_classifier_on_ninety_pairs_scores_well_above_zero_and_inside_the_band():
    rng = np.random.default_rng(4)
    probabilities = rng.beta(1.2, 2.5, size=90)
    edges = np.linspace(0, 1, 16)
    which = np.clip(np.digitize(probabilities, edges) - 1, 0, 14)
    inside = 0
    for trial in range(200):
        labels = rng.random(90) < probabilities
        bins = [
            (int((which == b).sum()), float(probabilities[which == b].mean()), float(labels[which == b].mean()))
            for b in range(15)
            if (which == b).any()
        ]
        reference = calibrated_reference(bins, seed=trial)
        assert reference is not None and reference.pairs == 90
        # The bias: a perfectly calibrated classifier's binned ECE on 90 pairs is several points, not 0.
        assert reference.low > 0.02
        inside += reference.low <= binned_ece(bins) <= reference.high
    # Its own ECE falls inside the band about 95% of the time.
    assert inside >= 180


def test_a_miscalibrated_classifier_falls_above_the_band():
    bins = [(30, 0.1, 0.5), (30, 0.5, 0.9), (30, 0.9, 0.4)]
    reference = calibrated_reference(bins)
    assert reference is not None and reference.ece is not None
    assert reference.ece > reference.high and not reference.within


def test_no_bins_no_reference():
    assert calibrated_reference([]) is None and binned_ece([]) is None


@pytest.mark.django_db
def test_the_t4_page_shows_the_reference_beside_the_models_ece(client):
    dataset = make_dataset()
    run = make_run(dataset, "org/alpha", with_bins=True)
    page = client.get(reverse("leaderboard:task", args=["t4"]), {"dataset": dataset.pk}).content.decode()
    table = tables(page)["ece-reference"]
    bins = run.details["t4"]["reliability"]["hin"]["before"]
    reference = calibrated_reference([(b["count"], b["mean_p"], b["mean_y"]) for b in bins if b["count"]])
    [row] = [row for row in table[1:] if row[0] == "Hindi"]
    assert row[1] == str(reference.pairs) and f"[{100 * reference.low:.1f}, {100 * reference.high:.1f}]" in row[3]
    assert "perfectly calibrated classifier" in page
