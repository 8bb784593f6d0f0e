"""calibration.stratified_group_folds gives scikit-learn's StratifiedGroupKFold folds exactly, faster.

T4's calibrator is chosen on these folds, so a single sample in another fold could move a published
figure: every comparison here is of the whole assignment, sample by sample.
"""

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.engine.calibration import calibration_folds, scikit_learn_group_folds, stratified_group_folds


def t4_like_pairs(n_items: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Pairs grouped by anchor item as T4's dev split holds them: each item's compatible pair and a
    varying number of incompatible ones, items in a shuffled order."""
    rng = np.random.default_rng(seed)
    negatives = rng.integers(1, 4, size=n_items)
    groups = np.repeat(rng.permutation(n_items * 3)[:n_items], negatives + 1)
    labels = np.concatenate([np.r_[1, np.zeros(k, dtype=np.int64)] for k in negatives])
    return labels.astype(np.int64), groups


def test_it_assigns_t4_like_pair_sets_exactly_as_scikit_learn():
    for n_items, seed in [(150, 0), (151, 7), (1_000, 1), (5_000, 2024)]:
        labels, groups = t4_like_pairs(n_items, seed)
        fast = stratified_group_folds(labels, groups, n_splits=5, seed=seed)
        assert fast is not None
        np.testing.assert_array_equal(fast, scikit_learn_group_folds(labels, groups, n_splits=5, seed=seed))


@settings(max_examples=300, deadline=None)
@given(
    data=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 40)), min_size=6, max_size=200),
    n_splits=st.integers(2, 6),
    seed=st.integers(0, 2**31 - 1),
)
def test_it_assigns_any_labels_and_groups_as_scikit_learn_or_declines(data, n_splits, seed):
    labels = np.array([label for label, _ in data], dtype=np.int64)
    groups = np.array([group for _, group in data], dtype=np.int64)
    fast = stratified_group_folds(labels, groups, n_splits=n_splits, seed=seed)
    if fast is None:
        # Declined: where scikit-learn raises or warns, or with one class only.
        _, counts = np.unique(labels, return_counts=True)
        assert len(counts) < 2 or n_splits > counts.min() or n_splits > len(np.unique(groups))
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        expected = scikit_learn_group_folds(labels, groups, n_splits=n_splits, seed=seed)
    np.testing.assert_array_equal(fast, expected)


def test_calibration_folds_keep_their_answer_where_the_fast_path_declines():
    # Four samples of one class and one of the other: fewer members than folds, so scikit-learn
    # assigns them (with its warning) and calibration_folds returns what it did before.
    labels = np.array([0, 0, 0, 0, 1, 1, 0, 0])
    groups = np.arange(8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        expected = scikit_learn_group_folds(labels, groups, n_splits=5, seed=3)
        np.testing.assert_array_equal(calibration_folds(labels, groups, folds=5, seed=3), expected)
