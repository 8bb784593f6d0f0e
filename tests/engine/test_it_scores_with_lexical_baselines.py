"""BM25 and character n-gram TF-IDF scorers vs their libraries' own scoring (no database)."""

import numpy as np
import pytest
from sklearn.metrics.pairwise import cosine_similarity

from evaluation.engine.lexical import BM25Index, TfidfIndex, tokenize
from tests.validation import validation_triples


def test_it_keeps_indic_vowel_signs_and_viramas_inside_tokens():
    assert tokenize("हिन्दी भाषा, मराठी।") == ["हिन्दी", "भाषा", "मराठी"]
    assert tokenize("தமிழ் நாடு") == ["தமிழ்", "நாடு"]
    assert tokenize("اردو زبان؟ NCPA Mumbai") == ["اردو", "زبان", "ncpa", "mumbai"]


def test_it_scores_bm25_blocks_exactly_like_bm25s_per_query_scores():
    rows = sorted(validation_triples(languages=("Hindi",), with_english=False)["hin"])
    documents = [row[2] for row in rows]
    queries = [row[1] for row in rows[:25]] + ["", "शब्द जो कहीं नहीं है xyzzy"]
    index = BM25Index(documents)
    block = index.scorer(queries).block(0, len(queries)).numpy()
    for row, query in enumerate(queries):
        ids = index.retriever.get_tokens_ids(tokenize(query))
        expected = index.retriever.get_scores(ids) if ids else np.zeros(len(documents))
        np.testing.assert_allclose(block[row], expected, rtol=1e-5, atol=1e-6)
    assert block[:25].max() > 0 and not block[25].any()


def test_it_scores_tfidf_as_cosine_similarity_of_character_ngrams():
    rows = sorted(validation_triples(languages=("Urdu",), with_english=False)["urd"])
    documents, queries = [row[2] for row in rows], [row[1] for row in rows[:10]]
    index = TfidfIndex(documents)
    expected = cosine_similarity(index.vectorizer.transform(queries), index.doc_term)
    np.testing.assert_allclose(index.scorer(queries).block(0, 10).numpy(), expected, rtol=1e-5, atol=1e-6)
    assert index.vectorizer.analyzer == "char_wb" and index.vectorizer.ngram_range == (2, 4)
    pair = index.pair_scores(queries[:3], np.array([0, 1, 2]))
    assert pair == pytest.approx(np.diag(expected[:3, :3]), rel=1e-5)
