"""Two offline lexical baselines: BM25 (bm25s) and character n-gram TF-IDF (scikit-learn).

Both build a sparse document-term matrix for a pool of documents and score queries against it with
a sparse product, exposed through retrieval.SparseScorer like the dense models' scores.

Tokenisation for BM25: Python's `\\w` does not match the combining vowel signs and viramas of
Indic scripts (it would cut हिन्दी into ह, न, द), so tokens are runs of word characters extended with
the Indic blocks' combining marks, the Arabic harakat and the zero-width (non-)joiners, lower-cased.
"""

from __future__ import annotations

import os
import re

# bm25s runs a jax operation when it is imported, where jax is installed. On a GPU worker that would
# start jax's CUDA backend, which takes most of the GPU's memory for itself (seen on a lent H100 whose
# image has jax: the encoder then ran out of memory); BM25's top-k runs on the CPU anyway.
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import bm25s
import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer

from evaluation.engine.baselines import BM25_NAME as BM25_NAME
from evaluation.engine.baselines import LEXICAL_NAMES as LEXICAL_NAMES
from evaluation.engine.baselines import TFIDF_NAME as TFIDF_NAME
from evaluation.engine.retrieval import SparseScorer

TOKEN = re.compile(r"[\w\u0900-\u0963\u0966-\u0DFF\u064B-\u065F\u0670\u06D6-\u06ED\u200C\u200D]+")


def tokenize(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


class SparseIndex:
    """A pool of documents as a sparse document-term matrix; subclasses project queries onto it."""

    doc_term: sp.spmatrix

    def query_matrix(self, queries: list[str]) -> sp.csr_matrix:
        raise NotImplementedError

    def scorer(self, queries: list[str], device: str = "cpu") -> SparseScorer:
        return SparseScorer(self.query_matrix(queries), self.doc_term, device=device)

    def pair_scores(self, queries: list[str], doc_indices: np.ndarray) -> np.ndarray:
        """Score of queries[i] against document doc_indices[i] of the pool."""
        q = sp.csr_matrix(self.query_matrix(queries), dtype=np.float64)
        d = sp.csr_matrix(self.doc_term, dtype=np.float64)[np.asarray(doc_indices)]
        return np.asarray(q.multiply(d).sum(axis=1)).ravel()


class BM25Index(SparseIndex):
    """BM25 (Lucene variant, k1=1.5, b=0.75) over one pool of documents, built with bm25s."""

    parameters = {"method": "lucene", "k1": 1.5, "b": 0.75}

    def __init__(self, documents: list[str]) -> None:
        self.retriever = bm25s.BM25(**self.parameters)
        corpus_tokens = [tokenize(text) for text in documents]
        self.retriever.index(corpus_tokens, show_progress=False)
        scores = self.retriever.scores
        # bm25s keeps the precomputed per-(document, term) BM25 contributions as a CSC matrix;
        # a query's scores are the sum of its tokens' columns, i.e. a sparse product. Its vocabulary
        # also holds an empty placeholder token without a column, which tokenize() never produces.
        n_terms = len(scores["indptr"]) - 1
        bm25s_columns = {token: index for token, index in self.retriever.vocab_dict.items() if index < n_terms}
        bm25s_matrix = sp.csc_matrix(
            (scores["data"], scores["indices"], scores["indptr"]), shape=(scores["num_docs"], n_terms)
        )
        # bm25s numbers its vocabulary in the order of a Python set, which follows the process's string
        # hash seed (PYTHONHASHSEED). The columns are put in sorted token order, so that the matrix,
        # and the order in which a query's terms are summed, are the same in every process.
        tokens = sorted(bm25s_columns)
        self.vocabulary: dict[str, int] = {token: column for column, token in enumerate(tokens)}
        order = np.array([bm25s_columns[token] for token in tokens], dtype=np.int64)
        self.doc_term = sp.csc_matrix(bm25s_matrix[:, order])

    def query_matrix(self, queries: list[str]) -> sp.csr_matrix:
        """Token counts of each query over the index vocabulary (unknown tokens dropped)."""
        rows, cols = [], []
        for row, text in enumerate(queries):
            for token in tokenize(text):
                column = self.vocabulary.get(token)
                if column is not None:
                    rows.append(row)
                    cols.append(column)
        data = np.ones(len(rows), dtype=np.float64)
        shape = (len(queries), self.doc_term.shape[1])
        matrix = sp.csr_matrix((data, (rows, cols)), shape=shape, dtype=np.float64)
        matrix.sum_duplicates()
        return matrix


class TfidfIndex(SparseIndex):
    """Character 2–4-gram TF-IDF (within word boundaries, sublinear tf), cosine similarity.

    The vocabulary and IDF are fitted on the pool's documents; queries are projected onto them.
    """

    parameters = {"analyzer": "char_wb", "ngram_range": (2, 4), "sublinear_tf": True, "lowercase": True}

    def __init__(self, documents: list[str]) -> None:
        self.vectorizer = TfidfVectorizer(**self.parameters, dtype=np.float32)
        self.doc_term = self.vectorizer.fit_transform(documents)

    def query_matrix(self, queries: list[str]) -> sp.csr_matrix:
        return self.vectorizer.transform(queries)


def build_index(name: str, documents: list[str]) -> BM25Index | TfidfIndex:
    if name == BM25_NAME:
        return BM25Index(documents)
    if name == TFIDF_NAME:
        return TfidfIndex(documents)
    raise ValueError(f"unknown lexical baseline {name!r}")
