"""Blocked full-pool ranking and retrieval metrics vs brute force and vs ranx (no database)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.engine import retrieval
from evaluation.engine.metrics import per_query_retrieval
from evaluation.engine.retrieval import TIE_RELATIVE_TOLERANCE, BlockScorer, DenseScorer, rank_golds, top_k_indices


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


# ranx's metrics are plain Python functions that numba compiles on first use, which took 22 of the
# 24 s of this check. The check is of the metrics' definitions, not of numba's compilation, so ranx
# runs them uncompiled, in a process of its own (numba reads NUMBA_DISABLE_JIT when it is imported):
# the same figures in under 2 s, so the check is in the fast tier again.
RANX = """
import json, sys
from ranx import Qrels, Run, evaluate
qrels, run, metrics = json.load(sys.stdin)
print(json.dumps({name: float(value) for name, value in evaluate(Qrels(qrels), Run(run), metrics).items()}))
"""


def ranx_evaluate(qrels: dict, run: dict, metrics: list[str]) -> dict[str, float]:
    environment = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    answer = subprocess.run(
        [sys.executable, "-c", RANX],
        input=json.dumps([qrels, run, metrics]),
        env=environment,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return json.loads(answer.stdout)


def test_it_computes_recall_and_mrr_from_ranks_like_ranx():
    rng = np.random.default_rng(7)
    queries, docs = normalised(rng, 60, 8), normalised(rng, 80, 8)
    gold = rng.permutation(80)[:60]
    scores = queries @ docs.T
    result = rank_golds(DenseScorer(queries, docs), gold, k=10)
    ours = {metric: values.mean() for metric, values in per_query_retrieval(result.ranks[:, 0]).items()}

    qrels = {f"q{i}": {f"d{gold[i]}": 1} for i in range(60)}
    run = {f"q{i}": {f"d{j}": float(scores[i, j]) for j in range(80)} for i in range(60)}
    theirs = ranx_evaluate(qrels, run, ["recall@1", "recall@5", "recall@10", "mrr@10"])

    for metric in ("recall@1", "recall@5", "recall@10", "mrr@10"):
        assert ours[metric] == pytest.approx(theirs[metric], abs=1e-9), metric
    assert 0 < ours["recall@10"] < 1, "the data must exercise both hits and misses"


def tied_scores(seed: int, n_queries: int = 200, n_docs: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """float32 scores with adversarial ties: every gold has documents with exactly its score."""
    rng = np.random.default_rng(seed)
    scores = rng.uniform(-1, 1, size=(n_queries, n_docs)).astype(np.float32)
    gold = rng.integers(0, n_docs, size=n_queries)
    rows = np.arange(n_queries)
    for offset in (1, 2, 3):
        scores[rows, (gold + offset * 17) % n_docs] = scores[rows, gold]
    return scores, gold


def perturbed(scores: np.ndarray, ulps: np.ndarray) -> np.ndarray:
    """Each score moved by its own number of units in the last place (what another kernel's sum does)."""
    result = scores.copy()
    for _ in range(int(np.abs(ulps).max())):
        step = np.abs(ulps) > 0
        result = np.where(step, np.nextafter(result, np.where(ulps > 0, np.inf, -np.inf).astype(np.float32)), result)
        ulps = ulps - np.sign(ulps)
    return result.astype(np.float32)


def test_no_rank_moves_when_every_score_moves_by_up_to_four_ulps():
    scores, gold = tied_scores(11)
    before = rank_golds(MatrixScorer(scores), gold).ranks
    assert (before[:, 0] >= 4).all(), "every gold ties with three documents, so it ranks at least 4th"
    rng = np.random.default_rng(12)
    for _ in range(5):
        noisy = perturbed(scores, rng.integers(-4, 5, size=scores.shape))
        np.testing.assert_array_equal(rank_golds(MatrixScorer(noisy), gold).ranks, before)
    # Without the tolerance, the same noise breaks the ties one way or the other.
    noisy = perturbed(scores, rng.integers(-4, 5, size=scores.shape))
    plain = (noisy >= noisy[np.arange(len(gold)), gold][:, None]).sum(axis=1)
    assert (plain != before[:, 0]).any()


def test_ranks_do_not_depend_on_the_block_size_or_the_summation_order():
    rng = np.random.default_rng(3)
    docs = normalised(rng, 257, 384)
    # Near-duplicates, 1e-7 apart: their float32 scores fall either side of each other depending on
    # the summation order, far inside the tie tolerance.
    docs[1::5] = docs[0::5][: len(docs[1::5])] + 1e-7 * rng.standard_normal((len(docs[1::5]), 384))
    gold = rng.integers(0, 257, size=90)
    queries = docs[gold] + 0.2 * normalised(rng, 90, 384)
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    # The reference: float64 products, the rule written out (1 + others within τ of the gold or above).
    exact = queries.astype(np.float64) @ docs.astype(np.float64).T
    gold_scores = exact[np.arange(90), gold]
    at_least = exact >= (gold_scores - TIE_RELATIVE_TOLERANCE * np.maximum(1.0, np.abs(gold_scores)))[:, None]
    at_least[np.arange(90), gold] = False
    expected = 1 + at_least.sum(axis=1)
    for rows in (1, 7, 64, 90):
        # Each block size makes the BLAS pick another kernel and summation order for the float32 sums.
        result = rank_golds(DenseScorer(queries, docs), gold, memory_budget=rows * 257 * 13)
        np.testing.assert_array_equal(result.ranks[:, 0], expected, err_msg=f"{rows} queries per block")


class TwoSumsScorer(DenseScorer):
    """float16 blocks whose float32 re-scoring comes out one ulp lower after the first call (the golds'
    scores): the same score computed twice, in two summation orders, as a GPU's kernels may."""

    calls = 0

    def exact_pairs(self, query_rows: torch.Tensor, doc_rows: torch.Tensor) -> torch.Tensor:
        sums = (self.queries[query_rows] * self.docs[doc_rows]).sum(dim=1)
        self.calls += 1
        if self.calls > 1:
            return torch.nextafter(sums, torch.full_like(sums, -np.inf))
        return sums


def test_the_gold_counts_itself_exactly_once_so_no_rank_is_zero():
    rng = np.random.default_rng(5)
    docs = normalised(rng, 120, 64)
    gold = rng.integers(0, 120, size=400)
    queries = docs[gold] + 0.05 * normalised(rng, 400, 64)
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    result = rank_golds(TwoSumsScorer(queries, docs, precision="float16"), gold)
    reference = rank_golds(DenseScorer(queries, docs, precision="float32"), gold)
    assert result.ranks.min() >= 1
    np.testing.assert_array_equal(result.ranks, reference.ranks)
    # So MRR is finite and every query's reciprocal rank is at most 1.
    values = per_query_retrieval(result.ranks[:, 0])
    assert np.isfinite(values["mrr@10"]).all() and values["mrr@10"].max() <= 1.0


def test_the_top_k_lists_documents_with_equal_scores_in_index_order():
    # Duplicate documents score exactly alike; which comes first must not be left to a kernel.
    scores, _ = tied_scores(5, n_queries=40, n_docs=120)
    scores[:, 60:] = scores[:, :60]
    result = rank_golds(MatrixScorer(scores), np.zeros(40, dtype=np.int64), k=10)
    expected = np.argsort(-scores, axis=1, kind="stable")[:, :10]
    np.testing.assert_array_equal(result.topk, expected)
    assert (np.diff(np.sort(scores, axis=1)[:, ::-1][:, :11], axis=1) == 0).any(), "the top 10 must hold ties"


@pytest.mark.parametrize("rows_at_once", [1, 3, 1 << 22])
def test_the_top_k_of_rows_full_of_ties_is_the_stable_order_a_few_rows_at_a_time(monkeypatch, rows_at_once):
    # BM25 finding no shared word scores a whole row 0; a degenerate model gives many texts one vector;
    # a pool leaves the rest of a row at -inf. Such rows are sorted whole, in bounded groups of rows.
    monkeypatch.setattr(retrieval, "TIED_ROWS_ELEMENTS", rows_at_once * 50)
    generator = np.random.default_rng(3)
    scores = generator.integers(0, 6, size=(12, 50)).astype(np.float32) / 5
    scores[0] = 0.0
    scores[1, 3:] = -np.inf
    scores[2] = generator.normal(size=50).astype(np.float32)  # no ties at all
    scores[3, :] = 0.5
    scores[3, 40] = 0.9
    expected = np.argsort(-scores, axis=1, kind="stable")[:, :10]
    np.testing.assert_array_equal(top_k_indices(torch.from_numpy(scores), 10).numpy(), expected)


@settings(max_examples=200, deadline=None)
@given(
    rows=st.integers(1, 12),
    cols=st.integers(1, 60),
    levels=st.integers(1, 6),
    k=st.integers(0, 12),
    seed=st.integers(0, 2**31 - 1),
    with_minus_infinity=st.booleans(),
)
def test_top_k_is_the_stable_descending_order_on_tie_heavy_rows(rows, cols, levels, k, seed, with_minus_infinity):
    # Few distinct values, so that ties at the k-th place (found from the (k+1)-th best score) are
    # common; −inf stands for NaN scores; k up to the whole pool.
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, levels, size=(rows, cols)).astype(np.float32)
    if with_minus_infinity:
        scores[rng.random((rows, cols)) < 0.3] = -np.inf
    k = min(k, cols)
    expected = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    np.testing.assert_array_equal(top_k_indices(torch.from_numpy(scores), k).numpy(), expected)
