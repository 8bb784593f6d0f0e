"""The names of the offline lexical baselines (lexical.py), readable without loading their libraries.

A submission is checked against these names on the web, where bm25s, scikit-learn and torch (which
lexical.py brings with it) have no other use.
"""

from __future__ import annotations

BM25_NAME = "bm25"
TFIDF_NAME = "tfidf-char"
LEXICAL_NAMES = (BM25_NAME, TFIDF_NAME)
