"""An on-disk embedding cache that is written chunk by chunk, so a killed run loses at most one chunk.

Layout: ``<root>/<model slug>-<hash of model name>/<revision slug>/<precision>/`` holds pairs of files per chunk,
``<chunk>.vectors.npy`` (float32, one row per text) and ``<chunk>.keys.npy`` (the SHA-256 digests of
the role-prefixed texts, 32 bytes each). Each file is stored whole (evaluation/engine/blobs.py: renamed
into place in a folder, one PUT in an object store), and the keys file is stored last, so a chunk becomes
visible only once its vectors are whole. Readers ignore vector files without keys (left by a crash
between the two writes). Several workers may write to the same store, on one host or on many: chunk
names are unique and a key stored twice is simply read once.
"""

from __future__ import annotations

import hashlib
import io
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluation.engine.blobs import BlobStore, FolderStore, as_store

KEY_DTYPE = np.dtype("S32")


def text_key(prefixed_text: str) -> bytes:
    """The cache key of one text as the model sees it (prompt included): its SHA-256 digest."""
    return hashlib.sha256(prefixed_text.encode("utf-8")).digest()


def _slug(value: str, limit: int = 80) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", value).strip("._") or "x"
    return cleaned[:limit]


@dataclass(frozen=True)
class CacheStats:
    chunks: int
    rows: int
    unique_keys: int


class EmbeddingCache:
    """Cached embeddings of one model at one resolved revision."""

    def __init__(
        self, root: BlobStore | Path | str, model_name: str, revision: str, precision: str = "float32"
    ) -> None:
        name_hash = hashlib.sha256(model_name.encode("utf-8")).hexdigest()[:10]
        self.store = as_store(root)
        # Half-precision (GPU) and full-precision (CPU) embeddings differ in the last digits, so they
        # are kept apart: a run resumed on another kind of device never mixes the two.
        self.prefix = f"{_slug(model_name)}-{name_hash}/{_slug(revision, 100)}/{precision}"
        # The chunks' folder when the store is a local folder (None in an object store).
        self.folder: Path | None = self.store.root / self.prefix if isinstance(self.store, FolderStore) else None
        self._keys = np.empty(0, dtype=KEY_DTYPE)
        self._chunk_of_key = np.empty(0, dtype=np.int32)
        self._row_of_key = np.empty(0, dtype=np.int64)
        self._chunks: list[str] = []
        self._loaded = False

    # Reading -----------------------------------------------------------------------------------

    def _chunk_names(self) -> list[str]:
        names = self.store.names(self.prefix, ".keys.npy")
        return sorted(name.rpartition("/")[2].removesuffix(".keys.npy") for name in names)

    def _file(self, chunk: str, kind: str) -> Path:
        return self.store.local_path(f"{self.prefix}/{chunk}.{kind}.npy")

    def refresh(self) -> None:
        """(Re)build the sorted key index from the chunk files on disk."""
        chunks = self._chunk_names()
        keys, chunk_ids, rows = [], [], []
        for index, chunk in enumerate(chunks):
            chunk_keys = np.load(self._file(chunk, "keys"))
            keys.append(chunk_keys)
            chunk_ids.append(np.full(len(chunk_keys), index, dtype=np.int32))
            rows.append(np.arange(len(chunk_keys), dtype=np.int64))
        if keys:
            all_keys = np.concatenate(keys)
            order = np.argsort(all_keys, kind="stable")
            self._keys = all_keys[order]
            self._chunk_of_key = np.concatenate(chunk_ids)[order]
            self._row_of_key = np.concatenate(rows)[order]
        else:
            self._keys = np.empty(0, dtype=KEY_DTYPE)
            self._chunk_of_key = np.empty(0, dtype=np.int32)
            self._row_of_key = np.empty(0, dtype=np.int64)
        self._chunks = chunks
        self._loaded = True

    def _ensure_loaded(self) -> None:
        if not self._loaded:
            self.refresh()

    def _positions(self, keys: np.ndarray) -> np.ndarray:
        """Index into the sorted key array for each key, or -1 where the key is not cached."""
        if len(self._keys) == 0 or len(keys) == 0:
            return np.full(len(keys), -1, dtype=np.int64)
        positions = np.searchsorted(self._keys, keys)
        clipped = np.minimum(positions, len(self._keys) - 1)
        found = self._keys[clipped] == keys
        return np.where(found, clipped, -1)

    def contains(self, keys: Iterable[bytes]) -> np.ndarray:
        """A boolean mask: which of `keys` are cached."""
        self._ensure_loaded()
        return self._positions(np.asarray(list(keys), dtype=KEY_DTYPE)) >= 0

    def get(self, keys: Iterable[bytes]) -> np.ndarray:
        """The cached vectors of `keys`, in order; every key must be cached."""
        self._ensure_loaded()
        key_array = np.asarray(list(keys), dtype=KEY_DTYPE)
        positions = self._positions(key_array)
        if (positions < 0).any():
            raise KeyError(f"{int((positions < 0).sum())} keys are not in the embedding cache")
        chunk_ids = self._chunk_of_key[positions]
        rows = self._row_of_key[positions]
        result: np.ndarray | None = None
        for chunk_id in np.unique(chunk_ids):
            vectors = np.load(self._file(self._chunks[chunk_id], "vectors"), mmap_mode="r")
            if result is None:
                result = np.empty((len(key_array), vectors.shape[1]), dtype=np.float32)
            selected = np.flatnonzero(chunk_ids == chunk_id)
            result[selected] = vectors[rows[selected]]
        if result is None:
            return np.empty((0, 0), dtype=np.float32)
        return result

    def stats(self) -> CacheStats:
        """How many chunks and rows are stored, and how many distinct texts they hold."""
        self.refresh()
        return CacheStats(len(self._chunks), len(self._keys), len(np.unique(self._keys)))

    # Writing -----------------------------------------------------------------------------------

    def put(self, keys: list[bytes], vectors: np.ndarray) -> None:
        """Store one chunk atomically (vectors first, keys last)."""
        if len(keys) != len(vectors):
            raise ValueError("keys and vectors differ in length")
        if not keys:
            return
        chunk = f"{uuid.uuid4().hex}"
        key_array = np.asarray(keys, dtype=KEY_DTYPE)
        self._write(f"{chunk}.vectors.npy", np.ascontiguousarray(vectors, dtype=np.float32))
        self._write(f"{chunk}.keys.npy", key_array)
        # The index is rebuilt lazily on the next read: rebuilding it after every chunk would make a
        # long run quadratic in its number of chunks, and the writer keeps what it encoded anyway.
        self._loaded = False

    def _write(self, name: str, array: np.ndarray) -> None:
        buffer = io.BytesIO()
        np.save(buffer, array)
        self.store.write(f"{self.prefix}/{name}", buffer.getvalue())
