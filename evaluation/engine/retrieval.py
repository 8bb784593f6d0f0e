"""Full-pool retrieval by blocked score matrices: the rank of every gold document, plus the top k.

A `BlockScorer` produces the scores of a block of queries against every document of the pool; the
dense encoders (matrix product of normalised embeddings) and the lexical baselines (sparse
products) both implement it, so the ranking code below is shared by every kind of model.

Ranks are over the FULL pool, not only the top k. The rank of a gold document is

    rank = 1 + #(other documents j with score_j ≥ gold_score − τ(gold_score))

with the tie tolerance τ of `tie_tolerance`: a document within τ of the gold counts as tied, and ties
are broken pessimistically (a tied document ranks above the gold). The gold counts itself exactly
once, by construction, and is never compared with a second computation of its own score, so a rank
is at least 1 and MRR never divides by zero. NaN scores are treated as minus infinity: a NaN gold is
tied with every document (the worst rank), a NaN document never outranks a gold.

Why a tolerance: float32 scores computed by different kernels (AVX2 or AVX-512, another BLAS, a GPU,
another block size) differ in their last bits, and without τ such noise flips every near-exact tie
(duplicate documents, a model that maps texts to the same vector). With τ, noise of a few ulps moves
no rank unless a document lies within that noise of the edge gold − τ, which real scores almost
never do. Almost is not never: on the tiny random test model, whose scores crowd together, one
document of the validation sample lay within float32 noise of its edge, and its rank differed
between an AVX-512 and an AVX2 processor. CPUs therefore encode in float64 (encoders.py) and score
in float64 (`default_score_precision`), where kernels differ by about 1e-16: the embeddings round to
the same float32 values everywhere, the scores agree far below anything τ is compared with, and the
same ranks come out on every processor.

Memory is bounded by processing queries in blocks sized so that one block of scores (plus the
boolean comparison masks derived from it) fits in `memory_budget` bytes; nothing of size
queries × documents is ever held at once. On an accelerator the budget is a fixed 1 GiB (never a
share of free memory, so block shapes do not change from run to run); on a CPU it is 256 MiB.

Reduced precision: on an accelerator the dense scores are computed in float16 (bfloat16 on request),
but the gold ranks are those of float32 scores under the same rule. A reduced-precision score differs
from the float32 score by at most `error_bound` (see `reduced_precision_bound`), so documents scoring
above the tie edge + bound certainly count, those below the edge − bound certainly do not, and only
the few in between are re-scored in float32 (as are the gold scores and the top k).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import torch

DEFAULT_MEMORY_BUDGET = 256 * 1024**2
# A fixed budget on accelerators: block shapes (hence summation orders) are then the same on every
# run whatever else holds the device's memory.
ACCELERATOR_MEMORY_BUDGET = 1024**3
# Bytes held per score while a block is processed besides the score itself: one boolean comparison
# mask and the top-k working copy.
BYTES_PER_SCORE = 4 + 1 + 8

# The tie tolerance, relative to the gold's magnitude (at least 1): τ = 2^-18 · max(1, |gold|).
#  * It must exceed the noise between two float32 computations of one score, so that exact ties
#    (duplicate documents, texts a model maps to one vector) stay ties whatever the kernels. Measured
#    on all-MiniLM-L6-v2 over the validation sample (447,000 query–document pairs), AVX2 and AVX-512
#    kernels move a score relative to its gold's by at most 8.9e-7 (embeddings and products
#    together); τ = 2^-18 ≈ 3.8e-6 is four times that and 32 ulps of 1.0 in float32, so a few ulps
#    of noise (the tests perturb every score by ±4 ulps) stay far inside it.
#  * It must be as small as that allows: a document within τ of the gold is a deliberate change of
#    definition, and no reported figure (4 decimals) can tell documents 3.8e-6 apart.
#  * Any threshold has an edge: a document whose score lies within the noise of gold − τ can still
#    fall on either side on two processors. Near-duplicate texts put documents 1e-6…1e-4 below
#    their golds at a roughly even density, so no τ avoids them all; among those 447,000 pairs none
#    lies within 1e-6 of its edge at 2^-18 (at 2^-16, eleven did, and two ranks differed).
#  * Scores larger than 1 (BM25) scale their rounding with their magnitude, hence max(1, |gold|).
TIE_RELATIVE_TOLERANCE = 2.0**-18


def tie_tolerance(gold_scores: torch.Tensor) -> torch.Tensor:
    """τ for each gold score (−inf for a NaN gold gives τ = inf, so its edge stays −inf)."""
    return TIE_RELATIVE_TOLERANCE * gold_scores.abs().clamp(min=1.0)


def tie_edge(gold_scores: torch.Tensor) -> torch.Tensor:
    """The lowest score that counts as tied with each gold: gold − τ."""
    return gold_scores - tie_tolerance(gold_scores)


class BlockScorer(ABC):
    """Scores of queries against all documents of one pool, one block of queries at a time."""

    n_queries: int
    n_docs: int
    device: torch.device = torch.device("cpu")
    # Largest possible |block score − float32 score|; 0 when block() returns float32 (or float64) scores.
    error_bound: float = 0.0
    # Bytes of one score of block(): 4 (float32), 8 for float64 scores (a CPU's dense scores, lexical scores).
    score_bytes: int = 4

    def exact_pairs(self, query_rows: torch.Tensor, doc_rows: torch.Tensor) -> torch.Tensor:
        """float32 scores of the pairs (query_rows[i], doc_rows[i]); needed only when error_bound > 0."""
        raise NotImplementedError

    @abstractmethod
    def block(self, start: int, stop: int) -> torch.Tensor:
        """Scores of queries[start:stop] against every document: shape (stop-start, n_docs)."""

    def block_float32(self, start: int, stop: int) -> torch.Tensor:
        """The block in float32 (or better); the same as block() when error_bound is 0."""
        return self.block(start, stop)

    def pool_block(self, start: int, stop: int, doc_rows: torch.Tensor, *, exact: bool = False) -> torch.Tensor:
        """Scores of queries[start:stop] against their own documents doc_rows (shape (stop-start, p)).

        The default gathers from full blocks, a few queries at a time so that a full block stays
        within the CPU budget; dense scorers compute only the p documents of each query.
        """
        step = query_block_size(self.n_docs, score_bytes=self.score_bytes)
        parts = []
        for low in range(start, stop, step):
            high = min(stop, low + step)
            full = self.block_float32(low, high) if exact else self.block(low, high)
            parts.append(full.gather(1, doc_rows[low - start : high - start]))
        return torch.cat(parts) if parts else torch.empty((0, doc_rows.shape[1]), device=self.device)


# Unit roundoff of each reduced precision: 2^-11 (float16, 11 significant bits), 2^-8 (bfloat16).
UNIT_ROUNDOFF = {torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}
# Documents per query (on average over a block) that may be re-scored pair by pair in float32 before the
# whole block is scored in float32 instead: at least MAX_RESCORED_PER_QUERY, and up to one document in
# RESCORED_SHARE of the pool. A re-scored pair (a gather of two vectors) costs about as much as a few
# entries of a dense float32 product, so below one in eight re-scoring is still the cheaper way; a weak
# model whose golds sit in the bulk of a 50,000-document pool has a few thousand documents within the
# bound of the gold, which must not send the whole block back to float32.
MAX_RESCORED_PER_QUERY = 1024
RESCORED_SHARE = 8


def reduced_precision_bound(dtype: torch.dtype, dim: int, query_norm: float, doc_norm: float) -> float:
    """Largest |reduced-precision score − float32 score| of an inner product of two vectors.

    With u the unit roundoff: each factor is rounded (relative error u each, so a product term is off
    by at most (2u + u²)|a_i b_i|), Σ|a_i b_i| ≤ |a||b| by Cauchy–Schwarz; the sum is accumulated in
    float32 (the accelerator's reduced-precision reduction is switched off, see
    `disable_reduced_precision_reductions`), d additions of relative 2^-24; the result is rounded to
    the reduced type (u|s| ≤ u|a||b|); subnormal inputs add at most 2^-25 per term. Doubled for margin:
        bound = 2 · ((3u + u² + d·2^-24) · max(1, |a||b|) + d·2^-25)
    For unit vectors in float16 with d = 384 that is 3.0e-3 (bfloat16: 2.4e-2).
    """
    u = UNIT_ROUNDOFF[dtype]
    scale = max(1.0, query_norm * doc_norm)
    return 2.0 * ((3 * u + u * u + dim * 2.0**-24) * scale + dim * 2.0**-25)


def disable_reduced_precision_reductions() -> None:
    """Make CUDA half-precision matrix products accumulate in float32, which the error bound assumes.

    torch allows cuBLAS to accumulate float16/bfloat16 products in reduced precision by default; with
    that, a long inner product can lose far more than `reduced_precision_bound` allows.
    """
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False


def default_score_precision(device: str | torch.device) -> str:
    """float16 on accelerators (re-scored in float32 near each gold); float64 on CPUs.

    A CPU scores the float32 embeddings in float64: each product of two float32 numbers is exact
    in float64 and the sums differ between kernels by about 1e-16, so a score's place against a
    tie edge (and the top k) is the same on every processor, as the embeddings are (encoders.py).
    """
    return "float16" if torch.device(device).type == "cuda" else "float64"


class DenseScorer(BlockScorer):
    """Inner products of L2-normalised embeddings (cosine similarity), in float64 on a CPU.

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
        # Host → device copies from pinned memory without blocking, when there is a device.
        self.queries = _to_device(np.ascontiguousarray(queries, dtype=np.float32), self.device)
        # The documents stay on the device for all query blocks; the product uses their transpose as a
        # view (BLAS reads it transposed), so no second copy of the pool is made.
        self.docs = _to_device(np.ascontiguousarray(docs, dtype=np.float32), self.device)
        self.n_queries, self.n_docs = len(queries), len(docs)
        self.precision = precision or default_score_precision(self.device)
        self.dtype = getattr(torch, self.precision)
        if self.dtype == torch.float64:
            self.queries, self.docs = self.queries.double(), self.docs.double()
            self.score_bytes = 8
        elif self.dtype != torch.float32:
            if self.device.type == "cuda":
                disable_reduced_precision_reductions()
            self.low_queries, self.low_docs = self.queries.to(self.dtype), self.docs.to(self.dtype)
            norms = [float(matrix.norm(dim=1).max()) if len(matrix) else 0.0 for matrix in (self.queries, self.docs)]
            dim = int(self.queries.shape[1]) if self.queries.ndim == 2 else 0
            self.error_bound = reduced_precision_bound(self.dtype, dim, norms[0], norms[1])

    def block(self, start: int, stop: int) -> torch.Tensor:
        if self.error_bound > 0:
            return self.low_queries[start:stop] @ self.low_docs.T
        return self.queries[start:stop] @ self.docs.T

    def block_float32(self, start: int, stop: int) -> torch.Tensor:
        return self.queries[start:stop] @ self.docs.T

    def pool_block(self, start: int, stop: int, doc_rows: torch.Tensor, *, exact: bool = False) -> torch.Tensor:
        # Only each query's own documents: a batched product (b, p, d) × (b, d, 1), in slices so that
        # the gathered document vectors take at most ~256 MB.
        full_precision = exact or self.error_bound == 0
        queries, docs = (self.queries, self.docs) if full_precision else (self.low_queries, self.low_docs)
        per_row = max(1, doc_rows.shape[1] * max(1, docs.shape[1]))
        step = max(1, (1 << 26) // per_row)
        parts = [
            torch.bmm(docs[doc_rows[row : row + step]], queries[start + row : min(stop, start + row + step), :, None])[
                :, :, 0
            ]
            for row in range(0, stop - start, step)
        ]
        return torch.cat(parts) if parts else torch.empty((0, doc_rows.shape[1]), device=self.device)

    def exact_pairs(self, query_rows: torch.Tensor, doc_rows: torch.Tensor) -> torch.Tensor:
        # In slices, so that the gathered vectors take at most ~256 MB whatever the number of pairs.
        step = max(1, (1 << 26) // max(1, self.queries.shape[1]))
        parts = [
            (self.queries[query_rows[low : low + step]] * self.docs[doc_rows[low : low + step]]).sum(dim=1)
            for low in range(0, len(query_rows), step)
        ]
        return torch.cat(parts) if parts else torch.empty(0, device=self.device)


def _to_device(array: np.ndarray, device: torch.device) -> torch.Tensor:
    tensor = torch.from_numpy(array)
    if device.type == "cuda":
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


class SparseScorer(BlockScorer):
    """Products of sparse query rows with a sparse document-term matrix (BM25, TF-IDF), in float64.

    float64 sums make the scores independent of the summation order scipy picks (a BLAS path, the
    column order of the vocabulary) far below float32's last bit, so lexical ranks never move.
    """

    def __init__(self, queries: sp.spmatrix, docs_by_term: sp.spmatrix, device: str | torch.device = "cpu") -> None:
        self.device = torch.device(device)
        self.queries = sp.csr_matrix(queries, dtype=np.float64)
        # Stored transposed (terms × documents) so that a block is one CSR × CSC product.
        self.terms_by_doc = sp.csc_matrix(docs_by_term, dtype=np.float64).T.tocsr()
        self.n_queries, self.n_docs = self.queries.shape[0], docs_by_term.shape[0]
        self.score_bytes = 8

    def block(self, start: int, stop: int) -> torch.Tensor:
        scores = (self.queries[start:stop] @ self.terms_by_doc).toarray()
        return torch.from_numpy(scores).to(self.device)


# Elements of the rows sorted whole at once by top_k_indices (about 48 MB with their indices).
TIED_ROWS_ELEMENTS = 1 << 22


def top_k_indices(scores: torch.Tensor, k: int) -> torch.Tensor:
    """The k best documents of each row by their float32 scores, best first, equal ones in index order.

    `torch.topk` orders equal scores as its kernel happens to meet them, which differs between CPU
    kernels and devices, and duplicate documents (or texts a model maps to one vector) score alike
    up to the last bits of their sums, which differ between kernels too. Ordering by the scores
    rounded to float32 makes such documents exactly equal (a float64 score's kernel noise, ~1e-16,
    crosses a float32 rounding edge about once in 10^9 scores), and equal scores are listed in
    index order. Where no document outside the top k scores as well as the k-th, the k are sorted
    among themselves; a row where some do (BM25 finding no shared word, a model giving many texts one
    vector) is sorted whole, stably, a few rows at a time so that memory stays within the block's.
    """
    scores = scores.float()
    if k == 0:
        return torch.empty((scores.shape[0], 0), dtype=torch.long, device=scores.device)
    # One more than k: a document outside the top k scores as well as the k-th exactly when the
    # (k+1)-th best score equals the k-th (no pass over the whole block to count them).
    wider = min(k + 1, scores.shape[1])
    values, indices = torch.topk(scores, wider, dim=1, sorted=True)
    by_index = torch.sort(indices[:, :k], dim=1).values
    by_score = torch.sort(torch.gather(scores, 1, by_index), dim=1, descending=True, stable=True).indices
    top = torch.gather(by_index, 1, by_score)
    if wider > k:
        tied = (values[:, k] == values[:, k - 1]).nonzero(as_tuple=True)[0]
    else:
        tied = torch.empty(0, dtype=torch.long, device=scores.device)
    step = max(1, TIED_ROWS_ELEMENTS // max(1, scores.shape[1]))
    for start in range(0, len(tied), step):
        rows = tied[start : start + step]
        top[rows] = torch.sort(scores[rows], dim=1, descending=True, stable=True).indices[:, :k]
    return top


@dataclass
class RankResult:
    """Per-query results of one retrieval: gold ranks, gold scores, top-k documents, group counts."""

    ranks: np.ndarray  # (n_queries, n_golds) int64, 1 = best
    gold_scores: np.ndarray  # (n_queries, n_golds) float32
    topk: np.ndarray  # (n_queries, k) int64 document indices, best first
    group_counts: dict[str, np.ndarray] = field(default_factory=dict)  # (n_queries, n_golds) each


def query_block_size(n_docs: int, memory_budget: int = DEFAULT_MEMORY_BUDGET, score_bytes: int = 4) -> int:
    """Queries per block so that a block of scores and its working copies fit in memory_budget bytes."""
    return max(1, memory_budget // max(1, n_docs * (BYTES_PER_SCORE + score_bytes - 4)))


def device_memory_budget(device: str | torch.device) -> int:
    """Bytes one block of scores may take: a fixed 1 GiB on an accelerator, 256 MiB on a CPU."""
    if torch.device(device).type == "cuda":
        return ACCELERATOR_MEMORY_BUDGET
    return DEFAULT_MEMORY_BUDGET


def count_per_row(flags: torch.Tensor) -> torch.Tensor:
    """The number of true entries in each row of a boolean matrix, as int64.

    Summed in int32, which no row's count can overflow (a row is one query's pool): torch sums a
    boolean tensor into int64 at half the speed, and these counts cost a CPU more than the products
    themselves (32.5 s against 15.9 s of 118 s after encoding at 20,000 items × 2 languages).
    """
    counts: torch.Tensor = flags.sum(dim=1, dtype=torch.int32).long()
    return counts


def _finite_scores(scores: torch.Tensor) -> torch.Tensor:
    """float32 (float64 stays float64) with NaN as −inf, so that NaN never outranks anything."""
    if scores.dtype != torch.float64:
        scores = scores.float()
    return torch.nan_to_num(scores, nan=float("-inf"))


def _count_ties(
    scores: torch.Tensor,
    gold_docs: torch.Tensor,
    gold_scores: torch.Tensor,
    group_masks: dict[str, torch.Tensor],
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """rank = 1 + #(others ≥ gold − τ); per group, #(others of the group ≥ gold − τ) + [gold in group].

    The gold's own entry is removed from the count and added back once, so the gold never depends on
    a comparison of its score with itself.
    """
    at_least = scores >= tie_edge(gold_scores)[:, None]
    own = at_least.gather(1, gold_docs[:, None])[:, 0]
    ranks = count_per_row(at_least) - own.long() + 1
    groups = {}
    for name, mask in group_masks.items():
        gold_in_group = mask[gold_docs]
        groups[name] = count_per_row(at_least & mask) - (own & gold_in_group).long() + gold_in_group.long()
    return ranks, groups


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
        tied with or above each gold (the gold itself included when it is in the group).
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
    step = query_block_size(m, memory_budget or device_memory_budget(scorer.device), scorer.score_bytes)
    for start in range(0, n, step):
        stop = min(n, start + step)
        scores = _finite_scores(scorer.block(start, stop))
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
            scores = _finite_scores(scorer.block_float32(start, stop))
        block_gold_scores = scores.gather(1, gold_block)
        # The results of a block are collected on the device and copied to the host once per block.
        block_ranks: list[torch.Tensor] = []
        block_groups: dict[str, list[torch.Tensor]] = {name: [] for name in group_masks}
        for column in range(n_golds):
            column_ranks, column_groups = _count_ties(
                scores, gold_block[:, column], block_gold_scores[:, column], group_masks
            )
            block_ranks.append(column_ranks)
            for name, counts in column_groups.items():
                block_groups[name].append(counts)
        ranks[start:stop] = torch.stack(block_ranks, dim=1).cpu().numpy()
        for name, columns in block_groups.items():
            group_counts[name][start:stop] = torch.stack(columns, dim=1).cpu().numpy()
        gold_scores[start:stop] = block_gold_scores.cpu().numpy()
        if k:
            topk[start:stop] = top_k_indices(scores, k).cpu().numpy()
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
    """Ranks of one block of reduced-precision scores, made those of float32 scores under the tie rule.

    Returns False, writing nothing, when more documents per query would need re-scoring than
    MAX_RESCORED_PER_QUERY or one in RESCORED_SHARE of the pool; the caller then scores the block in float32.

    With the edge e = g − τ(g) of the float32 gold score g and the bound b: a document j ≠ gold counts
    when its float32 score s_j ≥ e. Its reduced score r_j is within b of s_j, so it certainly counts when
    r_j ≥ e + b, certainly not when r_j < e − b, and only the uncertain ones in between are re-scored in
    float32. The gold is excluded from both and counted once. NaN scores were turned into −inf, so they
    are never uncertain; a NaN gold (g = −inf) has e = −inf and is tied with every document.
    """
    rows = scores.shape[0]
    bound = scorer.error_bound
    query_rows = torch.arange(start, start + rows, device=scores.device)
    stop = start + rows
    limit = max(MAX_RESCORED_PER_QUERY, scores.shape[1] // RESCORED_SHARE) * rows
    exact_golds = [
        _finite_scores(scorer.exact_pairs(query_rows, gold_block[:, column])) for column in range(gold_block.shape[1])
    ]
    edges = [tie_edge(exact_gold) for exact_gold in exact_golds]
    for edge in edges:
        if int(((scores - edge[:, None]).abs() <= bound).sum()) > limit:
            return False
    if k:
        kth = torch.topk(scores, k, dim=1, sorted=True).values[:, -1:]
        candidates = scores >= kth - 2 * bound
        if int(candidates.sum()) > limit:
            return False
    block_ranks: list[torch.Tensor] = []
    block_groups: dict[str, list[torch.Tensor]] = {name: [] for name in group_masks}
    for column, (exact_gold, edge) in enumerate(zip(exact_golds, edges, strict=True)):
        gold_docs = gold_block[:, column]
        is_gold = torch.zeros_like(scores, dtype=torch.bool)
        is_gold.scatter_(1, gold_docs[:, None], True)
        certain = (scores >= (edge + bound)[:, None]) & ~is_gold
        uncertain = (scores >= (edge - bound)[:, None]) & ~certain & ~is_gold
        uncertain_rows, uncertain_docs = uncertain.nonzero(as_tuple=True)
        exact = _finite_scores(scorer.exact_pairs(uncertain_rows + start, uncertain_docs))
        counted = exact >= edge[uncertain_rows]
        block_ranks.append(1 + count_per_row(certain) + torch.bincount(uncertain_rows[counted], minlength=rows))
        for name, mask in group_masks.items():
            in_group = mask[uncertain_docs] & counted
            group = count_per_row(certain & mask) + torch.bincount(uncertain_rows[in_group], minlength=rows)
            block_groups[name].append(group + mask[gold_docs].long())
        gold_scores[start:stop, column] = exact_gold.float().cpu().numpy()
    ranks[start:stop] = torch.stack(block_ranks, dim=1).cpu().numpy()
    for name, counts in block_groups.items():
        group_counts[name][start:stop] = torch.stack(counts, dim=1).cpu().numpy()
    if k:
        # The top k by float32 scores: every document of the float32 top k is within 2·bound of the
        # k-th best reduced score, so the candidates are those, re-scored and sorted exactly.
        candidate_rows, candidate_docs = candidates.nonzero(as_tuple=True)
        exact_top = torch.full_like(scores, float("-inf"), dtype=torch.float32)
        exact_top[candidate_rows, candidate_docs] = _finite_scores(
            scorer.exact_pairs(candidate_rows + start, candidate_docs)
        )
        topk[start:stop] = top_k_indices(exact_top, k).cpu().numpy()
    return True
