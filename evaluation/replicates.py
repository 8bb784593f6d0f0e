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
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from evaluation.engine import bootstrap
from evaluation.engine.metrics import per_query_retrieval
from evaluation.engine.registry import TASKS

ALL = "*"
UNIT_METRICS = frozenset(spec.main_metric for spec in TASKS.values() if spec.kind == "retrieval")


def replicates_path(run_id: int) -> str:
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


def rank_fingerprint(rank_paths: Iterable[str]) -> str:
    """What ties the replicates to the rank files they were computed from (their storage paths)."""
    return "\n".join(sorted(rank_paths))


def write_replicates(run_id: int, arrays: dict[str, np.ndarray], rank_paths: Iterable[str] = ()) -> str:
    import io

    arrays = {**arrays, FINGERPRINT: np.asarray([rank_fingerprint(rank_paths)])}
    path = replicates_path(run_id)
    if default_storage.exists(path):
        default_storage.delete(path)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    return default_storage.save(path, ContentFile(buffer.getvalue()))


def read_samples(
    run_id: int, rank_paths: Iterable[str], task: str, metric: str, units: Sequence[tuple[str, str | None]]
) -> np.ndarray | None:
    """The replicates of the run's average of `metric` over `units` of `task`, or None when not kept.

    Only replicates computed from the run's current rank files (`rank_paths`) are read: a file left by
    an earlier evaluation of the same run id, or of another database, is ignored."""
    request = (task, metric, tuple(units))
    return read_many_samples(run_id, rank_paths, [request])[request]


def read_many_samples(
    run_id: int, rank_paths: Iterable[str], requests: Iterable[tuple[str, str, tuple[tuple[str, str | None], ...]]]
) -> dict[tuple[str, str, tuple[tuple[str, str | None], ...]], np.ndarray | None]:
    """`read_samples` of several (task, metric, units), in one opening of the run's replicate file."""
    requests = list(requests)
    path = replicates_path(run_id)
    if not default_storage.exists(path):
        return dict.fromkeys(requests)
    with default_storage.open(path) as handle, np.load(handle) as stored:
        if FINGERPRINT not in stored.files or str(stored[FINGERPRINT][0]) != rank_fingerprint(rank_paths):
            return dict.fromkeys(requests)
        return {request: _samples_of(stored, *request) for request in requests}


def _samples_of(
    stored: np.lib.npyio.NpzFile, task: str, metric: str, units: Sequence[tuple[str, str | None]]
) -> np.ndarray | None:
    files = stored.files
    count = f"{task}/{ALL}/count/{metric}"
    if count in files and int(stored[count][0]) == len(units) and average_key(task, metric) in files:
        return np.asarray(stored[average_key(task, metric)])
    keys = [unit_key(task, source, target, metric) for source, target in units]
    if not keys or any(key not in files for key in keys):
        return None
    mean: np.ndarray = np.mean(np.stack([stored[key] for key in keys]), axis=0)
    return mean
