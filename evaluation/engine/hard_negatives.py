"""T5's hard negatives: for each instruction, the instructions BM25 finds most like it, mined once per version.

A function of a language's texts, the seed and the dataset's content hash only, never of a model: mined
once, stored (pairs.stored_array), read by every run of the version and by the site's export of it.
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from evaluation.engine.lexical import BM25Index
from evaluation.engine.pairs import PairSetStore, stored_array, texts_key

HARD_NEGATIVES = 20
MINING_BLOCK = 512


def mine_hard_negatives(instructions: list[str], *, k: int, seed: int, content_hash: str, language: str) -> np.ndarray:
    """Rows of the k instructions BM25 finds most similar to each instruction (itself excluded), best first.

    A function of the texts, the seed and the dataset's content hash only, never of a model, so every
    model is scored on the same pools. Scores are summed in float64 over the vocabulary in token
    order (bm25s orders its vocabulary by a Python set, whose order changes with the process's hash
    seed), and equal scores are ordered by a permutation drawn from the seed and the content hash.
    """
    n = len(instructions)
    index = BM25Index(instructions)
    tokens = sorted(index.vocabulary)
    columns = np.array([index.vocabulary[token] for token in tokens], dtype=np.int64)
    doc_term = index.doc_term.tocsc()[:, columns].astype(np.float64).T.tocsr()  # terms × documents
    queries = index.query_matrix(instructions).tocsc()[:, columns].astype(np.float64).tocsr()
    material = hashlib.sha256("\0".join([str(seed), content_hash, "hard-negatives", language]).encode()).digest()
    tie_rank = np.random.default_rng(int.from_bytes(material[:16], "big")).permutation(n)
    k = min(k, n - 1)
    result = np.empty((n, k), dtype=np.int64)

    def mine(start: int) -> None:
        stop = min(n, start + MINING_BLOCK)
        scores = (queries[start:stop] @ doc_term).toarray()
        scores[np.arange(stop - start), np.arange(start, stop)] = -np.inf
        for row, values in enumerate(scores):
            # Every document scoring at least the k-th best score is a candidate; candidates are then
            # ordered by score and, among equal scores, by the seeded permutation.
            threshold = np.partition(values, n - k)[n - k]
            candidates = np.flatnonzero(values >= threshold)
            order = np.lexsort((tie_rank[candidates], -values[candidates]))
            result[start + row] = candidates[order[:k]]

    # Blocks are independent and scipy's products and numpy's partition release the GIL: all cores.
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        list(pool.map(mine, range(0, n, MINING_BLOCK)))
    return result


def hard_negative_key(documents: list[str], *, seed: int, content_hash: str, language: str) -> str:
    """The key T5's pools of one language are stored under (pairs.stored_array): texts, count, seed, data."""
    return texts_key("t5-pools", documents, HARD_NEGATIVES, seed, content_hash, language)


def hard_negative_rows(
    documents: list[str], *, seed: int, content_hash: str, language: str, store: PairSetStore | None = None
) -> np.ndarray:
    """T5's hard negatives of one language: for each document row (item-id order), the rows of its
    HARD_NEGATIVES negatives, best first.

    They depend on the dataset version and the seed only: mined once, stored, read by every run, and
    by the site's export of the version (leaderboard/dataset_export.py), which passes its `store`
    (default: the store in use, pairs.use_store) so that it hands out the very pools the runs read.
    """
    key = hard_negative_key(documents, seed=seed, content_hash=content_hash, language=language)

    def mine() -> np.ndarray:
        return mine_hard_negatives(documents, k=HARD_NEGATIVES, seed=seed, content_hash=content_hash, language=language)

    if store is not None:
        return store.array("t5-pools", key, content_hash, mine)
    return stored_array("t5-pools", key, content_hash, mine)
