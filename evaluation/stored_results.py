"""What a run stored, read in one place: its typed details and manifest, its rank files and its replicates.

A run stores its results in three kinds of places: run.details (the engine's `Details`, or a published
import's `PublishedDetails`), run.manifest (the engine's `Manifest`), and files in the default storage
that the details list (per-query rank files, evaluation/engine/rank_files.py) or that sit beside them
(the bootstrap replicates, evaluation/replicates.py). The leaderboard reads all of them through
`Run.results`, a `StoredResults`, and the few file helpers below; it never opens the storage or parses
the JSON itself, so the schema check, the layouts and the counting of storage reads live here only.

A `StoredResults` is kept on its Run object (Run.results) for as long as the run's details and manifest
are the same objects, so a page that reads one run for every column parses its details once, and
reads each bootstrap replicate once. `read_replicates` reads every replicate a page asks of a run in one
opening of the run's replicate file, where reading them column by column would open it once per column.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import IO, Any

import numpy as np
from django.core.files.storage import default_storage

from evaluation import rank_storage
from evaluation.engine import bootstrap
from evaluation.engine.results import SCHEMA_VERSION, Details, Interval, Manifest, RankFile
from evaluation.published import PublishedDetails
from evaluation.replicates import RankFilesCheck, fingerprint_digest, rank_fingerprint, read_many_samples

Unit = tuple[str, "str | None"]
# One replicate a page asks for: the run's average of a metric over some units of a task.
ReplicateRequest = tuple[str, str, tuple[Unit, ...]]


def file_exists(path: str) -> bool:
    """Whether a file a run listed is (still) in the default storage."""
    return default_storage.exists(path)


def file_size(path: str) -> int:
    return default_storage.size(path)


def open_file(path: str) -> IO[bytes] | None:
    """A stored file opened for reading (the caller closes it, e.g. a streamed download), or None when it is gone."""
    if not default_storage.exists(path):
        return None
    return default_storage.open(path, "rb")


def read_file(path: str) -> bytes | None:
    """A stored file's bytes, or None when it is gone."""
    if not default_storage.exists(path):
        return None
    with default_storage.open(path, "rb") as handle:
        data: bytes = handle.read()
    return data


def read_rank_arrays(path: str) -> dict[str, np.ndarray]:
    """The rank file at `path` in either stored layout (evaluation/rank_storage.py), its lengths read from
    the sibling file that keeps them."""
    folder = path.rpartition("/")[0]

    def sibling(name: str) -> Mapping[str, np.ndarray] | None:
        other = f"{folder}/{name}.npz" if folder else f"{name}.npz"
        if not default_storage.exists(other):
            return None
        with default_storage.open(other, "rb") as handle:
            # Read lazily: only the one array asked for is decompressed.
            arrays: Mapping[str, np.ndarray] = np.load(io.BytesIO(handle.read()))
        return arrays

    with default_storage.open(path, "rb") as handle:
        return rank_storage.load(handle.read(), sibling)


def read_gold_ranks(path: str) -> tuple[np.ndarray, np.ndarray] | None:
    """(query item ids, gold ranks) of a rank file, or None when the file is gone."""
    if not default_storage.exists(path):
        return None
    with default_storage.open(path) as handle:
        arrays = np.load(handle)
        return np.asarray(arrays["query_item_ids"]), np.asarray(arrays["ranks"])


@dataclass(frozen=True)
class StoredSummary:
    """What a board reads of a run's details and manifest, as the database extracted it
    (RunQuerySet.with_stored_summaries): the details' schema version and averages, the digest of the
    fingerprint of the rank files they list (evaluation.replicates.fingerprint_digest; empty when they
    list none) and the manifest's seed and bootstrap settings."""

    details: dict[str, Any]
    rank_digest: str
    bootstrap: dict[str, Any]
    # The tasks whose blocks of the details were asked for (those the run has are in `details`).
    blocks: frozenset[str] = frozenset()
    # A published run's details whole (what its import kept); None for a re-run.
    published: dict[str, Any] | None = None

    @classmethod
    def from_json(cls, text: str | None) -> StoredSummary:
        found = json.loads(text) if text else {}
        digest = found.get("rank_digest")
        blocks = found.get("blocks") if isinstance(found.get("blocks"), dict) else {}
        details = {key: found[key] for key in ("schema_version", "averages") if found.get(key) is not None}
        return cls(
            details={**details, **{task: block for task, block in blocks.items() if block is not None}},
            rank_digest=digest if isinstance(digest, str) else "",
            bootstrap={key: found[key] for key in ("seed", "bootstrap") if found.get(key) is not None},
            blocks=frozenset(blocks),
            published=found["published"] if isinstance(found.get("published"), dict) else None,
        )


