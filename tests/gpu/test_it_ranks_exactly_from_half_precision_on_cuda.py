"""On CUDA, gold ranks from float16/bfloat16 score blocks equal those of float32 scores, under the tie rule.

The device computes each block of scores in half precision and re-scores in float32 only the documents
within the error bound of a gold's tie edge (evaluation/engine/retrieval.py). The pools are full of
exact and near ties; block sizes are forced small so that blocks of fewer than 16 queries and a short
tail slice run too (half-precision matrix products take other kernels there). How many blocks fell
back to float32 outright is printed: on ordinary pools none should.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from evaluation.engine.retrieval import TIE_RELATIVE_TOLERANCE, DenseScorer, query_block_size, rank_golds
from tests.engine.test_it_ranks_exactly_from_reduced_precision_scores import (
    bulk_pool,
    float32_pair_scores,
    reference_ranks,
    tied_pool,
)
from tests.gpu.cuda import ON_CUDA

pytestmark = ON_CUDA


class CountingScorer(DenseScorer):
    """The dense scorer, counting its blocks and those it had to score again in float32 outright."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.blocks = 0
        self.fallbacks = 0

    def block(self, start: int, stop: int) -> torch.Tensor:
        self.blocks += 1
        return super().block(start, stop)

    def block_float32(self, start: int, stop: int) -> torch.Tensor:
        self.fallbacks += 1
        return super().block_float32(start, stop)


def float64_rank_bounds(queries: np.ndarray, docs: np.ndarray, gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rule's ranks on exact (float64) scores, as a range: a document within float32 noise (1e-6) of
    a gold's tie edge may fall on either side of it in any float32 computation (the device's or the
    host's, each summing in its own order); ranks outside that range are wrong on any processor."""
    exact = queries.astype(np.float64) @ docs.astype(np.float64).T
    rows = np.arange(len(gold))
    gold_scores = exact[rows, gold]
    edge = gold_scores - TIE_RELATIVE_TOLERANCE * np.maximum(1.0, np.abs(gold_scores))
    exact[rows, gold] = -np.inf
    surely = 1 + (exact >= (edge + 1e-6)[:, None]).sum(axis=1)
    possibly = 1 + (exact >= (edge - 1e-6)[:, None]).sum(axis=1)
    return surely, possibly


@pytest.mark.parametrize("queries_per_block", [7, 13, 120])
@pytest.mark.parametrize("precision", ["float16", "bfloat16"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gold_ranks_on_cuda_equal_those_of_float32_scores(precision, seed, queries_per_block):
    queries, docs, gold = tied_pool(seed)
    group = np.arange(len(docs)) % 3 == 0
    scorer = CountingScorer(queries, docs, device="cuda", precision=precision)
    budget = queries_per_block * len(docs) * 13
    assert query_block_size(len(docs), budget, scorer.score_bytes) == queries_per_block
    reduced = rank_golds(scorer, gold, groups={"g": group}, memory_budget=budget)
    print(f"{precision}, seed {seed}, {queries_per_block} a block: {scorer.fallbacks} of {scorer.blocks} in float32")
    assert (reduced.ranks >= 1).all()
    # The rule's ranks on exact scores, but for documents within float32 noise of an edge; and there,
    # exactly the ranks and group counts of the device's own float32 scores (blocks under 16 queries
    # and the tail block included).
    surely, possibly = float64_rank_bounds(queries, docs, gold)
    ranks = reduced.ranks[:, 0]
    assert ((surely <= ranks) & (ranks <= possibly)).all()
    clear = surely == possibly
    assert (ranks == surely)[clear].all()
    exact = rank_golds(DenseScorer(queries, docs, device="cuda", precision="float32"), gold, groups={"g": group})
    np.testing.assert_array_equal(reduced.ranks[clear], exact.ranks[clear])
    np.testing.assert_array_equal(reduced.group_counts["g"][clear], exact.group_counts["g"][clear])
    same = (reduced.ranks == exact.ranks).mean()
    print(f"  {clear.mean():.1%} of golds clear of float32 noise; equal to float32 ranks for {same:.2%}")
    expected = reference_ranks(float32_pair_scores(queries, docs), gold)
    print(f"  equal to the host's float32 ranks for {(ranks == expected).mean():.2%} of queries")
    # The top 10 by float32 score (exact duplicates may trade places, their scores may not).
    pair_scores = float32_pair_scores(queries, docs)
    expected_top = -np.sort(-pair_scores, axis=1)[:, :10]
    np.testing.assert_allclose(np.take_along_axis(pair_scores, reduced.topk, axis=1), expected_top, atol=1e-6, rtol=0)


def test_a_large_pool_is_ranked_in_float16_without_falling_back():
    queries, docs, gold = bulk_pool(1000)
    scorer = CountingScorer(queries, docs, device="cuda", precision="float16")
    reduced = rank_golds(scorer, gold)
    print(f"50,000-document pool: {scorer.fallbacks} of {scorer.blocks} blocks in float32")
    assert scorer.fallbacks == 0
    surely, possibly = float64_rank_bounds(queries, docs, gold)
    ranks = reduced.ranks[:, 0]
    assert ((surely <= ranks) & (ranks <= possibly)).all()
    assert (ranks == surely)[surely == possibly].all()
    cpu = rank_golds(DenseScorer(queries, docs, device="cpu"), gold)
    print(f"ranks equal to the CPU's float64 scoring for {(cpu.ranks == reduced.ranks).mean():.2%} of queries")
