"""T4 compatibility classification: logistic regression on pair features, calibrated on dev, scored on test.

The classifier (standardised features, L2-regularised logistic regression) is fitted on TRAIN.
Histogram binning and temperature scaling are fitted on DEV predictions and DEV labels only; the
calibrator used for `ece_calibrated` is chosen by cross-validated ECE on DEV. All reported numbers
are on TEST. `evaluate_classifier` takes the test labels only to score predictions after every
prediction is made, so poisoning them cannot change any prediction (tested).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from scipy.special import expit
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from evaluation.engine import bootstrap
from evaluation.engine.calibration import (
    CALIBRATORS,
    TemperatureScaling,
    apply_calibrator,
    calibration_folds,
    choose_calibrator,
    expected_calibration_error,
    fit_calibrator,
    reliability_bins,
)
from evaluation.engine.logistic import NewtonLogisticRegression
from evaluation.engine.metrics import weighted_accuracy, weighted_auroc, weighted_average_precision
from evaluation.engine.pairs import PAIR_SET_FORMAT, SPLITS, PairSet, stored_array
from evaluation.engine.registry import BIASED_ESTIMATE_INTERVAL, METRICS
from evaluation.engine.registry import CLASSIFICATION_METRICS as T4_METRICS

logger = logging.getLogger(__name__)

# The metrics whose plug-in estimate is biased upward (the registry's biased_estimate): the binned ECEs.
ECE_METRICS = tuple(metric for metric in T4_METRICS if METRICS[metric].biased_estimate)
# The name of the interval reported for ECE metrics (see evaluate_classifier), as the manifest, the run
# page, the T4 page, the API and the README state it.
ECE_INTERVAL = BIASED_ESTIMATE_INTERVAL


@dataclass
class ClassifierOutput:
    """Test-split predictions and everything reported about them."""

    probabilities: np.ndarray  # uncalibrated p(compatible) on test
    calibrated: dict[str, np.ndarray]  # calibrator name → calibrated p on test
    chosen: str
    dev_cv_ece: dict[str, float]
    temperature: float
    metrics: dict[str, float] = field(default_factory=dict)
    boot: dict[str, np.ndarray] = field(default_factory=dict)  # metric → bootstrap samples
    reliability: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


# The solver's stopping tolerance on the gradient of the (float64) log loss. Newton steps converge
# quadratically, so the fitted coefficients are exact to far below the 1e-6 at which a figure is
# compared: two machines whose features differ in their last float32 bits get the same
# probabilities to ~1e-9, where a solver stopped at sklearn's default tolerance (1e-4) could end
# anywhere within that tolerance, depending on the path its iterations took.
SOLVER_TOLERANCE = 1e-10


def logistic_regression(seed: int) -> LogisticRegression:
    """L2-regularised logistic regression (C = 1), solved by Newton's method far below reported precision."""
    return LogisticRegression(C=1.0, solver="newton-cholesky", tol=SOLVER_TOLERANCE, max_iter=200, random_state=seed)


def classifier_logits(
    x_train: np.ndarray, y_train: np.ndarray, scored: list[np.ndarray], *, seed: int, device: str = "cpu"
) -> list[np.ndarray]:
    """The logits of the classifier fitted on train (standardised features, logistic regression) for
    each array of `scored`.

    On a CPU the fit is scikit-learn's; on an accelerator the same standardisation and Newton solve run
    in float64 on the device (logistic.py), which at full size is the difference between minutes and
    seconds. Should the device run out of memory, the CPU fit takes over: the figures agree to ~1e-9
    either way.
    """
    if torch.device(device).type != "cpu":
        try:
            head = NewtonLogisticRegression(C=1.0, tol=SOLVER_TOLERANCE, max_iter=200, device=device)
            head.fit(x_train, y_train)
            return [head.decision_function(x) for x in scored]
        except torch.OutOfMemoryError:
            logger.warning("T4's classifier did not fit in %s memory; fitting it on the CPU instead", device)
    classifier = make_pipeline(StandardScaler(), logistic_regression(seed))
    classifier.fit(x_train, y_train)
    return [classifier.decision_function(x) for x in scored]


def fit_predict(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_dev: np.ndarray,
    y_dev: np.ndarray,
    x_test: np.ndarray,
    *,
    seed: int,
    dev_groups: np.ndarray | None = None,
    dev_folds: np.ndarray | None = None,
    device: str = "cpu",
) -> tuple[np.ndarray, dict[str, np.ndarray], str, dict[str, float], float]:
    """Fit on train, calibrate on dev, predict test. Test labels are not an argument.

    `dev_folds`: the calibration folds of dev (calibration.calibration_folds of its labels and groups),
    when they were computed before (T4 reads them from the pair-set store).
    """
    x_train, x_dev, x_test = (np.asarray(x, dtype=np.float64) for x in (x_train, x_dev, x_test))
    z_dev, z_test = classifier_logits(x_train, y_train, [x_dev, x_test], seed=seed, device=device)
    # p = σ(z), as scikit-learn's predict_proba computes it from its decision function.
    p_dev, p_test = expit(z_dev), expit(z_test)
    calibrated = {}
    temperature = 1.0
    for name in CALIBRATORS:
        calibrator = fit_calibrator(name, p_dev, z_dev, y_dev)
        calibrated[name] = apply_calibrator(name, calibrator, p_test, z_test)
        if isinstance(calibrator, TemperatureScaling):
            temperature = calibrator.temperature
    chosen, dev_scores = choose_calibrator(
        p_dev, z_dev, np.asarray(y_dev), groups=dev_groups, seed=seed, fold_of=dev_folds
    )
    return p_test, calibrated, chosen, dev_scores, temperature


