"""Each re-run's bootstrap replicates, kept at evaluation time so that pages never re-bootstrap rank files.

The rank intervals and the paired comparisons need, for every re-run, its score in each bootstrap
replicate (the engine's seeded item draws, the same for every run). Recomputing them from the per-query
rank files on every page view costs seconds with 200 models, so the worker writes them once, beside the
rank files, when a run finishes:

- `<task>/*/*/<metric>`: the replicates of the run's average over all its units of the task (every
  retrieval metric), which is what the default views rank;
- `<task>/<source>/<target or ->/<metric>`: each unit's replicates of the main metric, whose mean over
  any subset of units is exactly the replicates of the average over that subset (a resample's mean is
  linear in the values, and every unit uses the same draws).

Values are float64, so intervals read from them equal the engine's to the last bits.

A board reads one file per re-run on every rebuild, so the file is laid out for that read (layout 2,
`runs/<id>/replicates.bin`, since 2026-11-30). It holds two blocks, each a 4-byte little-endian length,
that many bytes of JSON, then its rows as little-endian float64 (rows × resamples):

1. the averages: JSON `{"layout": 2, "rank_files": <sha256 of the rank files' fingerprint>,
   "resamples": R, "keys": [<task>/*/*/<metric>, ...], "counts": {<task>/*/count/<metric>: units}}`;
2. the units: JSON `{"keys": [<task>/<source>/<target or ->/<metric>, ...]}`.

The file starts with the 8 bytes `NRDREPL2`. The overview reads the first block's keys and then only
the rows it asks for; a language subset reads on into the second block's keys and its few rows. The
first layout (`replicates.npz`, numpy's zip with one member per key, 351 for a 12-language run) took
3.2-3.6 s to open and read for a 1,000-run board, against 0.15-0.24 s now (measured on the files of
bench/leaderboard_latency.py, 2026-11-30, on a 2-core Intel Xeon). Files of the first layout are
still read.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, default_storage

from evaluation.engine import bootstrap
from evaluation.engine.metrics import per_query_retrieval
from evaluation.engine.registry import TASKS

logger = logging.getLogger(__name__)

ALL = "*"
UNIT_METRICS = frozenset(spec.main_metric for spec in TASKS.values() if spec.kind == "retrieval")


def replicates_path(run_id: int) -> str:
    return f"runs/{run_id}/replicates.bin"


def first_layout_path(run_id: int) -> str:
    """Where runs evaluated before layout 2 keep their replicates (numpy's zip, one member per key)."""
    return f"runs/{run_id}/replicates.npz"


def unit_key(task: str, source: str, target: str | None, metric: str) -> str:
    return f"{task}/{source}/{target or '-'}/{metric}"


def average_key(task: str, metric: str) -> str:
    return f"{task}/{ALL}/{ALL}/{metric}"


def compute_replicates(
    ranks: Iterable[tuple[str, str, str | None, np.ndarray]], *, seed: int, n_resamples: int
) -> dict[str, np.ndarray]:
    """The replicate arrays of a run from its per-query ranks: (task, source, target, ranks) per unit."""
    arrays: dict[str, np.ndarray] = {}
    by_task: dict[str, list[np.ndarray]] = {}
    for task, source, target, unit_ranks in ranks:
        values = per_query_retrieval(unit_ranks)
        metrics = list(values)
        samples = bootstrap.bootstrap_means(np.stack([values[m] for m in metrics]), n_resamples, seed)
        by_task.setdefault(task, []).append(samples)
        for index, metric in enumerate(metrics):
            if metric in UNIT_METRICS:
                arrays[unit_key(task, source, target, metric)] = samples[index]
    for task, unit_samples in by_task.items():
        mean = np.mean(np.stack(unit_samples), axis=0)
        for index, metric in enumerate(per_query_retrieval(np.ones(1))):
            arrays[average_key(task, metric)] = mean[index]
            arrays[f"{task}/{ALL}/count/{metric}"] = np.asarray([len(unit_samples)])
    return arrays


FINGERPRINT = "_rank_files"
MAGIC = b"NRDREPL2"


def rank_fingerprint(rank_paths: Iterable[str]) -> str:
    """What ties the replicates to the rank files they were computed from (their storage paths)."""
    return "\n".join(sorted(rank_paths))


def fingerprint_digest(fingerprint: str) -> str:
    """What a layout-2 file keeps of the fingerprint (and RunQuerySet.with_stored_summaries computes in
    the database): its sha256, in hexadecimal."""
    return hashlib.sha256(fingerprint.encode()).hexdigest()


@dataclass(frozen=True)
class RankFilesCheck:
    """What kept replicates are checked against: the digest of the run's rank-file fingerprint, which a
    layout-2 file keeps, and the fingerprint itself, asked for only by a file of the first layout (which
    kept it whole) so that a board that has the digest alone never reads the rank files' paths."""

    digest: str
    fingerprint: Callable[[], str]

    @classmethod
    def of(cls, fingerprint: str) -> RankFilesCheck:
        return cls(fingerprint_digest(fingerprint), lambda: fingerprint)


def _is_count(key: str) -> bool:
    return key.split("/")[1:3] == [ALL, "count"]


def _is_average(key: str) -> bool:
    return key.split("/")[1:3] == [ALL, ALL]


def _matrix(rows: list[np.ndarray]) -> np.ndarray:
    return np.stack([np.asarray(row, dtype=np.float64) for row in rows]) if rows else np.empty((0, 0))


def write_replicates(run_id: int, arrays: dict[str, np.ndarray], rank_paths: Iterable[str] = ()) -> str:
    """Write the run's replicate arrays (`compute_replicates`) in layout 2; the path written."""
    averages = [key for key in arrays if _is_average(key)]
    units = [key for key in arrays if not _is_average(key) and not _is_count(key)]
    rows = _matrix([arrays[key] for key in averages + units])
    head = {
        "layout": 2,
        "rank_files": fingerprint_digest(rank_fingerprint(rank_paths)),
        "resamples": int(rows.shape[1]) if rows.size else 0,
        "keys": averages,
        "counts": {key: int(np.asarray(arrays[key]).reshape(-1)[0]) for key in arrays if _is_count(key)},
    }
    buffer = io.BytesIO()
    buffer.write(MAGIC)
    for block, values in ((head, rows[: len(averages)]), ({"keys": units}, rows[len(averages) :])):
        encoded = json.dumps(block).encode()
        buffer.write(struct.pack("<I", len(encoded)))
        buffer.write(encoded)
        buffer.write(np.ascontiguousarray(values, dtype="<f8").tobytes())
    for path in (replicates_path(run_id), first_layout_path(run_id)):
        if default_storage.exists(path):
            default_storage.delete(path)
    return default_storage.save(replicates_path(run_id), ContentFile(buffer.getvalue()))


class _SecondLayout:
    """An open layout-2 file (after its magic): the averages' keys read, then each row when it is asked for
    (a board asks for a few), and the units' keys when a unit is first asked for (the whole of each block
    at once from a file that cannot seek)."""

    def __init__(self, handle: IO[bytes], path: str) -> None:
        self._handle = handle
        self._path = path
        self._head: dict[str, Any] = {}
        self._rows: dict[str, tuple[int, int]] = {}
        # Each block's first byte of values and number of rows; its values, once read whole.
        self._starts: list[tuple[int, int]] = []
        self._blocks: dict[int, np.ndarray] = {}
        self._seekable = bool(handle.seekable())
        self._units_unreadable = False
        self._read_block()

    def _read_block(self, size: int | None = None) -> None:
        """Read the next block's keys, and its rows now only from an unseekable file (otherwise each row
        is read when asked for). With the file's `size`, a block that does not end within it is refused."""
        (length,) = struct.unpack("<I", _read_exactly(self._handle, 4))
        block = json.loads(_read_exactly(self._handle, length))
        if not self._starts:
            self._head = block
        keys = block["keys"]
        member = len(self._starts)
        start = self._handle.tell() if self._seekable else 0
        if not self._seekable:
            values = np.frombuffer(_read_exactly(self._handle, self._row_bytes * len(keys)), dtype="<f8")
            self._blocks[member] = values.reshape(len(keys), self._resamples)
        elif size is not None and start + self._row_bytes * len(keys) > size:
            raise ValueError("a replicate file ends early")
        # A block's keys are known only once what is read of it has been read whole.
        self._starts.append((start, len(keys)))
        self._rows.update({key: (member, row) for row, key in enumerate(keys)})

    @property
    def _resamples(self) -> int:
        return int(self._head["resamples"])

    @property
    def _row_bytes(self) -> int:
        return 8 * self._resamples

    def computed_from(self, rank_files: RankFilesCheck) -> bool:
        return bool(self._head.get("rank_files") == rank_files.digest)

    def count(self, key: str) -> int | None:
        found = self._head["counts"].get(key)
        return None if found is None else int(found)

    def has(self, key: str) -> bool:
        if key not in self._rows and len(self._starts) == 1 and not _is_average(key) and not self._units_unreadable:
            try:
                size = None
                if self._seekable:
                    # A language subset reads a few rows of the 2 MB block: its keys, then each row asked for.
                    size = self._handle.seek(0, io.SEEK_END)
                    start, rows = self._starts[0]
                    self._handle.seek(start + rows * self._row_bytes)
                self._read_block(size)
            except UNREADABLE as error:
                # The averages stay readable; requests over some units are recomputed by the caller.
                logger.warning("The units' block of %s cannot be read (%s); ignoring it.", self._path, error)
                self._units_unreadable = True
        return key in self._rows

    def value(self, key: str) -> np.ndarray:
        """The replicates kept under `key`, as an array of their own (not a view of a whole block)."""
        member, row = self._rows[key]
        if member in self._blocks:
            return self._blocks[member][row].astype(np.float64)
        start, _ = self._starts[member]
        self._handle.seek(start + row * self._row_bytes)
        return np.frombuffer(_read_exactly(self._handle, self._row_bytes), dtype="<f8").astype(np.float64)


# What a damaged or foreign file raises while its blocks are read (json.JSONDecodeError is a ValueError).
UNREADABLE = (ValueError, KeyError, TypeError, struct.error)


def _read_exactly(handle: IO[bytes], size: int) -> bytes:
    data = handle.read(size)
    if len(data) != size:
        raise ValueError("a replicate file ends early")
    return data


class _FirstLayout:
    """An open layout-1 file (numpy's zip, one member per key)."""

    def __init__(self, stored: Any) -> None:
        self._stored = stored

    def computed_from(self, rank_files: RankFilesCheck) -> bool:
        files = self._stored.files
        return FINGERPRINT in files and str(self._stored[FINGERPRINT][0]) == rank_files.fingerprint()

    def count(self, key: str) -> int | None:
        return int(self._stored[key][0]) if key in self._stored.files else None

    def has(self, key: str) -> bool:
        return key in self._stored.files

    def value(self, key: str) -> np.ndarray:
        found: np.ndarray = np.asarray(self._stored[key])
        return found


def read_samples(
    run_id: int, rank_paths: Iterable[str], task: str, metric: str, units: Sequence[tuple[str, str | None]]
) -> np.ndarray | None:
    """The replicates of the run's average of `metric` over `units` of `task`, or None when not kept.

    Only replicates computed from the run's current rank files (`rank_paths`) are read: a file left by
    an earlier evaluation of the same run id, or of another database, is ignored."""
    request = (task, metric, tuple(units))
    return read_many_samples(run_id, rank_fingerprint(rank_paths), [request])[request]


Request = tuple[str, str, tuple[tuple[str, str | None], ...]]


def read_many_samples(
    run_id: int, rank_files: str | RankFilesCheck, requests: Iterable[Request]
) -> dict[Request, np.ndarray | None]:
    """`read_samples` of several (task, metric, units), in one opening of the run's replicate file;
    `rank_files` is the `rank_fingerprint` of the run's rank files, or a check built from it."""
    requests = list(requests)
    check = rank_files if isinstance(rank_files, RankFilesCheck) else RankFilesCheck.of(rank_files)
    path = replicates_path(run_id)
    opened = _open_if_stored(path)
    if opened is not None:
        with opened as handle:
            try:
                if handle.read(len(MAGIC)) != MAGIC:
                    raise ValueError("it does not start as a replicate file does")
                stored = _SecondLayout(handle, path)
            except UNREADABLE as error:
                # Damaged or foreign: treated as no replicates kept, which the caller recomputes from the rank files.
                logger.warning("%s cannot be read (%s); ignoring it.", path, error)
                return dict.fromkeys(requests)
            return _read(stored, check, requests, path)
    path = first_layout_path(run_id)
    if default_storage.exists(path):
        with default_storage.open(path) as handle, np.load(handle) as stored:
            return _read(_FirstLayout(stored), check, requests, path)
    return dict.fromkeys(requests)


def _open_if_stored(path: str) -> IO[bytes] | _RangedObject | None:
    """The stored file at `path` opened for reading, or None when there is none.

    A board opens a replicate file per re-run on every rebuild and reads a few of its rows. On a local
    file system the file is opened once (asking the storage first whether it exists doubled the system
    calls and Django's path checks: about 30 ms of a 1,000-run overview's rebuild). In an S3-compatible
    bucket, django-storages' file asks for the object's head when opened and downloads the whole object
    on the first read (2.3 MB for a 12-language run, 2.3 GB for a board of 1,000), so its object is read
    by ranges instead (`_RangedObject`). Other storages are asked whether the file exists, then opened."""
    if isinstance(default_storage, FileSystemStorage):
        try:
            return open(default_storage.path(path), "rb")
        except FileNotFoundError:
            return None
    try:
        handle: IO[bytes] = default_storage.open(path, "rb")
    except FileNotFoundError:
        return None
    stored_object = getattr(handle, "obj", None)
    if stored_object is not None and hasattr(stored_object, "content_length"):
        return _RangedObject(stored_object)
    return handle


class _RangedObject:
    """An object of an S3-compatible bucket (a boto3 `s3.Object` whose head is loaded) read as a seekable
    file by HTTP range requests: the first, from the start, of `FIRST` bytes, so that the head and the
    averages' rows of a replicate file (about 130 kB for 16 averages of 1,000 resamples) come in one
    request; each later one of at least `CHUNK` bytes (the units' keys, or one or a few neighbouring rows
    of a language subset, which lie apart in a 2 MB block)."""

    FIRST = 256 * 1024
    CHUNK = 64 * 1024

    def __init__(self, stored_object: Any) -> None:
        self._object = stored_object
        self._size = int(stored_object.content_length)
        self._position = 0
        self._window_start = 0
        self._window = b""

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        self._position = max(0, base + offset)
        return self._position

    def read(self, size: int = -1) -> bytes:
        end = self._size if size < 0 else min(self._size, self._position + size)
        if end <= self._position:
            return b""
        window_end = self._window_start + len(self._window)
        if not (self._window_start <= self._position and end <= window_end):
            least = self.FIRST if self._position == 0 else self.CHUNK
            fetch_end = min(self._size, max(end, self._position + least))
            body = self._object.get(Range=f"bytes={self._position}-{fetch_end - 1}")["Body"]
            self._window_start, self._window = self._position, body.read()
        offset = self._position - self._window_start
        data = self._window[offset : offset + end - self._position]
        self._position += len(data)
        return data

    def close(self) -> None:
        self._window = b""

    def __enter__(self) -> _RangedObject:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _read(
    stored: _SecondLayout | _FirstLayout, rank_files: RankFilesCheck, requests: list[Request], path: str
) -> dict[Request, np.ndarray | None]:
    if not stored.computed_from(rank_files):
        return dict.fromkeys(requests)
    found: dict[Request, np.ndarray | None] = {}
    for request in requests:
        try:
            found[request] = _samples_of(stored, *request)
        except UNREADABLE as error:
            logger.warning("%s cannot be read for %s %s (%s); ignoring it.", path, request[0], request[1], error)
            found[request] = None
    return found


def _samples_of(
    stored: _SecondLayout | _FirstLayout, task: str, metric: str, units: Sequence[tuple[str, str | None]]
) -> np.ndarray | None:
    average = average_key(task, metric)
    if stored.count(f"{task}/{ALL}/count/{metric}") == len(units) and stored.has(average):
        return stored.value(average)
    keys = [unit_key(task, source, target, metric) for source, target in units]
    if not keys or any(not stored.has(key) for key in keys):
        return None
    mean: np.ndarray = np.mean(np.stack([stored.value(key) for key in keys]), axis=0)
    return mean
