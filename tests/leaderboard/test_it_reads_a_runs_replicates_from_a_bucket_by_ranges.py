"""In an S3-compatible bucket, a board reads a re-run's replicate file by HTTP ranges: its averages' rows
in one ranged request after the object's head, a language subset's rows in a few more, never the whole
object (django-storages' own file downloads it whole on its first read: 2.3 MB a re-run)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from evaluation.replicates import read_many_samples, replicates_path, write_replicates
from tests.object_store import bucket_as_default_storage

LANGUAGES = ("asm", "ben", "guj", "hin", "kan", "mal", "mar", "ory", "pan", "tam", "tel", "urd")
PAIRS = [(source, target) for source in LANGUAGES for target in LANGUAGES if source != target]
UNITS = {"t1": [(language, None) for language in LANGUAGES], "t2": PAIRS}
METRICS = ("recall@1", "recall@5", "recall@10", "mrr@10")
RESAMPLES = 1000


@pytest.fixture
def bucket(settings):
    with bucket_as_default_storage(settings) as client:
        yield client


@pytest.fixture
def requests_sent():
    """Every request the storage's S3 client sends from here on: (method, Range header or None)."""
    sent: list[tuple[str, str | None]] = []

    def record(request, **_):
        ranged = request.headers.get("Range")
        sent.append((request.method, ranged.decode() if isinstance(ranged, bytes) else ranged))

    events = default_storage.connection.meta.client.meta.events  # type: ignore[attr-defined]
    events.register("before-send.s3", record)
    yield sent
    events.unregister("before-send.s3", record)


def a_twelve_language_run() -> tuple[dict[str, np.ndarray], list[str]]:
    generator = np.random.default_rng(11)
    arrays: dict[str, np.ndarray] = {}
    paths = []
    for task, units in UNITS.items():
        rows = []
        for source, target in units:
            rows.append(generator.normal(0.4, 0.05, RESAMPLES))
            arrays[f"{task}/{source}/{target or '-'}/recall@1"] = rows[-1]
            paths.append(f"runs/5/ranks-{task}-{source}{'-' + target if target else ''}.npz")
        for offset, metric in enumerate(METRICS):
            arrays[f"{task}/*/*/{metric}"] = np.mean(np.stack(rows), axis=0) + offset
            arrays[f"{task}/*/count/{metric}"] = np.asarray([len(units)])
    return arrays, paths


def fetched_bytes(sent: list[tuple[str, str | None]]) -> int:
    spans = [ranged.removeprefix("bytes=").split("-") for method, ranged in sent if method == "GET" and ranged]
    return sum(int(end) - int(start) + 1 for start, end in spans)


def test_the_averages_come_in_one_ranged_request_and_a_subset_in_a_few(bucket, requests_sent):
    arrays, paths = a_twelve_language_run()
    write_replicates(5, arrays, paths)
    size = default_storage.size(replicates_path(5))
    assert size > 1_000_000
    averages = [(task, metric, tuple(units)) for task, units in UNITS.items() for metric in METRICS]
    requests_sent.clear()
    found = read_many_samples(5, "\n".join(sorted(paths)), averages)
    for task, metric, _ in averages:
        assert found[(task, metric, tuple(UNITS[task]))].tobytes() == arrays[f"{task}/*/*/{metric}"].tobytes()
    # The object's head (django-storages opens it so), then one ranged GET: never a GET of the whole.
    assert [method for method, _ in requests_sent] == ["HEAD", "GET"], requests_sent
    assert all(ranged for method, ranged in requests_sent if method == "GET")
    assert fetched_bytes(requests_sent) < 300_000

    requests_sent.clear()
    subset = [("t1", "recall@1", (("hin", None), ("tam", None))), ("t2", "recall@1", (("hin", "tam"), ("tam", "hin")))]
    found = read_many_samples(5, "\n".join(sorted(paths)), subset)
    for task, metric, units in subset:
        keys = [f"{task}/{source}/{target or '-'}/{metric}" for source, target in units]
        assert found[(task, metric, units)].tobytes() == np.mean(np.stack([arrays[k] for k in keys]), axis=0).tobytes()
    gets = [ranged for method, ranged in requests_sent if method == "GET"]
    # The head and averages, the units' keys, and the four rows asked for (two of them neighbours).
    assert 3 <= len(gets) <= 6 and all(gets), requests_sent
    assert fetched_bytes(requests_sent) < size / 2


def test_nothing_kept_or_a_cut_object_reads_as_nothing_kept(bucket, requests_sent, caplog):
    arrays, paths = a_twelve_language_run()
    request = ("t1", "recall@1", tuple(UNITS["t1"]))
    assert read_many_samples(6, "\n".join(sorted(paths)), [request]) == {request: None}
    assert not any(method == "GET" for method, _ in requests_sent)
    write_replicates(7, arrays, paths)
    with default_storage.open(replicates_path(7), "rb") as handle:
        whole = handle.read()
    default_storage.save(replicates_path(7), ContentFile(whole[:2_000]))
    with caplog.at_level(logging.WARNING, logger="evaluation.replicates"):
        assert read_many_samples(7, "\n".join(sorted(paths)), [request]) == {request: None}
    assert "cannot be read" in caplog.text
