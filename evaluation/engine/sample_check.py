"""Before a model encodes the whole benchmark: does it give the sample's texts embeddings that say anything?

A model whose embeddings are empty (no dimensions, zero or non-finite vectors) or constant (every text
the same vector) would occupy a GPU for hours to score chance; the check encodes a few texts of each
language first and refuses such a model as the submitter's fault, with the figures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from evaluation.engine.errors import ModelRejected


def embedding_problem(vectors: np.ndarray, *, min_spread: float) -> str | None:
    """Why these embeddings of different texts carry no information, in words with figures; None when they do."""
    if vectors.ndim != 2 or vectors.shape[0] == 0 or vectors.shape[1] == 0:
        return f"the embeddings are empty (shape {tuple(vectors.shape)})"
    finite = np.isfinite(vectors)
    if not finite.all():
        return f"{int((~finite.all(axis=1)).sum())} of {vectors.shape[0]} embeddings hold non-finite values"
    norms = np.linalg.norm(vectors.astype(np.float64), axis=1)
    if float(norms.max()) <= min_spread:
        return f"all {vectors.shape[0]} embeddings are zero vectors (largest norm {float(norms.max()):.3g})"
    spread = float(np.abs(vectors.astype(np.float64) - vectors[0]).max())
    if spread <= min_spread:
        return (
            f"all {vectors.shape[0]} embeddings are the same vector "
            f"(largest difference {spread:.3g}, this site's minimum {min_spread:.3g})"
        )
    return None


def check_sample_embeddings(
    encode: Callable[[list[str]], np.ndarray], samples: Mapping[str, Sequence[str]], *, min_spread: float
) -> float:
    """Encode the sample (a few texts per language) and refuse empty or constant embeddings; return their spread.

    The texts of all languages are checked together: a model that reads one script and not another
    still tells those texts apart, and its unreadable languages are the tokenizer check's concern.
    """
    texts = list(dict.fromkeys(text for group in samples.values() for text in group))
    if not texts:
        return 0.0
    vectors = np.asarray(encode(texts))
    problem = embedding_problem(vectors, min_spread=min_spread if len(texts) > 1 else -1.0)
    if problem:
        raise ModelRejected(
            f"The model's embeddings carry no information, so it cannot be evaluated: on {len(texts)} sample texts "
            f"of {len(samples)} languages, {problem}."
        )
    return float(np.abs(vectors.astype(np.float64) - vectors[0]).max())
