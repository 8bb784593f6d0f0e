"""The tiny recorded model built and evaluated in a process of its own, its outputs saved whole.

`tests/engine/test_it_gives_the_same_figures_whatever_the_cpu_kernels.py` runs this module in
processes that make torch and MKL pick other CPU kernels (ATEN_CPU_CAPABILITY, MKL_CBWR), which must
be set before torch starts, hence a process each:

    python -m tests.engine.kernel_outputs MODEL_FOLDER OUTPUT.npz [--precision float32] [--embeddings-only]

It builds the model in MODEL_FOLDER (as the recordings do: tests/engine/reference_outputs.py), then
saves the embeddings of every text of the corpus, every score row (value and interval) and the
integer arrays of every rank artefact, so that the test can compare them, and the model's weights
file, bit for bit.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from evaluation.engine.backends import DenseBackend
from evaluation.engine.cache import EmbeddingCache
from evaluation.engine.corpus import Corpus, build_corpus
from evaluation.engine.encoders import SentenceTransformerEncoder, resolve_model
from evaluation.engine.runner import evaluate
from tests.engine.reference_outputs import recorded_tiny_model
from tests.validation import validation_triples

# Two scripts (Devanagari, and Arabic written right to left) and the English originals; every task runs.
LANGUAGES = ("Hindi", "Urdu")


def kernel_corpus() -> Corpus:
    rows = validation_triples(languages=LANGUAGES)
    return build_corpus(rows, requested_languages=None, name="validation", version="kernels", content_hash="k")


def corpus_texts(corpus: Corpus) -> list[str]:
    texts = [text for language in corpus.languages.values() for text in (*language.personas, *language.instructions)]
    if corpus.english is not None:
        texts += [*corpus.english.personas, *corpus.english.instructions]
    return texts


def integer_arrays_sink(arrays: dict[str, np.ndarray]) -> Callable[[str, dict[str, np.ndarray]], str]:
    """An artefact sink keeping every integer array of every rank artefact (ranks, item ids, top lists;
    not the lengths) in `arrays`, keyed "<artefact>/<array>"."""

    def sink(name: str, artefact: dict[str, np.ndarray]) -> str:
        for key, array in artefact.items():
            if np.asarray(array).dtype.kind in "iub" and not key.endswith("_lengths"):
                arrays[f"{name}/{key}"] = np.asarray(array)
        return name

    return sink


def save_outputs(model: Path, output: Path, precision: str | None, embeddings_only: bool = False) -> None:
    corpus = kernel_corpus()
    recorded_tiny_model(model, corpus_texts(corpus)[:300], seed=7)
    encoder = SentenceTransformerEncoder.load(resolve_model(str(model)), device="cpu", precision=precision)
    arrays: dict[str, np.ndarray] = {"embeddings": encoder.encode(corpus_texts(corpus))}
    if embeddings_only:
        np.savez(output, **arrays)
        return

    with tempfile.TemporaryDirectory() as folder:
        cache = EmbeddingCache(folder, encoder.name, encoder.revision, encoder.precision)
        result = evaluate(
            corpus, DenseBackend(encoder, cache), seed=1, n_resamples=100, artefact_sink=integer_arrays_sink(arrays)
        )
    rows = sorted(result.scores, key=lambda row: (row.task, row.source, row.target or "", row.metric))
    arrays["score_keys"] = np.array([f"{row.task}|{row.source}|{row.target}|{row.metric}" for row in rows])
    arrays["score_values"] = np.array(
        [
            [row.value, np.nan if row.ci_low is None else row.ci_low, np.nan if row.ci_high is None else row.ci_high]
            for row in rows
        ],
        dtype=np.float64,
    )
    np.savez(output, **arrays)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("model", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--precision", default=None, help="force a precision (default: the engine's policy)")
    parser.add_argument("--embeddings-only", action="store_true", help="save the embeddings, skip the evaluation")
    arguments = parser.parse_args()
    save_outputs(arguments.model, arguments.output, arguments.precision, arguments.embeddings_only)