def evaluate_classifier(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_dev: np.ndarray,
    y_dev: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    test_groups: np.ndarray,
    *,
    seed: int,
    n_resamples: int = bootstrap.DEFAULT_RESAMPLES,
    dev_groups: np.ndarray | None = None,
    dev_folds: np.ndarray | None = None,
    device: str = "cpu",
) -> ClassifierOutput:
    """Fit, calibrate, and score on test with bootstrap samples resampling test ITEMS (groups).

    The three pairs of an item share its persona, so they are resampled together (cluster bootstrap).
    """
    p_test, calibrated, chosen, dev_scores, temperature = fit_predict(
        x_train, y_train, x_dev, y_dev, x_test, seed=seed, dev_groups=dev_groups, dev_folds=dev_folds, device=device
    )
    output = ClassifierOutput(p_test, calibrated, chosen, dev_scores, temperature)
    y = np.asarray(y_test)
    output.metrics = {
        "auroc": float(weighted_auroc(p_test, y)[0]),
        "auprc": float(weighted_average_precision(p_test, y)[0]),
        "accuracy": float(weighted_accuracy(p_test, y)[0]),
        "ece": expected_calibration_error(p_test, y),
        "ece_hist": expected_calibration_error(calibrated["hist"], y),
        "ece_temp": expected_calibration_error(calibrated["temp"], y),
        "ece_calibrated": expected_calibration_error(calibrated[chosen], y),
    }
    # Cluster bootstrap: a resample draws test items; each pair is weighted by its item's count.
    groups, group_of_pair = np.unique(np.asarray(test_groups), return_inverse=True)
    boot: dict[str, list[np.ndarray]] = {metric: [] for metric in T4_METRICS}
    for counts in bootstrap.resample_counts(len(groups), n_resamples, seed):
        weights = counts[:, group_of_pair]
        boot["auroc"].append(weighted_auroc(p_test, y, weights))
        boot["auprc"].append(weighted_average_precision(p_test, y, weights))
        boot["accuracy"].append(weighted_accuracy(p_test, y, weights))
        boot["ece"].append(expected_calibration_error(p_test, y, weights))
        boot["ece_hist"].append(expected_calibration_error(calibrated["hist"], y, weights))
        boot["ece_temp"].append(expected_calibration_error(calibrated["temp"], y, weights))
        boot["ece_calibrated"].append(expected_calibration_error(calibrated[chosen], y, weights))
    output.boot = {metric: np.concatenate(samples) for metric, samples in boot.items()}
    # The ECE metrics keep the plain point estimate and the plain percentile interval of their resamples
    # (ECE_INTERVAL). A binned ECE is biased upward (|noise| adds up over bins), and its resamples more
    # so, so the interval tends to sit above the estimate (on the validation data, 4 of 180 recorded
    # ECE intervals lie wholly above it). It is not shifted by the bootstrap bias estimate
    # mean(θ*) − θ̂: with 150 test items that estimate is itself noisy, and for a small ECE it is about
    # as large as the ECE, so the shifted bounds (and a bias-corrected point estimate) fall below 0,
    # which no ECE can be (the shifted interval of the tiny test model's Marathi ECE after histogram
    # binning on the demo data was -0.040 to 0.274 around 0.073). Reporting the plain figures, and
    # naming them for what they are, is honest; their upward bias is stated beside them.
    output.reliability = {
        "before": reliability_bins(p_test, y),
        "after": reliability_bins(calibrated[chosen], y),
    }
    return output


def evaluate_pair_set(
    features: np.ndarray,
    pairs: PairSet,
    *,
    seed: int,
    n_resamples: int = bootstrap.DEFAULT_RESAMPLES,
    dev_folds: np.ndarray | None = None,
    device: str = "cpu",
) -> ClassifierOutput:
    """Fit on the pair set's train split, calibrate on dev, report on test (bootstrap over test items).

    `dev_folds`: the dev split's calibration folds when stored (dev_calibration_folds); `device`: where
    the classifier is fitted (classifier_logits)."""
    masks = {split: pairs.split_mask(split) for split in SPLITS}
    return evaluate_classifier(
        features[masks["train"]],
        pairs.labels[masks["train"]],
        features[masks["dev"]],
        pairs.labels[masks["dev"]],
        features[masks["test"]],
        pairs.labels[masks["test"]],
        pairs.anchor_rows[masks["test"]],
        seed=seed,
        n_resamples=n_resamples,
        dev_groups=pairs.anchor_rows[masks["dev"]],
        dev_folds=dev_folds,
        device=device,
    )


def dev_calibration_folds(pairs: PairSet, *, seed: int, content_hash: str) -> np.ndarray:
    """The calibration folds of the pair set's dev split (choose_calibrator), kept in the pair-set store.

    They depend on the pair set and the seed alone, not on the model, and are assigned one item at a
    time in Python (calibration.calibration_folds), under Python's lock, so that twelve languages'
    classifiers could not overlap it. They are computed once per pair set, as the pair set is, and
    read by every later run of the version (fit_predict hands them to choose_calibrator).
    """
    dev = pairs.split_mask("dev")
    key = hashlib.sha256(f"t4-dev-folds\0{PAIR_SET_FORMAT}\0{pairs.digest()}\0{seed}".encode()).hexdigest()
    labels, groups = pairs.labels[dev], pairs.anchor_rows[dev]
    return stored_array("t4-dev-folds", key, content_hash, lambda: calibration_folds(labels, groups, seed=seed))
