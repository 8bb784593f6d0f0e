"""Full-pool retrieval by blocked score matrices: the rank of every gold document, plus the top k.

A `BlockScorer` produces the scores of a block of queries against every document of the pool; the
dense encoders (matrix product of normalised embeddings) and the lexical baselines (sparse
products) both implement it, so the ranking code below is shared by every kind of model.

Ranks are over the FULL pool, not only the top k: the rank of a gold document is the number of
documents whose score is greater than or equal to the gold score (the gold itself included). Ties
are therefore broken pessimistically: a gold document tied with another document is ranked below
it. NaN scores are treated as minus infinity, so a model that emits NaN gets the worst ranks.

Memory is bounded by processing queries in blocks sized so that one block of scores (plus the
boolean comparison masks derived from it) fits in `memory_budget` bytes; nothing of size
queries × documents is ever held at once. On an accelerator the budget is a share of its free memory
(torch.cuda.mem_get_info), so a 50,000-document pool is ranked in a few large blocks; on a CPU it stays
at 256 MiB, which keeps every float32 score bit for bit what it was.

Reduced precision: on an accelerator the dense scores are computed in float16, but the gold ranks stay
exactly those of float32 scores. A half-precision score differs from the float32 score by at most
`error_bound` (rounding of unit vectors to 11 significant bits, plus the rounded output), so documents
scoring above gold + bound certainly rank above the gold, those below gold − bound certainly do not,
and only the few in between are re-scored in float32 (as are the gold scores and the top k).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import torch

DEFAULT_MEMORY_BUDGET = 256 * 1024**2
# Bytes held per score while a block is processed: the float32 score, one boolean comparison mask
# and the top-k working copy.
BYTES_PER_SCORE = 4 + 1 + 8


class BlockScorer(ABC):
    """Scores of queries against all documents of one pool, one block of queries at a time."""

    n_queries: int
    n_docs: int
    device: torch.device = torch.device("cpu")
    # Largest possible |block score − float32 score|; 0 when block() returns float32 scores.
    error_bound: float = 0.0

    def exact_pairs(self, query_rows: torch.Tensor, doc_rows: torch.Tensor) -> torch.Tensor:
        """float32 scores of the pairs (query_rows[i], doc_rows[i]); needed only when error_bound > 0."""
        raise NotImplementedError

    @abstractmethod
    def block(self, start: int, stop: int) -> torch.Tensor:
        """Scores of queries[start:stop] against every document: float32, shape (stop-start, n_docs)."""


# Relative rounding of one product term in each reduced precision: both factors rounded (2u) plus the
# rounded output (u), with u = 2^-11 (float16) or 2^-8 (bfloat16), doubled for accumulation and margin.
ROUNDING_BOUNDS = {torch.float16: 2.0**-8, torch.bfloat16: 2.0**-5}
# Documents per query (on average over a block) that may be re-scored in float32 before the whole block
# is scored in float32 instead.
MAX_RESCORED_PER_QUERY = 256


def default_score_precision(device: str | torch.device) -> str:
    return "float16" if torch.device(device).type == "cuda" else "float32"


class DenseScorer(BlockScorer):
    """Inner products of L2-normalised embeddings (cosine similarity).

    precision "float16" or "bfloat16" computes the blocks in that type (accelerators: several times
    the float32 rate) with `error_bound` set, so rank_golds re-scores the uncertain pairs in float32.
    """

    def __init__(
        self,
        queries: np.ndarray,
        docs: np.ndarray,
        device: str | torch.device = "cpu",
        precision: str | None = None,
    ) -> None:
        self.device = torch.device(device)
        self.queries = torch.as_tensor(np.ascontiguousarray(queries, dtype=np.float32)).to(self.device)
        # The documents stay on the device for all query blocks; the product uses their transpose as a
        # view (BLAS reads it transposed), so no second copy of the pool is made.
        self.docs = torch.as_tensor(np.ascontiguousarray(docs, dtype=np.float32)).to(self.device)
        self.n_queries, self.n_docs = len(queries), len(docs)
        self.precision = precision or default_score_precision(self.device)
        self.dtype = getattr(torch, self.precision)
        if self.dtype != torch.float32:
            self.low_queries, self.low_docs = self.queries.to(self.dtype), self.docs.to(self.dtype)
            norms = [float(matrix.norm(dim=1).max()) if len(matrix) else 0.0 for matrix in (self.queries, self.docs)]
            self.error_bound = ROUNDING_BOUNDS[self.dtype] * max(1.0, norms[0] * norms[1])

    def block(self, start: int, stop: int) -> torch.Tensor:
        if self.dtype != torch.float32:
            return self.low_queries[start:stop] @ self.low_docs.T
        return self.queries[start:stop] @ self.docs.T

    def block_float32(self, start: int, stop: int) -> torch.Tensor:
        return self.queries[start:stop] @ self.docs.T

    def exact_pairs(self, query_rows: torch.Tensor, doc_rows: torch.Tensor) -> torch.Tensor:
        # In slices, so that the gathered vectors take at most ~256 MB whatever the number of pairs.
        step = max(1, (1 << 26) // max(1, self.queries.shape[1]))
        parts = [
            (self.queries[query_rows[low : low + step]] * self.docs[doc_rows[low : low + step]]).sum(dim=1)
            for low in range(0, len(query_rows), step)
        ]
        return torch.cat(parts) if parts else torch.empty(0, device=self.device)


class SparseScorer(BlockScorer):
    """Products of sparse query rows with a sparse document-term matrix (BM25, TF-IDF)."""

    def __init__(self, queries: sp.spmatrix, docs_by_term: sp.spmatrix, device: str | torch.device = "cpu") -> None:
        self.device = torch.device(device)
        self.queries = sp.csr_matrix(queries, dtype=np.float32)
        # Stored transposed (terms × documents) so that a block is one CSR × CSC product.
        self.terms_by_doc = sp.csc_matrix(docs_by_term, dtype=np.float32).T.tocsr()
        self.n_queries, self.n_docs = self.queries.shape[0], docs_by_term.shape[0]

    def block(self, start: int, stop: int) -> torch.Tensor:
        scores = (self.queries[start:stop] @ self.terms_by_doc).toarray().astype(np.float32, copy=False)
        return torch.from_numpy(scores).to(self.device)


@dataclass
class RankResult:
    """Per-query results of one retrieval: gold ranks, gold scores, top-k documents, group counts."""

    ranks: np.ndarray  # (n_queries, n_golds) int64, 1 = best
    gold_scores: np.ndarray  # (n_queries, n_golds) float32
    topk: np.ndarray  # (n_queries, k) int64 document indices, best first
    group_counts: dict[str, np.ndarray] = field(default_factory=dict)  # (n_queries, n_golds) each


def query_block_size(n_docs: int, memory_budget: int = DEFAULT_MEMORY_BUDGET) -> int:
    return max(1, memory_budget // max(1, n_docs * BYTES_PER_SCORE))


def device_memory_budget(device: str | torch.device) -> int:
    """Bytes one block of scores may take: a quarter of an accelerator's free memory, 256 MiB on a CPU."""
    device = torch.device(device)
    if device.type == "cuda" and torch.cuda.is_available():
        free, _ = torch.cuda.mem_get_info(device)
        return max(DEFAULT_MEMORY_BUDGET, free // 4)
    return DEFAULT_MEMORY_BUDGET


def rank_golds(
    scorer: BlockScorer,
    gold: np.ndarray,
    *,
    k: int = 10,
    groups: dict[str, np.ndarray] | None = None,
    memory_budget: int | None = None,
    on_block: Callable[[int, int], None] | None = None,
) -> RankResult:
    """Rank the gold document(s) of every query in the full pool.

    gold: (n_queries,) or (n_queries, n_golds) document indices.
    groups: optional boolean masks over documents; for each, the number of documents of that group
        scoring at least as high as each gold is returned (e.g. English documents in a mixed pool).
    on_block(done, total) is called after every block of queries (for progress reports).
    memory_budget: bytes per block of scores (default: sized to the scorer's device).
    """
    gold = np.asarray(gold, dtype=np.int64)
    if gold.ndim == 1:
        gold = gold[:, None]
    n, m = scorer.n_queries, scorer.n_docs
    if gold.shape[0] != n:
        raise ValueError(f"{gold.shape[0]} gold rows for {n} queries")
    if n and (gold.min() < 0 or gold.max() >= m):
        raise ValueError("gold document index outside the pool")
    k = min(k, m)
    n_golds = gold.shape[1]
    ranks = np.empty((n, n_golds), dtype=np.int64)
    gold_scores = np.empty((n, n_golds), dtype=np.float32)
    topk = np.empty((n, k), dtype=np.int64)
    group_masks = {
        name: torch.as_tensor(np.asarray(mask, dtype=bool)).to(scorer.device) for name, mask in (groups or {}).items()
    }
    group_counts = {name: np.empty((n, n_golds), dtype=np.int64) for name in group_masks}
    step = query_block_size(m, memory_budget or device_memory_budget(scorer.device))
    for start in range(0, n, step):
        stop = min(n, start + step)
        scores = torch.nan_to_num(scorer.block(start, stop).float(), nan=float("-inf"))
        gold_block = torch.as_tensor(gold[start:stop]).to(scorer.device)
        if scorer.error_bound > 0:
            if _rank_block_exactly(
                scorer, scores, start, gold_block, k, group_masks, ranks, gold_scores, topk, group_counts
            ):
                del scores
                if on_block is not None:
                    on_block(stop, n)
                continue
            # Too many near ties to re-score pair by pair (e.g. a model that maps texts to the same
            # vector): this block is scored in float32 outright, as on a CPU.
            scores = torch.nan_to_num(scorer.block_float32(start, stop), nan=float("-inf"))
        block_gold_scores = scores.gather(1, gold_block)
        for column in range(n_golds):
            at_least = scores >= block_gold_scores[:, column : column + 1]
            ranks[start:stop, column] = at_least.sum(dim=1).cpu().numpy()
            for name, mask in group_masks.items():
                group_counts[name][start:stop, column] = (at_least & mask).sum(dim=1).cpu().numpy()
            del at_least
        gold_scores[start:stop] = block_gold_scores.cpu().numpy()
        if k:
            topk[start:stop] = torch.topk(scores, k, dim=1, sorted=True).indices.cpu().numpy()
        del scores
        if on_block is not None:
            on_block(stop, n)
    return RankResult(ranks=ranks, gold_scores=gold_scores, topk=topk, group_counts=group_counts)


def _rank_block_exactly(
    scorer: BlockScorer,
    scores: torch.Tensor,
    start: int,
    gold_block: torch.Tensor,
    k: int,
    group_masks: dict[str, torch.Tensor],
    ranks: np.ndarray,
    gold_scores: np.ndarray,
    topk: np.ndarray,
    group_counts: dict[str, np.ndarray],
) -> bool:
    """Ranks of one block of reduced-precision scores, made exactly those of float32 scores.

    Returns False, writing nothing, when more than MAX_RESCORED_PER_QUERY documents per query would
    need re-scoring; the caller then scores the block in float32.

    rank = #(documents certainly above: score > gold + bound) + #(uncertain documents, within the bound
    of the gold, whose float32 score is ≥ the gold's float32 score). The gold itself is uncertain and
    counts, as in the float32 rule. NaN scores were turned into −inf, so they are never uncertain.
    """
    rows = scores.shape[0]
    bound = scorer.error_bound
    query_rows = torch.arange(start, start + rows, device=scores.device)
    stop = start + rows
    limit = MAX_RESCORED_PER_QUERY * rows
    exact_golds = [
        torch.nan_to_num(scorer.exact_pairs(query_rows, gold_block[:, column]), nan=float("-inf"))
        for column in range(gold_block.shape[1])
    ]
    for exact_gold in exact_golds:
        if int(((scores - exact_gold[:, None]).abs() <= bound).sum()) > limit:
            return False
    if k:
        kth = torch.topk(scores, k, dim=1, sorted=True).values[:, -1:]
        candidates = scores >= kth - 2 * bound
        if int(candidates.sum()) > limit:
            return False
    for column, exact_gold in enumerate(exact_golds):
        gold_docs = gold_block[:, column]
        above = scores > (exact_gold + bound)[:, None]
        uncertain = (scores - exact_gold[:, None]).abs() <= bound
        uncertain_rows, uncertain_docs = uncertain.nonzero(as_tuple=True)
        exact = torch.nan_to_num(scorer.exact_pairs(uncertain_rows + start, uncertain_docs), nan=float("-inf"))
        counted = exact >= exact_gold[uncertain_rows]
        # The gold is compared with itself exactly, whatever its low-precision score (e.g. −inf for NaN).
        counts = above.sum(dim=1) + torch.bincount(uncertain_rows[counted], minlength=rows)
        gold_is_uncertain = uncertain.gather(1, gold_docs[:, None])[:, 0]
        counts += (~gold_is_uncertain).long()
        # A NaN gold (−inf) is matched by every document in the float32 rule (−inf ≥ −inf included).
        nan_gold = torch.isneginf(exact_gold)
        counts = torch.where(nan_gold, scores.shape[1], counts)
        ranks[start:stop, column] = counts.cpu().numpy()
        gold_scores[start:stop, column] = exact_gold.cpu().numpy()
        for name, mask in group_masks.items():
            in_group = mask[uncertain_docs] & counted
            group = (above & mask).sum(dim=1) + torch.bincount(uncertain_rows[in_group], minlength=rows)
            group += (~gold_is_uncertain & mask[gold_docs]).long()
            group = torch.where(nan_gold, mask.sum(), group)
            group_counts[name][start:stop, column] = group.cpu().numpy()
    if k:
        # The top k by float32 scores: every document of the float32 top k is within 2·bound of the
        # k-th best reduced score, so the candidates are those, re-scored and sorted exactly.
        candidate_rows, candidate_docs = candidates.nonzero(as_tuple=True)
        exact = torch.full_like(scores, float("-inf"))
        exact[candidate_rows, candidate_docs] = torch.nan_to_num(
            scorer.exact_pairs(candidate_rows + start, candidate_docs), nan=float("-inf")
        )
        topk[start:stop] = torch.topk(exact, k, dim=1, sorted=True).indices.cpu().numpy()
    return True
