"""Where the engine keeps what it builds once and reads many times: the embedding cache and the stored
pair sets. No Django.

A `BlobStore` is a flat namespace of immutable files ("objects") named by "/"-separated paths. The
engine only ever writes an object whole, under a name that says what it holds (a chunk's random name,
a pair set's content key), so a store needs no locking: an object is either absent or complete.

`FolderStore` keeps the objects in a local folder (the embedded default, and a folder shared by the
workers of one host). The site fills in a store of its own for an S3-compatible bucket
(evaluation/object_store.py), so that workers on several machines share the cache and the pair sets
with nothing but that bucket between them. Readers get a local file either way (`local_path`): the
folder's own file, or a copy a remote store downloaded once into a scratch folder of its host, so the
embedding cache keeps reading its vectors through a memory map.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable


@runtime_checkable
class BlobStore(Protocol):
    def names(self, prefix: str, suffix: str = "") -> list[str]:
        """The names of the objects directly under the folder `prefix` that end with `suffix`, sorted."""
        ...

    def exists(self, name: str) -> bool: ...

    def write(self, name: str, data: bytes) -> None:
        """Store the object whole: a reader never sees part of it."""
        ...

    def local_path(self, name: str) -> Path:
        """A local file holding the object's bytes; FileNotFoundError when there is no such object."""
        ...


@dataclass(frozen=True)
class FolderStore:
    """Objects as files under a local folder, each written to a temporary name and renamed into place."""

    root: Path

    def names(self, prefix: str, suffix: str = "") -> list[str]:
        folder = self.root / prefix
        if not folder.is_dir():
            return []
        return sorted(
            f"{prefix}/{path.name}" if prefix else path.name
            for path in folder.iterdir()
            if path.name.endswith(suffix) and not path.name.startswith(".") and path.is_file()
        )

    def exists(self, name: str) -> bool:
        return (self.root / name).is_file()

    def write(self, name: str, data: bytes) -> None:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        # Hidden, so that listings skip a file a crashed writer left behind.
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)

    def local_path(self, name: str) -> Path:
        path = self.root / name
        if not path.is_file():
            raise FileNotFoundError(f"No object {name!r} under {self.root}")
        return path


def as_store(where: BlobStore | Path | str) -> BlobStore:
    """A store as given, or a `FolderStore` of a folder's path."""
    if isinstance(where, (str, os.PathLike)):
        return FolderStore(Path(where))
    return where
