"""Scores computed in float16 or bfloat16 give exactly the gold ranks of float32 scores, under the tie rule.

The accelerator path computes every block in half precision; documents near the gold's tie edge
(gold − τ) are re-scored in float32. Emulated here on the CPU, on a pool full of exact and near ties,
for full pools (T1–T3) and for T5's per-query pools.
"""

import numpy as np
import pytest
import torch

from evaluation.engine.retrieval import (
    TIE_RELATIVE_TOLERANCE,
    DenseScorer,
    rank_golds,
    reduced_precision_bound,
)
from evaluation.engine.units import PoolScorer


def tied_pool(seed: int, n_queries: int = 120, n_docs: int = 400, dim: int = 48):
    rng = np.random.default_rng(seed)
    docs = rng.normal(size=(n_docs, dim)).astype(np.float32)
    # Exact duplicates and near-duplicates (1e-6 apart: far below half precision's resolution).
    docs[1::7] = docs[0::7][: len(docs[1::7])]
    docs[2::7] = docs[0::7][: len(docs[2::7])] + rng.normal(scale=1e-6, size=(len(docs[2::7]), dim))
    # Documents whose cosines differ from a gold's by ~1e-4: beyond the tie tolerance (3.8e-6), but
    # within half precision's rounding, which makes them tie or trade places with the gold.
    docs[3::7] = docs[0::7][: len(docs[3::7])] + rng.normal(scale=1e-4, size=(len(docs[3::7]), dim))
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    gold = rng.integers(0, n_docs, size=n_queries)
    # Queries close to their gold document, so that many documents score close to the gold.
    queries = docs[gold] + rng.normal(scale=0.3, size=(n_queries, dim)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    return queries.astype(np.float32), docs.astype(np.float32), gold


def reference_ranks(scores: np.ndarray, gold: np.ndarray, group: np.ndarray | None = None):
    """The rule written out plainly: 1 + #(other documents ≥ gold − 2^-18·max(1, |gold|))."""
    rows = np.arange(len(gold))
    gold_scores = scores[rows, gold].astype(np.float64)
    edge = gold_scores - TIE_RELATIVE_TOLERANCE * np.maximum(1.0, np.abs(gold_scores))
    at_least = scores >= edge[:, None]
    at_least[rows, gold] = False
    ranks = 1 + at_least.sum(axis=1)
    if group is None:
        return ranks
    return ranks, (at_least & group).sum(axis=1) + group[gold]


def float32_pair_scores(queries, docs):
    """float32 dot products, each summed over its own pair (another summation order than a matrix product)."""
    return (torch.as_tensor(queries)[:, None, :] * torch.as_tensor(docs)[None, :, :]).sum(dim=-1).numpy()


@pytest.mark.parametrize("precision", ["float16", "bfloat16"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gold_ranks_equal_those_of_float32_scores(precision, seed):
    queries, docs, gold = tied_pool(seed)
    group = np.arange(len(docs)) % 3 == 0
    exact = float32_pair_scores(queries, docs)
    ranks, group_counts = reference_ranks(exact, gold, group)
    reduced_scorer = DenseScorer(queries, docs, precision=precision)
    assert reduced_scorer.error_bound > 0
    reduced = rank_golds(reduced_scorer, gold, groups={"g": group}, memory_budget=40 * len(docs) * 13)
    np.testing.assert_array_equal(reduced.ranks[:, 0], ranks)
    np.testing.assert_array_equal(reduced.group_counts["g"][:, 0], group_counts)
    np.testing.assert_allclose(reduced.gold_scores[:, 0], exact[np.arange(len(gold)), gold], atol=1e-6, rtol=0)
    # The top 10 by float32 score (tied documents may trade places, their scores may not).
    expected_top = -np.sort(-exact, axis=1)[:, :10]
    np.testing.assert_allclose(np.take_along_axis(exact, reduced.topk, axis=1), expected_top, atol=1e-6, rtol=0)
    # The same ranks as the float32 engine (a matrix product on this CPU).
    float32 = rank_golds(DenseScorer(queries, docs, precision="float32"), gold, groups={"g": group})
    np.testing.assert_array_equal(reduced.ranks, float32.ranks)
    np.testing.assert_array_equal(reduced.group_counts["g"], float32.group_counts["g"])
    # Half precision alone gets ranks wrong on this pool: the re-scoring is what makes them exact.
    low = getattr(torch, precision)
    plain = (torch.as_tensor(queries).to(low) @ torch.as_tensor(docs).to(low).T).float().numpy()
    assert (reference_ranks(plain, gold) != ranks).any()


def test_the_bound_holds_for_every_score_of_the_pool():
    queries, docs, _ = tied_pool(6)
    exact = float32_pair_scores(queries, docs).astype(np.float64)
    for precision in ("float16", "bfloat16"):
        scorer = DenseScorer(queries, docs, precision=precision)
        error = np.abs(scorer.block(0, len(queries)).float().numpy() - exact).max()
        assert error <= scorer.error_bound
        # The bound is the formula's for unit vectors, not a loose constant.
        assert scorer.error_bound == pytest.approx(reduced_precision_bound(scorer.dtype, 48, 1.0, 1.0), rel=1e-5)


def test_a_nan_gold_is_ranked_last_as_in_float32():
    queries, docs, gold = tied_pool(3, n_queries=10, n_docs=50)
    docs[gold[0]] = np.nan
    reference = rank_golds(DenseScorer(queries, docs, precision="float32"), gold)
    reduced = rank_golds(DenseScorer(queries, docs, precision="float16"), gold)
    np.testing.assert_array_equal(reduced.ranks, reference.ranks)
    assert reduced.ranks[0, 0] == len(docs)


def test_a_pool_of_identical_vectors_falls_back_to_float32_blocks():
    queries, docs, gold = tied_pool(5, n_queries=20, n_docs=2000)
    docs[:] = docs[0]  # a model that maps every text to the same vector: every document ties
    reference = rank_golds(DenseScorer(queries, docs, precision="float32"), gold)
    reduced = rank_golds(DenseScorer(queries, docs, precision="float16"), gold)
    np.testing.assert_array_equal(reduced.ranks, reference.ranks)
    assert (reduced.ranks == len(docs)).all()


class PoolOnlyScorer(DenseScorer):
    """The dense scorer, refusing full blocks: T5 must score only each query's own pool."""

    def block(self, start: int, stop: int) -> torch.Tensor:
        raise AssertionError("a full queries × documents block was computed for a pool of 21")

    block_float32 = block


@pytest.mark.parametrize("precision", ["float16", "bfloat16"])
def test_pools_are_ranked_from_their_own_documents_with_the_error_bound(precision):
    queries, docs, gold = tied_pool(7, n_queries=150, n_docs=300)
    rng = np.random.default_rng(7)
    # Each query's pool: its gold first, then 20 other documents, near-duplicates of the gold included.
    pools = np.stack([np.r_[g, rng.choice(np.setdiff1d(np.arange(300), [g]), 20, replace=False)] for g in gold])
    exact = float32_pair_scores(queries, docs)
    pool_scores = np.take_along_axis(exact, pools, axis=1)
    expected = reference_ranks(pool_scores, np.zeros(len(gold), dtype=np.int64))

    scorer = PoolScorer(PoolOnlyScorer(queries, docs, precision=precision), pools)
    assert scorer.error_bound > 0
    reduced = rank_golds(scorer, np.zeros(len(gold), dtype=np.int64))
    np.testing.assert_array_equal(reduced.ranks[:, 0], expected)
    float32 = rank_golds(PoolScorer(PoolOnlyScorer(queries, docs, precision="float32"), pools), np.zeros(len(gold)))
    np.testing.assert_array_equal(float32.ranks, reduced.ranks)
    # Raw half-precision pool scores, ranked without the bound, would break ties against the gold.
    low = getattr(torch, precision)
    plain = (torch.as_tensor(queries).to(low)[:, None, :] * torch.as_tensor(docs).to(low)[pools]).sum(-1).float()
    assert (reference_ranks(plain.numpy(), np.zeros(len(gold), dtype=np.int64)) != expected).any()


class CountingScorer(DenseScorer):
    """The dense scorer, counting the blocks it had to score again in float32."""

    fallbacks = 0

    def block_float32(self, start: int, stop: int) -> torch.Tensor:
        self.fallbacks += 1
        return super().block_float32(start, stop)


def bulk_pool(n_queries: int, n_docs: int = 50_000, dim: int = 384):
    """Embeddings that share a common direction, as real ones do (cosines around 0.4), and queries of a
    weak model that score their golds inside that bulk: thousands of documents lie within the float16
    bound of each gold in a pool of 50,000."""
    rng = np.random.default_rng(8)
    common = rng.normal(size=dim)
    common /= np.linalg.norm(common)
    noise = rng.normal(size=(n_docs, dim))
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    docs = (0.6 * common + 0.8 * noise).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    gold = rng.integers(0, n_docs, size=n_queries)
    queries = 0.6 * common + 0.8 * noise[gold] * 0.05 + 0.8 * rng.normal(size=(n_queries, dim)) / np.sqrt(dim)
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    return queries, docs, gold


def test_a_large_pool_with_golds_in_its_bulk_is_not_sent_back_to_float32():
    queries, docs, gold = bulk_pool(48)
    n_docs = len(docs)
    scorer = CountingScorer(queries, docs, precision="float16")
    edge_band = np.abs((queries @ docs.T) - (queries * docs[gold]).sum(axis=1, keepdims=True)) <= scorer.error_bound
    assert edge_band.sum(axis=1).mean() > 1024, "the test pool must put thousands of documents near each gold"
    reduced = rank_golds(scorer, gold, memory_budget=48 * n_docs * 13)
    assert scorer.fallbacks == 0
    # The ranks are the rule's on exact (float64) scores, up to documents within float32 noise (1e-6) of
    # a gold's tie edge: with thousands of documents per 1e-3 around each gold, two float32
    # computations (a matrix product, a pair's sum) can put such a document on either side.
    exact = queries.astype(np.float64) @ docs.astype(np.float64).T
    rows = np.arange(len(gold))
    gold_scores = exact[rows, gold]
    edge = gold_scores - TIE_RELATIVE_TOLERANCE * np.maximum(1.0, np.abs(gold_scores))
    others = exact.copy()
    others[rows, gold] = -np.inf
    surely = 1 + (others >= (edge + 1e-6)[:, None]).sum(axis=1)
    possibly = 1 + (others >= (edge - 1e-6)[:, None]).sum(axis=1)
    assert ((surely <= reduced.ranks[:, 0]) & (reduced.ranks[:, 0] <= possibly)).all()
    assert (surely == possibly).mean() > 0.5, "most golds have no document within the noise of their edge"
    assert (reduced.ranks[:, 0] == surely)[surely == possibly].all()