class StoredResults:
    """One run's stored results, typed, each part read at most once (see the module's docstring).

    Built from the run's details and manifest, or from their `summary` with a `load` that fetches
    the two when something beyond the summary is asked for."""

    def __init__(
        self,
        run_id: int | None,
        details: Any,
        manifest: Any,
        *,
        published: bool,
        summary: StoredSummary | None = None,
        load: Callable[[], tuple[Any, Any]] | None = None,
    ) -> None:
        self.run_id = run_id
        self._details = details
        self._manifest = manifest
        self._published = published
        self._summary = summary
        self._load = load
        self._replicates: dict[ReplicateRequest, np.ndarray | None] = {}

    def reads(self, details: Any, manifest: Any, published: bool) -> bool:
        """Whether this reader still reads what the run holds (the same stored objects)."""
        return (
            self._load is None
            and details is self._details
            and manifest is self._manifest
            and published == self._published
        )

    @property
    def summarised(self) -> bool:
        """Whether this reader was built from a summary (whether or not it has fetched the whole since)."""
        return self._summary is not None

    def _stored(self) -> tuple[Any, Any]:
        """The run's details and manifest as stored, fetched now if this reader was built from a summary."""
        if self._load is not None:
            self._details, self._manifest = self._load()
            self._load = None
        return self._details, self._manifest

    @cached_property
    def details(self) -> Details:
        """The engine's details (empty for a run the engine has not written any for, a published run's too)."""
        return Details.from_dict(self._stored()[0])

    def details_of(self, tasks: Iterable[str]) -> Details:
        """Typed details holding at least the blocks of `tasks` and the averages: the whole details, or,
        for a run read from a summary that carries those blocks, the summary's parts alone (no rank
        files, script groups or other tasks), without fetching the rest."""
        if self._summary is not None and "details" not in self.__dict__ and set(tasks) <= self._summary.blocks:
            return self._summary_details
        return self.details

    @cached_property
    def _summary_details(self) -> Details:
        assert self._summary is not None
        return Details.from_dict(self._summary.details)

    @cached_property
    def averages(self) -> dict[str, dict[str, Interval]]:
        """The engine's averages with their joint intervals (`details.averages`, read from the summary
        when there is one)."""
        if self._summary is not None and "details" not in self.__dict__:
            return Details.averages_from_dict(self._summary.details)
        return self.details.averages

    @cached_property
    def rank_fingerprint(self) -> str:
        """The fingerprint of the rank files the engine listed (what kept replicates are checked against)."""
        return rank_fingerprint(entry.path for entry in self.ranks)

    @cached_property
    def rank_digest(self) -> str:
        """The digest of `rank_fingerprint` (read from the summary when there is one), empty when the
        engine listed no rank file."""
        if self._summary is not None:
            return self._summary.rank_digest
        fingerprint = self.rank_fingerprint
        return fingerprint_digest(fingerprint) if fingerprint else ""

    @property
    def has_rank_files(self) -> bool:
        """Whether the engine listed any per-query rank file (known from the summary when there is one)."""
        return bool(self.rank_digest)

    @cached_property
    def published(self) -> PublishedDetails:
        """What the import of a published run kept besides its scores (empty for a re-run; read from the
        summary, which carries a published run's details whole, when there is one)."""
        if not self._published:
            return PublishedDetails.from_dict(None)
        if self._summary is not None and self._summary.published is not None and "details" not in self.__dict__:
            return PublishedDetails.from_dict(self._summary.published)
        return PublishedDetails.from_dict(self._stored()[0])

    @cached_property
    def manifest(self) -> Manifest | None:
        """The engine's manifest; None for a run it has not written one for (queued, or published)."""
        manifest = self._stored()[1]
        if not isinstance(manifest, dict) or manifest.get("schema_version") != SCHEMA_VERSION:
            return None
        return Manifest.from_dict(manifest)

    @property
    def bootstrap_settings(self) -> tuple[int, int]:
        """(seed, resamples) of the run's bootstrap, as its manifest records them (the defaults without one)."""
        manifest = self._summary.bootstrap if self._summary is not None else self._manifest or {}
        return int(manifest.get("seed") or 0), int(
            (manifest.get("bootstrap") or {}).get("resamples", bootstrap.DEFAULT_RESAMPLES)
        )

    @property
    def ranks(self) -> list[RankFile]:
        """The per-query rank files the engine listed (none, without fetching the details, when the
        summary lists none)."""
        if self._summary is not None and not self._summary.rank_digest and "details" not in self.__dict__:
            return []
        return self.details.ranks

    def rank_file(self, task: str, source: str, target: str | None) -> RankFile | None:
        return next(
            (entry for entry in self.ranks if (entry.task, entry.source, entry.target) == (task, source, target)),
            None,
        )

    def read_replicates(self, requests: Iterable[tuple[str, str, Sequence[Unit]]]) -> None:
        """Read every asked-for replicate not read yet, in one opening of the run's replicate file."""
        wanted = [request for request in {_request(*asked) for asked in requests} if request not in self._replicates]
        if not wanted:
            return
        digest = self.rank_digest
        # A run without rank files has no replicates: nothing is opened for it. The fingerprint itself (the
        # rank files' paths, fetched with the details of a run read from its summary) is asked for only by a
        # replicate file of the first layout.
        check = RankFilesCheck(digest, lambda: self.rank_fingerprint)
        found = read_many_samples(self.run_id, check, wanted) if digest and self.run_id is not None else {}
        for request in wanted:
            self._replicates[request] = found.get(request)

    def replicates(self, task: str, metric: str, units: Sequence[Unit]) -> np.ndarray | None:
        """The kept bootstrap replicates of the run's average of `metric` over `units` of `task`
        (evaluation/replicates.py), or None when the run kept none for them."""
        request = _request(task, metric, units)
        if request not in self._replicates:
            self.read_replicates([request])
        return self._replicates[request]


def _request(task: str, metric: str, units: Sequence[Unit]) -> ReplicateRequest:
    return task, metric, tuple(units)


def read_replicates(asked: Iterable[tuple[StoredResults, Iterable[tuple[str, str, Sequence[Unit]]]]]) -> None:
    """The replicates a page asks of several runs: each run's file opened once for all its requests."""
    for results, requests in asked:
        results.read_replicates(requests)
