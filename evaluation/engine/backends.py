"""What the runner evaluates: a dense encoder with its embedding cache, or a lexical baseline.

Both kinds answer the same three questions the tasks ask:
  * `prepare(text_sets)`: make every text of the run available (dense: encode each unique
    role-prefixed text exactly once, reading and writing the embedding cache chunk by chunk);
  * `scorer(queries, documents)`: a BlockScorer over a pool (retrieval.py);
  * `pair_features(...)`: features of persona/instruction pairs for the T4 classifier.
"""

from __future__ import annotations

import hashlib
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.engine import lexical
from evaluation.engine.blobs import BlobStore
from evaluation.engine.cache import EmbeddingCache, text_key
from evaluation.engine.encoders import (
    LOADED_MODELS,
    ResolvedModel,
    SentenceTransformerEncoder,
    default_device,
    download_model,
    prompt_family,
    resolve_model,
)
from evaluation.engine.errors import EngineError
from evaluation.engine.languages import BY_CODE
from evaluation.engine.pipeline import CPU_TOKEN_BUDGET
from evaluation.engine.retrieval import BlockScorer, DenseScorer, default_score_precision

ProgressCallback = Callable[[str, float, str], None]

# Texts per cache chunk: each chunk is written (atomically) as soon as it is encoded, so this is
# the most work a killed worker can lose.
DEFAULT_CHUNK_SIZE = 256
COVERAGE_SAMPLE = 20_000
# The precisions a caller may ask a dense model to be encoded in instead of the policy's (load_backend).
OPT_IN_PRECISIONS = ("float64", "float32")


@dataclass(frozen=True)
class TextSet:
    """The texts of one field of one language, in item order, as encoded in one role."""

    language: str
    field: str  # "persona" | "instruction"
    role: str  # "query" | "document" | "reverse_query"
    texts: tuple[str, ...]

    @property
    def key(self) -> str:
        return f"{self.language}/{self.field}/{self.role}"


@dataclass
class EncodeStats:
    texts_total: int = 0
    texts_encoded: int = 0
    texts_from_cache: int = 0
    seconds: float = 0.0
    batch_size: int | None = None
    batch_halvings: int = 0
    # Tokens per forward pass the run ended with (fixed per device kind; smaller after halvings).
    token_budget: int | None = None
    # The precision the texts were encoded in (encoders.encoding_precision).
    precision: str | None = None
    # Where the texts were tokenised ("N processes", "thread", "thread (preprocess)"; None: the
    # model's own encode) and the multiple batch widths were rounded up to (pooled_batches.py).
    tokeniser: str | None = None
    width_multiple: int | None = None


class _ChunkWriter:
    """Collects encoded batches into the run's matrix and stores them in cache chunks of ~chunk_size.

    Batches arrive as the encoder finishes them; storing every chunk_size texts means a killed
    worker loses at most one chunk (plus one batch) of work.
    """

    def __init__(
        self, cache: EmbeddingCache, keys: list[bytes], total: int, chunk_size: int, *, background: bool = False
    ) -> None:
        self.cache, self.keys, self.total, self.chunk_size = cache, keys, total, chunk_size
        self.vectors: np.ndarray | None = None
        self.rows: list[np.ndarray] = []
        self.parts: list[np.ndarray] = []
        self.done = 0
        self.on_flush: Callable[[int], None] | None = None
        # On an accelerator the chunk files (written and fsynced) are stored by one background thread,
        # so that the device computes the next batches meanwhile; finish() waits for them.
        self._writes: ThreadPoolExecutor | None = ThreadPoolExecutor(max_workers=1) if background else None
        self._pending: list[Future[None]] = []

    def add(self, rows: np.ndarray, encoded: np.ndarray) -> None:
        if self.vectors is None:
            self.vectors = np.empty((self.total, encoded.shape[1]), dtype=np.float32)
        self.vectors[rows] = encoded
        self.rows.append(rows)
        self.parts.append(encoded)
        if sum(len(part) for part in self.rows) >= self.chunk_size:
            self.flush()

    def flush(self) -> None:
        if not self.rows:
            return
        chunk, encoded = np.concatenate(self.rows), np.concatenate(self.parts)
        self.rows, self.parts = [], []
        keys = [self.keys[row] for row in chunk.tolist()]
        if self._writes is not None:
            for future in [future for future in self._pending if future.done()]:
                future.result()  # an earlier write that failed fails the encoding here
            self._pending = [future for future in self._pending if not future.done()]
            self._pending.append(self._writes.submit(self.cache.put, keys, encoded))
        else:
            self.cache.put(keys, encoded)
        self.done += len(chunk)
        if self.on_flush is not None:
            self.on_flush(self.done)

    def finish(self) -> None:
        """Store what is left and wait for every background write (re-raising its error, if any)."""
        self.flush()
        if self._writes is not None:
            try:
                for future in self._pending:
                    future.result()
            finally:
                self._writes.shutdown(wait=True)
                self._pending = []


