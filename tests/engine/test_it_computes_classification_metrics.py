"""Weighted AUROC / average precision / accuracy vs scikit-learn (no database)."""

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, average_precision_score, roc_auc_score

from evaluation.engine.metrics import weighted_accuracy, weighted_auroc, weighted_average_precision


@pytest.mark.parametrize("rounding", [None, 1])
def test_it_matches_scikit_learn_with_and_without_ties_and_with_weights(rounding):
    rng = np.random.default_rng(0)
    labels = rng.random(300) < 0.35
    scores = np.clip(0.3 * labels + rng.random(300) * 0.7, 0, 1)
    if rounding is not None:
        scores = np.round(scores, rounding)  # many ties
    weights = rng.integers(0, 4, size=(5, 300)).astype(float)

    for row in weights:
        assert weighted_auroc(scores, labels, row[None])[0] == pytest.approx(
            roc_auc_score(labels, scores, sample_weight=row)
        )
        assert weighted_average_precision(scores, labels, row[None])[0] == pytest.approx(
            average_precision_score(labels, scores, sample_weight=row)
        )
        assert weighted_accuracy(scores, labels, row[None])[0] == pytest.approx(
            accuracy_score(labels, scores >= 0.5, sample_weight=row)
        )
    assert weighted_auroc(scores, labels)[0] == pytest.approx(roc_auc_score(labels, scores))


def test_it_gives_nan_when_a_resample_has_a_single_class():
    labels = np.array([1, 1, 0, 0])
    weights = np.array([[1.0, 1.0, 0.0, 0.0]])
    assert np.isnan(weighted_auroc([0.9, 0.8, 0.1, 0.2], labels, weights)[0])


def test_scores_tied_up_to_float32_noise_stay_tied_on_every_processor():
    rng = np.random.default_rng(4)
    # Thirty groups of pairs with mathematically equal scores (equal features), both labels in each.
    scores = np.repeat(rng.uniform(0.05, 0.95, size=30), 6)
    labels = np.tile([1, 0, 1, 0, 0, 1], 30)
    exact = weighted_auroc(scores, labels)[0], weighted_average_precision(scores, labels)[0]
    for seed in range(5):
        # The noise another processor's kernels leave on a classifier's outputs.
        noisy = scores + np.random.default_rng(seed).normal(scale=2e-7, size=len(scores))
        assert weighted_auroc(noisy, labels)[0] == pytest.approx(exact[0], abs=1e-12)
        assert weighted_average_precision(noisy, labels)[0] == pytest.approx(exact[1], abs=1e-12)
