"""T4's classifier fitted by the engine's own Newton solver (the accelerator's path) equals scikit-learn's.

On an accelerator T4 fits its logistic regression with evaluation/engine/logistic.py in float64 on
the device; on a CPU with scikit-learn's newton-cholesky solver. Both minimise the same strictly
convex objective to the same gradient tolerance, so their probabilities agree far below the 1e-6 at
which figures are compared. Here both run on the CPU (torch's CPU kernels), on nearly separable pairs
(where Newton takes the most steps and the weights grow large) and on pairs with little to find.
The dev split's calibration folds are computed once per pair set and read back from the store.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from evaluation.engine import pairs as pair_sets
from evaluation.engine.calibration import calibration_folds
from evaluation.engine.classification import dev_calibration_folds, evaluate_pair_set, logistic_regression
from evaluation.engine.logistic import NewtonLogisticRegression
from tests.engine.synthetic_pairs import synthetic_pair_features


@pytest.mark.parametrize("noise", [0.05, 0.6, 3.0])
@pytest.mark.parametrize("constant_columns", [False, True])
def test_the_torch_newton_fit_gives_scikit_learns_probabilities(noise, constant_columns):
    features, pairs = synthetic_pair_features(1500, noise)
    if constant_columns:
        # A feature that is zero everywhere and one that is constant up to rounding: StandardScaler leaves
        # both unscaled, and so must the device's standardisation.
        nearly_constant = np.where(np.arange(len(features)) % 7 == 0, np.nextafter(0.1, 1.0), 0.1)
        features = np.hstack([features, np.zeros((len(features), 1)), nearly_constant[:, None]])
    train, test = pairs.split_mask("train"), pairs.split_mask("test")
    reference = make_pipeline(StandardScaler(), logistic_regression(0)).fit(features[train], pairs.labels[train])
    head = NewtonLogisticRegression(C=1.0, tol=1e-10, device="cpu").fit(features[train], pairs.labels[train])
    ours = expit(head.decision_function(features[test]))
    theirs = reference.predict_proba(features[test])[:, 1]
    print(f"noise {noise}: {head.n_iter_} Newton steps, largest probability gap {np.abs(ours - theirs).max():.1e}")
    assert head.n_iter_ >= 2
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)
    np.testing.assert_allclose(head.coef_, reference[-1].coef_[0], rtol=1e-6, atol=1e-8)


def test_stored_calibration_folds_are_the_computed_ones_and_are_read_back(tmp_path):
    features, pairs = synthetic_pair_features(600, 0.6)
    dev = pairs.split_mask("dev")
    computed = calibration_folds(pairs.labels[dev], pairs.anchor_rows[dev], seed=1)
    store = pair_sets.use_store(tmp_path / "pair-sets")
    try:
        first = dev_calibration_folds(pairs, seed=1, content_hash="synthetic")
        again = dev_calibration_folds(pairs, seed=1, content_hash="synthetic")
        assert store is not None and store.stats.built == 1 and store.stats.loaded == 1
        other_seed = dev_calibration_folds(pairs, seed=2, content_hash="synthetic")
    finally:
        pair_sets.use_store(None)
    np.testing.assert_array_equal(first, computed)
    np.testing.assert_array_equal(again, computed)
    assert not np.array_equal(other_seed, computed)
    with_stored = evaluate_pair_set(features, pairs, seed=1, n_resamples=30, dev_folds=again)
    without = evaluate_pair_set(features, pairs, seed=1, n_resamples=30)
    assert with_stored.metrics == without.metrics and with_stored.dev_cv_ece == without.dev_cv_ece
    assert with_stored.chosen == without.chosen