class Backend(ABC):
    name: str
    kind: str  # "dense" | "lexical"
    revision: str
    device: str = "cpu"
    # The precision of its scores (the manifest's ranking block): lexical scores are float64 everywhere.
    score_precision: str = "float64"

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """What the manifest records about the model."""

    @abstractmethod
    def prepare(self, text_sets: list[TextSet], progress: ProgressCallback | None = None) -> EncodeStats:
        """Make all texts of the run ready for scoring."""

    @abstractmethod
    def scorer(self, queries: TextSet, documents: TextSet | list[TextSet]) -> BlockScorer:
        """Scores of `queries` against the pool `documents` (several sets are concatenated in order)."""

    @abstractmethod
    def pair_features(
        self, personas: TextSet, instructions: TextSet, persona_rows: np.ndarray, instruction_rows: np.ndarray
    ) -> np.ndarray:
        """Features of the pairs (personas[persona_rows[i]], instructions[instruction_rows[i]])."""

    def tokenizer_coverage(self, text_sets: list[TextSet]) -> dict[str, Any] | None:
        return None


class DenseBackend(Backend):
    kind = "dense"

    def __init__(
        self,
        encoder: SentenceTransformerEncoder,
        cache: EmbeddingCache,
        *,
        resolved: ResolvedModel | None = None,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        score_precision: str | None = None,
    ) -> None:
        self.encoder = encoder
        self.cache = cache
        self.resolved = resolved
        self.name = encoder.name
        self.revision = encoder.revision
        self.device = encoder.device
        self.chunk_size = chunk_size
        # The precision of the full-pool score blocks (retrieval.DenseScorer): the device's default
        # unless a bench compares another (bench/scoring_scale.py --score-precision). On an
        # accelerator float16 blocks are re-scored in float32 near every tie edge, so both give the
        # ranks of float32 scores, except where a document lies within float32 noise of its edge
        # (the re-scored pair and the float32 product sum in different orders); they differ in the
        # work per block.
        self.score_precision = score_precision or default_score_precision(self.device)
        self._matrix = np.empty((0, 0), dtype=np.float32)
        self._rows: dict[str, np.ndarray] = {}

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "requested_revision": self.resolved.requested_revision if self.resolved else "",
            "resolved_revision": self.revision,
            "is_local": bool(self.resolved and self.resolved.is_local),
            "prompt_family": prompt_family(self.name),
            "prompts": dict(self.encoder.prompts),
            "dimension": self.encoder.dimension,
            "max_seq_length": getattr(self.encoder.model, "max_seq_length", None),
            "dtype": self.encoder.precision,
            "trust_remote_code": False,
        }

    def prepare(self, text_sets: list[TextSet], progress: ProgressCallback | None = None) -> EncodeStats:
        started = time.perf_counter()
        # Every unique role-prefixed text, in the order its language first appears.
        row_of_key: dict[bytes, int] = {}
        texts: list[str] = []
        language_of_row: list[str] = []
        for text_set in text_sets:
            rows = np.empty(len(text_set.texts), dtype=np.int64)
            for position, text in enumerate(self.encoder.prefixed(list(text_set.texts), text_set.role)):
                key = text_key(text)
                row = row_of_key.get(key)
                if row is None:
                    row = row_of_key[key] = len(texts)
                    texts.append(text)
                    language_of_row.append(text_set.language)
                rows[position] = row
            self._rows[text_set.key] = rows
        keys = list(row_of_key)
        total = len(keys)
        self.cache.refresh()
        cached = self.cache.contains(keys)
        stats = EncodeStats(texts_total=total, texts_from_cache=int(cached.sum()))
        vectors: np.ndarray | None = None
        if cached.any():
            cached_rows = np.flatnonzero(cached)
            found = self.cache.get([keys[row] for row in cached_rows])
            vectors = np.empty((total, found.shape[1]), dtype=np.float32)
            vectors[cached_rows] = found
        missing = np.flatnonzero(~cached)
        missing_by_language: dict[str, list[int]] = {}
        for row in missing.tolist():
            missing_by_language.setdefault(language_of_row[row], []).append(row)
        languages = list(missing_by_language)
        if progress:
            progress("ENCODING", 0.0, f"{stats.texts_from_cache} of {total} texts already cached")
        writer = _ChunkWriter(self.cache, keys, total, self.chunk_size, background=self.device.startswith("cuda"))
        for number, language in enumerate(languages, start=1):
            # Similar lengths together keep padding (wasted compute) low; with the fixed batch plan
            # (a float32 model on a CPU) the groups of chunk_size texts in this order are exactly the
            # engine's earlier calls.
            missing_by_language[language].sort(key=lambda row: len(texts[row]))
            rows = np.asarray(missing_by_language[language], dtype=np.int64)

            def report(done: int, number: int = number, language: str = language) -> None:
                stats.texts_encoded = done
                if progress:
                    detail = f"language {number} of {len(languages)} ({language}): {done} of {len(missing)} texts"
                    progress("ENCODING", done / len(missing), detail)

            writer.on_flush = report

            def store(positions: np.ndarray, encoded: np.ndarray, rows: np.ndarray = rows) -> None:
                writer.add(rows[positions], encoded)

            self.encoder.encode_prefixed(
                [texts[row] for row in rows.tolist()], on_batch=store, group_size=self.chunk_size
            )
            writer.flush()
        writer.finish()
        if writer.vectors is not None:
            if vectors is None:
                vectors = writer.vectors
            else:
                encoded_rows = np.flatnonzero(~cached)
                vectors[encoded_rows] = writer.vectors[encoded_rows]
        self._matrix = vectors if vectors is not None else np.empty((0, 0), dtype=np.float32)
        stats.seconds = time.perf_counter() - started
        stats.batch_size = self.encoder.batch_size
        stats.batch_halvings = self.encoder.halvings
        pipeline = self.encoder.pipeline()
        stats.token_budget = pipeline.token_budget if pipeline is not None else None
        stats.tokeniser = (pipeline.tokenised_in or None) if pipeline is not None else None
        stats.width_multiple = pipeline.widths_rounded_to if pipeline is not None else None
        stats.precision = self.encoder.precision
        return stats

    def vectors(self, text_set: TextSet) -> np.ndarray:
        rows: np.ndarray = self._matrix[self._rows[text_set.key]]
        return rows

    def scorer(self, queries: TextSet, documents: TextSet | list[TextSet]) -> BlockScorer:
        pool = [documents] if isinstance(documents, TextSet) else documents
        doc_vectors = np.concatenate([self.vectors(text_set) for text_set in pool])
        return DenseScorer(self.vectors(queries), doc_vectors, device=self.device, precision=self.score_precision)

    def pair_features(
        self, personas: TextSet, instructions: TextSet, persona_rows: np.ndarray, instruction_rows: np.ndarray
    ) -> np.ndarray:
        # In float64, so that the classifier's features carry no float32 rounding of their own.
        u = self.vectors(personas)[persona_rows].astype(np.float64)
        v = self.vectors(instructions)[instruction_rows].astype(np.float64)
        return np.hstack([np.abs(u - v), u * v])

    def tokenizer_coverage(self, text_sets: list[TextSet]) -> dict[str, Any] | None:
        by_script: dict[str, dict[str, Any]] = {}
        texts_by_script: dict[str, list[str]] = {}
        languages_by_script: dict[str, list[str]] = {}
        for text_set in text_sets:
            info = BY_CODE.get(text_set.language)
            script = info.script if info else "unknown"
            texts_by_script.setdefault(script, []).extend(text_set.texts)
            if text_set.language not in languages_by_script.setdefault(script, []):
                languages_by_script[script].append(text_set.language)
        for script, texts in texts_by_script.items():
            unique = list(dict.fromkeys(texts))
            # A deterministic sample bounds the cost at full scale (1.3 M texts); the rates of 20,000
            # texts are as precise as the leaderboard shows them.
            sample = unique[:: max(1, len(unique) // COVERAGE_SAMPLE)][:COVERAGE_SAMPLE]
            measured = self.encoder.tokenizer_coverage(sample)
            if measured is None:
                return None
            source = (
                "engine (all texts)"
                if len(sample) == len(unique)
                else f"engine (every {len(unique) // len(sample)}th text)"
            )
            by_script[script] = {"languages": languages_by_script[script], **measured, "source": source}
        return by_script


class LexicalBackend(Backend):
    """BM25 or character n-gram TF-IDF. Nothing to encode; indexes are built per document pool.

    For T4 a lexical model has no embedding, so its only pair feature is its own similarity score
    of the pair (BM25 with the persona as query, or TF-IDF cosine) within the language's pool.
    """

    kind = "lexical"

    def __init__(self, name: str) -> None:
        if name not in lexical.LEXICAL_NAMES:
            raise ValueError(f"unknown lexical baseline {name!r}")
        self.name = name
        parameters = lexical.BM25Index.parameters if name == lexical.BM25_NAME else lexical.TfidfIndex.parameters
        import bm25s
        import sklearn

        library = f"bm25s=={bm25s.__version__}" if name == lexical.BM25_NAME else f"scikit-learn=={sklearn.__version__}"
        self.parameters = {**parameters, "library": library}
        description = repr(sorted(self.parameters.items())) + lexical.TOKEN.pattern
        self.revision = "lexical-" + hashlib.sha256(description.encode("utf-8")).hexdigest()[:16]
        self._indexes: dict[str, lexical.BM25Index | lexical.TfidfIndex] = {}

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "requested_revision": "",
            "resolved_revision": self.revision,
            "is_local": False,
            "prompt_family": "none",
            "prompts": {},
            "parameters": {
                key: list(value) if isinstance(value, tuple) else value for key, value in self.parameters.items()
            },
        }

    def prepare(self, text_sets: list[TextSet], progress: ProgressCallback | None = None) -> EncodeStats:
        if progress:
            progress("ENCODING", 1.0, "lexical baseline: nothing to encode")
        return EncodeStats()

    def _index(self, documents: TextSet | list[TextSet]) -> lexical.BM25Index | lexical.TfidfIndex:
        sets = [documents] if isinstance(documents, TextSet) else documents
        # One index per pool: T1 and every T2 pair into a language share its instruction index.
        pool = "+".join(f"{text_set.language}/{text_set.field}" for text_set in sets)
        if pool not in self._indexes:
            texts = [text for text_set in sets for text in text_set.texts]
            self._indexes[pool] = lexical.build_index(self.name, texts)
        return self._indexes[pool]

    def scorer(self, queries: TextSet, documents: TextSet | list[TextSet]) -> BlockScorer:
        return self._index(documents).scorer(list(queries.texts), device=self.device)

    def pair_features(
        self, personas: TextSet, instructions: TextSet, persona_rows: np.ndarray, instruction_rows: np.ndarray
    ) -> np.ndarray:
        index = self._index(instructions)
        queries = [personas.texts[row] for row in persona_rows]
        return index.pair_scores(queries, np.asarray(instruction_rows))[:, None]


def release_models() -> int:
    """Free every model no longer referenced (reference cycles included) and the accelerator's cached
    blocks; returns how many loaded models are still alive (0 after a finished run).

    A finished run's backend and encoder form reference cycles (closures, the pipeline), which
    Python frees only at its next cycle collection: until then the model would stay in GPU memory,
    and an out-of-memory retry in the same worker process would load a second copy beside it.
    """
    import gc

    import torch

    # A full collection walks every object of the process (0.4 s in a long-lived worker or test
    # process); with no model alive (a lexical baseline, or a model already freed by reference
    # counting) there is nothing for it to free, so it runs only when a model is still alive.
    if LOADED_MODELS:
        gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return len(LOADED_MODELS)


@dataclass
class LoadedModel:
    backend: Backend
    timings: dict[str, float] = field(default_factory=dict)


def load_backend(
    name: str,
    *,
    revision: str | None = None,
    cache_root: BlobStore | Path | str,
    device: str | None = None,
    batch_size: int | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    progress: ProgressCallback | None = None,
    resolved: ResolvedModel | None = None,
    precision: str | None = None,
) -> LoadedModel:
    """Resolve, download and load a model by name (hub id, local folder, or a lexical baseline name).

    `precision` None follows the engine's policy (encoders.encoding_precision: float64 on a CPU, so
    that every processor gives the same figures). "float32" is a researcher's opt-in for a quick look
    on a CPU (`python -m evaluation.engine --precision float32`): the float32 forward pass in
    token-budgeted batches, about half the float64 one's time, whose figures can differ from the
    board's where a document lies within float32 noise of a tie edge or a 10th place. The manifest
    names the precision, and its embeddings are cached apart from the float64 ones.
    """
    if precision is not None and precision not in OPT_IN_PRECISIONS:
        raise EngineError(f"Unknown precision {precision!r}: choose one of {', '.join(OPT_IN_PRECISIONS)}.")
    timings: dict[str, float] = {}
    if name in lexical.LEXICAL_NAMES:
        if progress:
            progress("DOWNLOADING", 1.0, "lexical baseline: nothing to download")
        return LoadedModel(LexicalBackend(name), timings)
    started = time.perf_counter()
    resolved = resolved or resolve_model(name, revision)
    resolved = download_model(resolved, progress)
    timings["download"] = time.perf_counter() - started
    started = time.perf_counter()
    # A float32 model on a CPU would otherwise cut its batches as sentence-transformers' `encode` does
    # (the "fixed" plan, kept for checking the pipeline against `encode`); the opt-in is for speed, so
    # its batches hold texts of one token count each and spend nothing on padding.
    quick = precision == "float32" and not (device or default_device()).startswith("cuda")
    encoder = SentenceTransformerEncoder.load(
        resolved,
        device=device,
        batch_size=batch_size,
        precision=precision,
        token_budget=CPU_TOKEN_BUDGET if quick else None,
    )
    timings["load"] = time.perf_counter() - started
    cache = EmbeddingCache(cache_root, name, resolved.commit, encoder.precision)
    return LoadedModel(DenseBackend(encoder, cache, resolved=resolved, chunk_size=chunk_size), timings)
