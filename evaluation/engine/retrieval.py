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
queries × documents is ever held at once.
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

    @abstractmethod
    def block(self, start: int, stop: int) -> torch.Tensor:
        """Scores of queries[start:stop] against every document: float32, shape (stop-start, n_docs)."""


class DenseScorer(BlockScorer):
    """Inner products of L2-normalised embeddings (cosine similarity)."""

    def __init__(self, queries: np.ndarray, docs: np.ndarray, device: str | torch.device = "cpu") -> None:
        self.device = torch.device(device)
        self.queries = torch.as_tensor(np.ascontiguousarray(queries, dtype=np.float32)).to(self.device)
        # The documents stay on the device for all query blocks; the product uses their transpose as a
        # view (BLAS reads it transposed), so no second copy of the pool is made.
        self.docs = torch.as_tensor(np.ascontiguousarray(docs, dtype=np.float32)).to(self.device)
        self.n_queries, self.n_docs = len(queries), len(docs)

    def block(self, start: int, stop: int) -> torch.Tensor:
        return self.queries[start:stop] @ self.docs.T


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


def rank_golds(
    scorer: BlockScorer,
    gold: np.ndarray,
    *,
    k: int = 10,
    groups: dict[str, np.ndarray] | None = None,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    on_block: Callable[[int, int], None] | None = None,
) -> RankResult:
    """Rank the gold document(s) of every query in the full pool.

    gold: (n_queries,) or (n_queries, n_golds) document indices.
    groups: optional boolean masks over documents; for each, the number of documents of that group
        scoring at least as high as each gold is returned (e.g. English documents in a mixed pool).
    on_block(done, total) is called after every block of queries (for progress reports).
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
    step = query_block_size(m, memory_budget)
    for start in range(0, n, step):
        stop = min(n, start + step)
        scores = torch.nan_to_num(scorer.block(start, stop).float(), nan=float("-inf"))
        gold_block = torch.as_tensor(gold[start:stop]).to(scorer.device)
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
