"""A re-run's replicate file (evaluation/replicates.py, layout 2) gives the board its averages from its
first block alone, and gives every figure bit for bit as the first layout (numpy's zip) gave it."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Callable

import numpy as np
import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from evaluation.replicates import (
    FINGERPRINT,
    first_layout_path,
    rank_fingerprint,
    read_many_samples,
    read_samples,
    replicates_path,
    write_replicates,
)

LANGUAGES = ("asm", "ben", "hin", "urd")
PAIRS = [(source, target) for source in LANGUAGES for target in LANGUAGES if source != target]
UNITS = {"t1": [(language, None) for language in LANGUAGES], "t2": PAIRS}
METRICS = ("recall@1", "recall@5", "mrr@10")
RESAMPLES = 200


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)


def replicate_arrays(seed: int) -> tuple[dict[str, np.ndarray], list[str]]:
    """Arrays shaped as compute_replicates makes them (units' main metric, every metric's average and
    count), with awkward values (ties, negative zero, a subnormal), and the rank paths they came from."""
    generator = np.random.default_rng(seed)
    arrays: dict[str, np.ndarray] = {}
    paths = []
    for task, units in UNITS.items():
        unit_rows = []
        for source, target in units:
            row = generator.normal(0.4, 0.05, RESAMPLES).round(3)
            row[:3] = [-0.0, 5e-324, 0.125]
            arrays[f"{task}/{source}/{target or '-'}/recall@1"] = row
            unit_rows.append(row)
            paths.append(f"runs/7/ranks-{task}-{source}{'-' + target if target else ''}.npz")
        for metric in METRICS:
            arrays[f"{task}/*/*/{metric}"] = np.mean(np.stack(unit_rows), axis=0) + METRICS.index(metric)
            arrays[f"{task}/*/count/{metric}"] = np.asarray([len(units)])
    return arrays, paths


def write_first_layout(run_id: int, arrays: dict[str, np.ndarray], paths: list[str]) -> None:
    """A file as the writer made them before layout 2 (one zip member per key)."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays, **{FINGERPRINT: np.asarray([rank_fingerprint(paths)])})  # type: ignore[arg-type]
    default_storage.save(first_layout_path(run_id), ContentFile(buffer.getvalue()))


# The bytes of the units' rows in a file of replicate_arrays (one float64 row per unit).
UNITS_BYTES = 8 * RESAMPLES * sum(len(units) for units in UNITS.values())


def cut_short(run_id: int, kept: Callable[[int], int]) -> None:
    """Replace the run's replicate file with its first `kept(size)` bytes, as a failed copy leaves one."""
    with default_storage.open(replicates_path(run_id), "rb") as handle:
        whole = handle.read()
    default_storage.delete(replicates_path(run_id))
    default_storage.save(replicates_path(run_id), ContentFile(whole[: kept(len(whole))]))


def requests_of_every_kind() -> list[tuple[str, str, tuple[tuple[str, str | None], ...]]]:
    found = []
    for task, units in UNITS.items():
        for metric in METRICS:
            found.append((task, metric, tuple(units)))  # the average over all of the run's units
        found.append((task, "recall@1", tuple(units[:2])))  # a subset: the units' block
        found.append((task, "recall@1", tuple(units[-1:])))
        found.append((task, "mrr@10", tuple(units[:2])))  # no unit replicates kept for this metric
    found.append(("t3", "recall@1", (("hin", None),)))  # a task the run did not do
    return found


def test_both_layouts_give_every_request_the_same_bits():
    arrays, paths = replicate_arrays(seed=3)
    write_first_layout(1, arrays, paths)
    write_replicates(2, arrays, paths)
    assert default_storage.exists(replicates_path(2)) and not default_storage.exists(first_layout_path(2))
    requests = requests_of_every_kind()
    first = read_many_samples(1, rank_fingerprint(paths), requests)
    second = read_many_samples(2, rank_fingerprint(paths), requests)
    for request in requests:
        if first[request] is None:
            assert second[request] is None, request
        else:
            assert second[request] is not None, request
            assert first[request].tobytes() == second[request].tobytes(), request
    # What the requests should be, computed from the arrays themselves.
    t1 = tuple(UNITS["t1"])
    assert np.array_equal(second[("t1", "mrr@10", t1)], arrays["t1/*/*/mrr@10"])
    subset = np.mean(np.stack([arrays["t1/asm/-/recall@1"], arrays["t1/ben/-/recall@1"]]), axis=0)
    assert second[("t1", "recall@1", t1[:2])].tobytes() == subset.tobytes()
    assert second[("t2", "mrr@10", tuple(PAIRS[:2]))] is None
    assert second[("t3", "recall@1", (("hin", None),))] is None


