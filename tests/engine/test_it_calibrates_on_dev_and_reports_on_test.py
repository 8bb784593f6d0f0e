"""ECE, reliability bins and the T4 calibrators on constructed inputs with hand-known answers."""

import numpy as np
import pytest

from evaluation.engine.bootstrap import percentile_interval, resample_indices
from evaluation.engine.calibration import (
    HistogramBinning,
    TemperatureScaling,
    calibration_folds,
    choose_calibrator,
    expected_calibration_error,
    reliability_bins,
)
from evaluation.engine.classification import evaluate_classifier


def test_it_computes_the_standard_ece_by_hand():
    # Ten predictions at 0.9 with all labels 0: one bin, |0 − 0.9| = 0.9.
    assert expected_calibration_error(np.full(10, 0.9), np.zeros(10)) == pytest.approx(0.9)
    # Perfectly calibrated bins give 0: p = 0.2 with 1 positive in 5, p = 0.8 with 4 in 5.
    p = np.r_[np.full(5, 0.2), np.full(5, 0.8)]
    y = np.r_[1, 0, 0, 0, 0, 1, 1, 1, 1, 0]
    assert expected_calibration_error(p, y) == pytest.approx(0.0)
    # Two bins of 4 and 6 samples: (4/10)|0.25 − 0.1| + (6/10)|0.5 − 0.7| = 0.06 + 0.12.
    p = np.r_[np.full(4, 0.1), np.full(6, 0.7)]
    y = np.r_[1, 0, 0, 0, 1, 1, 1, 0, 0, 0]
    assert expected_calibration_error(p, y) == pytest.approx(0.18)
    # Not the reference's defect (mean p vs accuracy of thresholded labels, 0.5 here).
    good = np.r_[np.full(50, 0.99), np.full(50, 0.01)]
    assert expected_calibration_error(good, np.r_[np.ones(50), np.zeros(50)]) == pytest.approx(0.01)


def test_it_reports_fifteen_equal_width_reliability_bins():
    bins = reliability_bins(np.array([0.0, 0.05, 0.5, 1.0]), np.array([0, 1, 1, 1]))
    assert len(bins) == 15
    assert bins[0]["count"] == 2 and bins[0]["mean_p"] == pytest.approx(0.025) and bins[0]["mean_y"] == 0.5
    assert bins[7]["count"] == 1 and bins[7]["lower"] == pytest.approx(7 / 15)
    assert bins[14]["count"] == 1  # 1.0 falls in the last, closed bin
    assert bins[3] == {"lower": 0.2, "upper": pytest.approx(4 / 15), "count": 0, "mean_p": None, "mean_y": None}


def test_it_fits_histogram_binning_and_temperature_scaling():
    dev_p = np.r_[np.full(10, 0.9), np.full(10, 0.1)]
    dev_y = np.r_[np.ones(6), np.zeros(4), np.ones(3), np.zeros(7)]
    binning = HistogramBinning().fit(dev_p, dev_y)
    np.testing.assert_allclose(binning.predict(np.array([0.91, 0.12, 0.5])), [0.6, 0.3, 0.5])

    # Logits twice too confident: the fitted temperature undoes it.
    rng = np.random.default_rng(0)
    true_logits = rng.normal(0, 2, 20000)
    labels = rng.random(20000) < 1 / (1 + np.exp(-true_logits))
    scaling = TemperatureScaling().fit(2 * true_logits, labels)
    assert scaling.temperature == pytest.approx(2.0, rel=0.05)


def test_it_never_lets_test_labels_change_a_prediction():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((300, 4))
    y = (x[:, 0] + 0.5 * rng.standard_normal(300) > 0).astype(int)
    groups = np.arange(60)
    x_train, y_train, x_dev, y_dev = x[:180], y[:180], x[180:240], y[180:240]
    x_test, y_test = x[240:], y[240:]

    honest = evaluate_classifier(x_train, y_train, x_dev, y_dev, x_test, y_test, groups, seed=0, n_resamples=50)
    poisoned = evaluate_classifier(x_train, y_train, x_dev, y_dev, x_test, 1 - y_test, groups, seed=0, n_resamples=50)

    np.testing.assert_array_equal(honest.probabilities, poisoned.probabilities)
    for name in ("hist", "temp"):
        np.testing.assert_array_equal(honest.calibrated[name], poisoned.calibrated[name])
    assert honest.chosen == poisoned.chosen and honest.temperature == poisoned.temperature
    # The labels only enter the scores: flipping them flips AUROC.
    assert honest.metrics["auroc"] == pytest.approx(1 - poisoned.metrics["auroc"])
    assert honest.metrics["auroc"] > 0.8


