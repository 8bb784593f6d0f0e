"""The engine's embedding cache and pair sets in the site's object store, when workers share no disk.

With EVALUATION_FILES_IN_STORAGE (on by default once AWS_STORAGE_BUCKET_NAME names an S3-compatible
bucket), the engine's blob stores (evaluation/engine/blobs.py) are folders of the default storage,
the same bucket that holds run artefacts: every worker host reads and writes one embedding cache and
one set of pair sets, so a split encoding or a re-run finishes on whichever host is free. Without
it they stay local folders (EMBEDDING_CACHE_DIR, PAIR_SET_DIR), the embedded default.

Objects are immutable once written (chunk names are random, pair sets are keyed by their content), so
a host downloads each one at most once into a scratch folder of its own (EVALUATION_STORE_SCRATCH_DIR)
and reads it there, through a memory map for the cache's vectors.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import Storage, storages

from evaluation.engine.blobs import BlobStore


@dataclass(frozen=True)
class StorageBlobStore:
    """A folder (`prefix`) of a Django storage as the engine's blob store."""

    alias: str
    prefix: str
    scratch: Path

    @property
    def storage(self) -> Storage:
        return storages[self.alias]

    def _key(self, name: str) -> str:
        return f"{self.prefix}/{name}"

    def names(self, prefix: str, suffix: str = "") -> list[str]:
        try:
            _, files = self.storage.listdir(self._key(prefix))
        except FileNotFoundError:
            return []
        return sorted(f"{prefix}/{file}" for file in files if file.endswith(suffix) and not file.startswith("."))

    def exists(self, name: str) -> bool:
        return bool(self.storage.exists(self._key(name)))

    def write(self, name: str, data: bytes) -> None:
        # One PUT: an S3 object is visible whole or not at all. The storage must keep the name as
        # given (django-storages' S3Storage overwrites, AWS_S3_FILE_OVERWRITE); one that renames
        # would lose the object, so that is refused loudly.
        saved = self.storage.save(self._key(name), ContentFile(data))
        if saved != self._key(name):
            self.storage.delete(saved)
            raise RuntimeError(f"The storage renamed {self._key(name)!r} to {saved!r}; it must overwrite.")

    def local_path(self, name: str) -> Path:
        path = self.scratch / self.prefix / name
        if path.is_file():
            return path
        # django-storages' S3Storage raises FileNotFoundError for a missing key, as a folder would.
        with self.storage.open(self._key(name), "rb") as handle:
            data = handle.read()
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
        temporary.write_bytes(data)
        os.replace(temporary, path)
        return path


def _shared(prefix: str) -> StorageBlobStore:
    return StorageBlobStore("default", prefix, Path(settings.EVALUATION_STORE_SCRATCH_DIR))


def embedding_cache_store() -> BlobStore | Path:
    """Where the engine keeps the embedding cache: the shared storage, or EMBEDDING_CACHE_DIR."""
    if settings.EVALUATION_FILES_IN_STORAGE:
        return _shared("embedding-cache")
    return Path(settings.EMBEDDING_CACHE_DIR)


def pair_set_store() -> BlobStore | Path:
    """Where the engine keeps T4's pair sets and T5's pools: the shared storage, or PAIR_SET_DIR."""
    if settings.EVALUATION_FILES_IN_STORAGE:
        return _shared("pair-sets")
    return Path(settings.PAIR_SET_DIR)
