"""Blocked full-pool ranking and retrieval metrics vs brute force and vs ranx (no database)."""

import numpy as np
import pytest
import torch

from evaluation.engine.metrics import per_query_retrieval
from evaluation.engine.retrieval import BlockScorer, DenseScorer, rank_golds


class MatrixScorer(BlockScorer):
    """Scores given outright, to check ranking on hand-made ties and NaNs."""

    def __init__(self, scores: np.ndarray) -> None:
        self.scores = torch.as_tensor(np.asarray(scores, dtype=np.float32))
        self.n_queries, self.n_docs = self.scores.shape

    def block(self, start: int, stop: int) -> torch.Tensor:
        return self.scores[start:stop].clone()


def normalised(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def brute_force_ranks(scores: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """1 + the number of OTHER documents scoring at least as high as the gold (pessimistic ties)."""
    ranks = []
    for row, gold_index in enumerate(gold):
        others = [scores[row, j] for j in range(scores.shape[1]) if j != gold_index]
        ranks.append(1 + sum(score >= scores[row, gold_index] for score in others))
    return np.array(ranks)


def test_it_ranks_every_gold_in_the_full_pool_like_brute_force_whatever_the_block_size():
    rng = np.random.default_rng(1)
    queries, docs = normalised(rng, 97, 16), normalised(rng, 211, 16)
    gold = rng.integers(0, 211, size=97)
    scores = queries @ docs.T
    expected = brute_force_ranks(scores, gold)

    whole = rank_golds(DenseScorer(queries, docs), gold, k=10)
    # A budget of a few rows forces many query blocks; the answer must not change.
    blocked = rank_golds(DenseScorer(queries, docs), gold, k=10, memory_budget=211 * 13 * 3)

    np.testing.assert_array_equal(whole.ranks[:, 0], expected)
    np.testing.assert_array_equal(blocked.ranks, whole.ranks)
    np.testing.assert_array_equal(whole.topk, np.argsort(-scores, axis=1, kind="stable")[:, :10])
    assert expected.max() > 10, "the test data must put some golds outside the top 10"


def test_it_breaks_ties_pessimistically_and_ranks_nan_scores_last():
    scores = np.array(
        [
            [0.5, 0.5, 0.5, 0.1],  # gold 0 tied with two others → rank 3
            [0.9, 0.2, 0.2, 0.2],  # gold 1 tied with two others below one → rank 4
            [np.nan, 0.3, 0.1, 0.2],  # a NaN gold is the worst document → rank 4
            [0.1, np.nan, 0.7, 0.2],  # a NaN elsewhere never outranks the gold → rank 1
        ]
    )
    result = rank_golds(MatrixScorer(scores), np.array([0, 1, 0, 2]))
    np.testing.assert_array_equal(result.ranks[:, 0], [3, 4, 4, 1])


def test_it_counts_several_golds_and_document_groups():
    scores = np.array([[0.9, 0.1, 0.8, 0.85, 0.2], [0.1, 0.2, 0.3, 0.4, 0.5]])
    english = np.array([False, False, True, True, True])
    result = rank_golds(MatrixScorer(scores), np.array([[0, 2], [1, 4]]), groups={"english": english})
    np.testing.assert_array_equal(result.ranks, [[1, 3], [4, 1]])
    # Documents of the group scoring at least as high as each gold (the gold itself included).
    np.testing.assert_array_equal(result.group_counts["english"], [[0, 2], [3, 1]])


# ranx compiles its metrics with numba on first use, which takes half a minute here.
@pytest.mark.slow
def test_it_computes_recall_and_mrr_from_ranks_like_ranx():
    from ranx import Qrels, Run, evaluate

    rng = np.random.default_rng(7)
    queries, docs = normalised(rng, 60, 8), normalised(rng, 80, 8)
    gold = rng.permutation(80)[:60]
    scores = queries @ docs.T
    result = rank_golds(DenseScorer(queries, docs), gold, k=10)
    ours = {metric: values.mean() for metric, values in per_query_retrieval(result.ranks[:, 0]).items()}

    qrels = Qrels({f"q{i}": {f"d{gold[i]}": 1} for i in range(60)})
    run = Run({f"q{i}": {f"d{j}": float(scores[i, j]) for j in range(80)} for i in range(60)})
    theirs = evaluate(qrels, run, ["recall@1", "recall@5", "recall@10", "mrr@10"])

    for metric in ("recall@1", "recall@5", "recall@10", "mrr@10"):
        assert ours[metric] == pytest.approx(theirs[metric], abs=1e-9), metric
    assert 0 < ours["recall@10"] < 1, "the data must exercise both hits and misses"
