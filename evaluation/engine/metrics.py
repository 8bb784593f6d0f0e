"""Retrieval and classification metrics, all as fractions in [0, 1].

Retrieval metrics are computed per query from the full-pool rank of the gold document (see
retrieval.py), so that the bootstrap can resample queries: Recall@k is the share of queries whose gold
is ranked k or better, MRR@10 the mean of 1/rank over queries whose gold is in the top 10 (0 otherwise).

The classification metrics accept a matrix of sample weights (one row per bootstrap resample, weights =
how often each sample was drawn) so that a thousand resamples cost a few array operations. With
weights of one they equal scikit-learn's roc_auc_score and average_precision_score.
"""

from __future__ import annotations

import numpy as np

from evaluation.engine.registry import RETRIEVAL_METRICS

RECALL_CUTOFFS = (1, 5, 10)
MRR_CUTOFF = 10


def per_query_retrieval(ranks: np.ndarray) -> dict[str, np.ndarray]:
    """Per-query values of each retrieval metric from 1-based gold ranks, shape (n,) each."""
    ranks = np.asarray(ranks)
    values = {f"recall@{k}": (ranks <= k).astype(np.float64) for k in RECALL_CUTOFFS}
    values[f"mrr@{MRR_CUTOFF}"] = np.where(ranks <= MRR_CUTOFF, 1.0 / ranks, 0.0)
    assert tuple(values) == RETRIEVAL_METRICS, "the registry's retrieval metrics and these cutoffs disagree"
    return values


def _as_weights(weights: np.ndarray | None, n: int) -> np.ndarray:
    if weights is None:
        return np.ones((1, n))
    return np.atleast_2d(np.asarray(weights, dtype=np.float64))


# Classifier scores closer than this are tied (AUROC, average precision). A classifier's outputs for
# pairs with mathematically equal features (e.g. two texts a model maps to the same embedding) differ
# by float32 noise of the embeddings, ~1e-7, in an order that depends on the processor's kernels;
# 2^-18 ≈ 3.8e-6 ties them on every processor while staying below any difference that matters.
SCORE_TIE_TOLERANCE = 2.0**-18


def _tie_groups(sorted_scores: np.ndarray) -> np.ndarray:
    """Start index of each run of tied scores in a sorted array (neighbours within SCORE_TIE_TOLERANCE)."""
    if len(sorted_scores) == 0:
        return np.empty(0, dtype=np.int64)
    gaps = np.abs(np.diff(sorted_scores))
    # Equal scores (infinities included, whose difference is NaN) tie as well.
    tied = (gaps <= SCORE_TIE_TOLERANCE) | (sorted_scores[1:] == sorted_scores[:-1])
    return np.flatnonzero(np.r_[True, ~tied])


def weighted_auroc(scores: np.ndarray, labels: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Area under the ROC curve for each weight row (ties, within SCORE_TIE_TOLERANCE, count one half,
    as in Mann–Whitney U)."""
    scores, labels = np.asarray(scores, dtype=np.float64), np.asarray(labels).astype(bool)
    w = _as_weights(weights, len(scores))
    order = np.argsort(scores, kind="mergesort")
    starts = _tie_groups(scores[order])
    w_sorted, y_sorted = w[:, order], labels[order]
    positives = np.add.reduceat(w_sorted * y_sorted, starts, axis=1)
    negatives = np.add.reduceat(w_sorted * ~y_sorted, starts, axis=1)
    negatives_below = np.cumsum(negatives, axis=1) - negatives
    numerator = (positives * (negatives_below + 0.5 * negatives)).sum(axis=1)
    denominator = positives.sum(axis=1) * negatives.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / denominator, np.nan)


def weighted_average_precision(scores: np.ndarray, labels: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Average precision (area under the precision–recall step curve, scikit-learn's definition)."""
    scores, labels = np.asarray(scores, dtype=np.float64), np.asarray(labels).astype(bool)
    w = _as_weights(weights, len(scores))
    order = np.argsort(-scores, kind="mergesort")
    starts = _tie_groups(scores[order])
    w_sorted, y_sorted = w[:, order], labels[order]
    true_pos = np.cumsum(np.add.reduceat(w_sorted * y_sorted, starts, axis=1), axis=1)
    false_pos = np.cumsum(np.add.reduceat(w_sorted * ~y_sorted, starts, axis=1), axis=1)
    total_pos = true_pos[:, -1:]
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(true_pos + false_pos > 0, true_pos / (true_pos + false_pos), 0.0)
        recall = true_pos / total_pos
        recall_steps = np.diff(np.concatenate([np.zeros((len(w), 1)), recall], axis=1), axis=1)
        result = (recall_steps * precision).sum(axis=1)
    return np.where(total_pos[:, 0] > 0, result, np.nan)


def weighted_accuracy(
    probabilities: np.ndarray, labels: np.ndarray, weights: np.ndarray | None = None, threshold: float = 0.5
) -> np.ndarray:
    """Share of samples whose thresholded prediction (p ≥ threshold) equals the label."""
    probabilities, labels = np.asarray(probabilities), np.asarray(labels).astype(bool)
    w = _as_weights(weights, len(probabilities))
    correct = (probabilities >= threshold) == labels
    accuracy: np.ndarray = (w * correct).sum(axis=1) / w.sum(axis=1)
    return accuracy