def test_it_reads_nothing_computed_from_other_rank_files_in_either_layout():
    arrays, paths = replicate_arrays(seed=4)
    write_first_layout(1, arrays, paths)
    write_replicates(2, arrays, paths)
    for run_id in (1, 2):
        assert read_samples(run_id, paths[1:], "t1", "recall@1", UNITS["t1"]) is None
        assert read_samples(run_id, [*paths, "runs/7/ranks-t3-hin.npz"], "t1", "recall@1", UNITS["t1"]) is None
        assert read_samples(run_id, reversed(paths), "t1", "recall@1", UNITS["t1"]) is not None
    assert read_samples(3, paths, "t1", "recall@1", UNITS["t1"]) is None  # nothing kept at all


def test_a_rewrite_replaces_a_first_layout_file():
    arrays, paths = replicate_arrays(seed=5)
    write_first_layout(9, arrays, paths)
    changed = {key: value + 1 for key, value in arrays.items() if "/count/" not in key}
    write_replicates(9, {**arrays, **changed}, paths)
    assert not default_storage.exists(first_layout_path(9))
    found = read_samples(9, paths, "t2", "recall@5", PAIRS)
    assert found is not None and np.array_equal(found, changed["t2/*/*/recall@5"])


def test_the_averages_come_from_the_first_block_alone(caplog):
    """The units' block is read only by a request over some of the units: with it cut off, the averages
    still come, and a subset is refused with a warning (its replicates are then recomputed from the rank
    files by the caller, leaderboard/run_intervals.py), not a failed page."""
    arrays, paths = replicate_arrays(seed=6)
    write_replicates(4, arrays, paths)
    cut_short(4, lambda size: size - UNITS_BYTES // 2)
    fingerprint = rank_fingerprint(paths)
    averages = [(task, metric, tuple(UNITS[task])) for task in UNITS for metric in METRICS]
    found = read_many_samples(4, fingerprint, averages)
    assert all(
        np.array_equal(found[(task, metric, units)], arrays[f"{task}/*/*/{metric}"]) for task, metric, units in averages
    )
    with caplog.at_level(logging.WARNING, logger="evaluation.replicates"):
        subset = read_many_samples(4, fingerprint, [("t2", "recall@1", tuple(PAIRS[:3]))])
    assert list(subset.values()) == [None]
    assert "runs/4/replicates.bin" in caplog.text and "ends early" in caplog.text


def test_a_file_that_is_not_a_replicate_file_is_refused_with_a_warning(caplog):
    _, paths = replicate_arrays(seed=7)
    default_storage.save(replicates_path(5), ContentFile(b"PK\x03\x04 not ours"))
    with caplog.at_level(logging.WARNING, logger="evaluation.replicates"):
        assert read_samples(5, paths, "t1", "recall@1", UNITS["t1"]) is None
    assert "runs/5/replicates.bin" in caplog.text


def test_a_file_cut_within_its_averages_gives_the_rows_before_the_cut_and_warns_of_the_rest(caplog):
    arrays, paths = replicate_arrays(seed=8)
    write_replicates(6, arrays, paths)
    units_block = json.dumps({"keys": [key for key in arrays if "/*/" not in key]}).encode()
    # Keep every average but half of the last one (the units' block goes with it).
    cut_short(6, lambda size: size - UNITS_BYTES - len(units_block) - 4 - 4 * RESAMPLES)
    requests = [("t1", "recall@1", tuple(UNITS["t1"])), ("t2", "mrr@10", tuple(PAIRS))]
    with caplog.at_level(logging.WARNING, logger="evaluation.replicates"):
        found = read_many_samples(6, rank_fingerprint(paths), requests)
    assert np.array_equal(found[requests[0]], arrays["t1/*/*/recall@1"])
    assert found[requests[1]] is None
    assert "runs/6/replicates.bin cannot be read for t2 mrr@10" in caplog.text
