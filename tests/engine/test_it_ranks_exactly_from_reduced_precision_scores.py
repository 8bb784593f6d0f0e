"""Scores computed in float16 or bfloat16 give exactly the gold ranks of float32 scores.

The accelerator path computes every block in half precision; documents near the gold's score are
re-scored in float32. Emulated here on the CPU, on a pool full of exact and near ties.
"""

import numpy as np
import pytest
import torch

from evaluation.engine.retrieval import DenseScorer, rank_golds


def tied_pool(seed: int, n_queries: int = 120, n_docs: int = 400, dim: int = 48):
    rng = np.random.default_rng(seed)
    docs = rng.normal(size=(n_docs, dim)).astype(np.float32)
    # Exact duplicates and near-duplicates (1e-6 apart: far below half precision's resolution).
    docs[1::7] = docs[0::7][: len(docs[1::7])]
    docs[2::7] = docs[0::7][: len(docs[2::7])] + rng.normal(scale=1e-6, size=(len(docs[2::7]), dim))
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    gold = rng.integers(0, n_docs, size=n_queries)
    # Queries close to their gold document, so that many documents score close to the gold.
    queries = docs[gold] + rng.normal(scale=0.3, size=(n_queries, dim)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    return queries.astype(np.float32), docs.astype(np.float32), gold


def float32_ranks(queries, docs, gold, group):
    """Pessimistic-tie ranks from float32 dot products, each summed over its own pair."""
    scores = (torch.as_tensor(queries)[:, None, :] * torch.as_tensor(docs)[None, :, :]).sum(dim=-1)
    at_least = scores >= scores.gather(1, torch.as_tensor(gold)[:, None])
    return at_least.sum(dim=1).numpy(), (at_least & torch.as_tensor(group)).sum(dim=1).numpy(), scores.numpy()


@pytest.mark.parametrize("precision", ["float16", "bfloat16"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gold_ranks_equal_those_of_float32_scores(precision, seed):
    queries, docs, gold = tied_pool(seed)
    group = np.arange(len(docs)) % 3 == 0
    ranks, group_counts, exact = float32_ranks(queries, docs, gold, group)
    reduced_scorer = DenseScorer(queries, docs, precision=precision)
    assert reduced_scorer.error_bound > 0
    reduced = rank_golds(reduced_scorer, gold, groups={"g": group}, memory_budget=40 * len(docs) * 13)
    np.testing.assert_array_equal(reduced.ranks[:, 0], ranks)
    np.testing.assert_array_equal(reduced.group_counts["g"][:, 0], group_counts)
    np.testing.assert_array_equal(reduced.gold_scores[:, 0], exact[np.arange(len(gold)), gold])
    # The top 10 by float32 score (tied documents may trade places, their scores may not).
    expected_top = -np.sort(-exact, axis=1)[:, :10]
    np.testing.assert_array_equal(np.take_along_axis(exact, reduced.topk, axis=1), expected_top)
    # Half precision alone gets ranks wrong on this pool: the re-scoring is what makes them exact.
    low = getattr(torch, precision)
    plain = (torch.as_tensor(queries).to(low) @ torch.as_tensor(docs).to(low).T).float()
    naive = (plain >= plain.gather(1, torch.as_tensor(gold)[:, None])).sum(dim=1).numpy()
    assert (naive != ranks).any()


def test_ranks_agree_with_the_float32_engine_where_no_two_documents_are_closer_than_float32_rounding():
    queries, docs, gold = tied_pool(4)
    # Only exact duplicates are kept as ties: near-duplicates 1e-6 apart score within float32's own
    # rounding, where two float32 computations (a matrix product, a pair's sum) may already disagree.
    docs[2::7] = docs[3::7][: len(docs[2::7])]
    reference = rank_golds(DenseScorer(queries, docs, precision="float32"), gold)
    reduced = rank_golds(DenseScorer(queries, docs, precision="float16"), gold)
    np.testing.assert_array_equal(reduced.ranks, reference.ranks)


def test_a_nan_gold_is_ranked_last_as_in_float32():
    queries, docs, gold = tied_pool(3, n_queries=10, n_docs=50)
    docs[gold[0]] = np.nan
    reference = rank_golds(DenseScorer(queries, docs, precision="float32"), gold)
    reduced = rank_golds(DenseScorer(queries, docs, precision="float16"), gold)
    np.testing.assert_array_equal(reduced.ranks, reference.ranks)
    assert reduced.ranks[0, 0] == len(docs)


def test_a_pool_of_identical_vectors_falls_back_to_float32_blocks():
    queries, docs, gold = tied_pool(5, n_queries=20, n_docs=600)
    docs[:] = docs[0]  # a model that maps every text to the same vector: every document ties
    reference = rank_golds(DenseScorer(queries, docs, precision="float32"), gold)
    reduced = rank_golds(DenseScorer(queries, docs, precision="float16"), gold)
    np.testing.assert_array_equal(reduced.ranks, reference.ranks)
    assert (reduced.ranks == len(docs)).all()
