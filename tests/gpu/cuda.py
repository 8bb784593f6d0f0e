"""What every GPU test shares: the marker that skips it without CUDA, and the shared validation corpus
(`corpus_texts`, every persona and instruction of a corpus, is the kernel test's)."""

from __future__ import annotations

import pytest
import torch

from evaluation.engine.corpus import Corpus, build_corpus
from tests.engine.kernel_outputs import corpus_texts
from tests.validation import validation_triples

__all__ = ["ON_CUDA", "corpus_texts", "validation_corpus"]

# `gpu` selects these tests; the skip keeps a CPU machine's run green and says why in its summary (-ra).
ON_CUDA = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (runs on a GPU machine)"),
]


def validation_corpus(languages: tuple[str, ...] | None = None) -> Corpus:
    """The five-language validation sample with its English originals, as the engine reads it."""
    rows = validation_triples(languages=languages) if languages else validation_triples()
    return build_corpus(rows, requested_languages=None, name="validation", version="gpu", content_hash="gpu")