def test_it_chooses_the_calibrator_by_cross_validation_on_dev():
    rng = np.random.default_rng(2)
    probabilities = rng.random(3000)
    logits = np.log(probabilities) - np.log1p(-probabilities)
    # Non-monotonic miscalibration (the middle band is mostly positive): no single temperature can fix
    # it, binning can, and the held-out folds of dev show it.
    true_rate = np.where((probabilities > 0.4) & (probabilities < 0.6), 0.9, probabilities)
    labels = (rng.random(3000) < true_rate).astype(int)
    chosen, scores = choose_calibrator(probabilities, logits, labels, seed=0)
    assert chosen == "hist"
    assert scores["hist"] < scores["temp"] - 0.02
    assert choose_calibrator(probabilities, logits, labels, seed=0) == (chosen, scores)


def test_it_keeps_the_pairs_of_one_item_in_one_calibration_fold():
    rng = np.random.default_rng(3)
    # Three pairs per item (one compatible, two not), as in the frozen pair set.
    items = np.repeat(np.arange(200), 3)
    labels = np.tile([1, 0, 0], 200)
    folds = calibration_folds(labels, items, folds=5, seed=0)
    assert set(folds.tolist()) == {0, 1, 2, 3, 4}
    for item in range(200):
        assert len(set(folds[items == item].tolist())) == 1
    # Still stratified: every fold holds about a third positives.
    for fold in range(5):
        assert abs(labels[folds == fold].mean() - 1 / 3) < 0.05
    probabilities = rng.random(600)
    logits = np.log(probabilities) - np.log1p(-probabilities)
    chosen, scores = choose_calibrator(probabilities, logits, labels, groups=items, seed=0)
    assert chosen in scores and all(np.isfinite(list(scores.values())))


def test_histogram_binning_replaces_temperature_scaling_only_by_a_clear_margin():
    from evaluation.engine.calibration import CALIBRATOR_MARGIN, preferred_calibrator

    assert preferred_calibrator({"hist": 0.100, "temp": 0.100}) == "temp"
    # A last-bit (or any sub-margin) advantage does not switch the calibrator.
    assert preferred_calibrator({"hist": 0.100 - 1e-12, "temp": 0.100}) == "temp"
    assert preferred_calibrator({"hist": 0.100 - CALIBRATOR_MARGIN / 2, "temp": 0.100}) == "temp"
    assert preferred_calibrator({"hist": 0.100 - 2 * CALIBRATOR_MARGIN, "temp": 0.100}) == "hist"
    assert preferred_calibrator({"hist": float("nan"), "temp": 0.3}) == "temp"
    assert preferred_calibrator({"hist": 0.01, "temp": float("nan")}) == "hist"


def test_it_reports_the_plain_percentile_interval_around_the_plain_ece():
    # Uninformative features and 30% positives everywhere: the classifier predicts about 0.3 for every
    # pair and its test ECE is small, while the resampled ECEs add up |noise| over the bins, so the
    # bootstrap bias estimate is as large as the ECE and an interval shifted by it would reach below 0.
    rng = np.random.default_rng(0)
    x = rng.standard_normal((420, 2))
    train_dev = rng.permutation(np.r_[np.ones(90), np.zeros(210)])
    test = rng.permutation(np.r_[np.ones(36), np.zeros(84)])
    y = np.r_[train_dev, test].astype(int)
    groups = np.repeat(np.arange(40), 3)  # 40 test items of three pairs each, resampled together

    output = evaluate_classifier(
        x[:240], y[:240], x[240:300], y[240:300], x[300:], y[300:], groups, seed=5, n_resamples=200
    )

    # The resamples recomputed independently: gather each drawn item's three pairs and score them.
    pairs_of_item = np.arange(120).reshape(40, 3)
    y_test = y[300:]
    for metric, p in (("ece", output.probabilities), ("ece_calibrated", output.calibrated[output.chosen])):
        plain = np.array(
            [
                expected_calibration_error(p[pairs_of_item[draw].ravel()], y_test[pairs_of_item[draw].ravel()])
                for draws in resample_indices(40, 200, 5)
                for draw in draws
            ]
        )
        np.testing.assert_allclose(output.boot[metric], plain, atol=1e-12)
        low, high = percentile_interval(output.boot[metric])
        assert 0 <= low < high
    # The case this guards: the bootstrap bias estimate of the uncalibrated ECE exceeds the plain lower
    # bound, so shifting the resamples by it would have reported a negative bound for an ECE.
    low, _ = percentile_interval(output.boot["ece"])
    assert output.boot["ece"].mean() - output.metrics["ece"] > low > 0
