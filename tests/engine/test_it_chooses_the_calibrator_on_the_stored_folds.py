"""choose_calibrator scores the calibrators on the folds it is given (T4's stored dev folds)."""

import numpy as np

from evaluation.engine.calibration import calibration_folds, choose_calibrator


def dev_split(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    items = np.repeat(np.arange(120), 3)
    labels = np.tile([1, 0, 0], 120)
    logits = rng.normal(loc=2.0 * labels - 1.0, scale=1.5)
    return 1 / (1 + np.exp(-logits)), logits, labels, items


def test_it_uses_the_folds_it_is_given_instead_of_assigning_them_again():
    probabilities, logits, labels, items = dev_split(0)
    grouped = calibration_folds(labels, items, seed=0)
    ungrouped = calibration_folds(labels, None, seed=0)
    assert not np.array_equal(grouped, ungrouped)

    by_items = choose_calibrator(probabilities, logits, labels, groups=items, seed=0)
    # No groups given, but the grouped folds: the scores are those of the grouped folds, so the
    # stored folds are the ones used (assigning folds again would give ungrouped ones here).
    given = choose_calibrator(probabilities, logits, labels, groups=None, seed=0, fold_of=grouped)
    assigned_without_groups = choose_calibrator(probabilities, logits, labels, groups=None, seed=0)
    assert given == by_items
    assert given[1] != assigned_without_groups[1]
