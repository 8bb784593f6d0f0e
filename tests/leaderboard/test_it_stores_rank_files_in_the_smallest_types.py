"""Rank files keep the engine's values in the smallest unsigned types; files of the older layout stay readable."""

from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from evaluation.rank_storage import compact, rank_file_bytes
from leaderboard.errors import read_rank_unit


def engine_arrays(n: int, pool: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    return {
        "query_item_ids": np.arange(1, n + 1, dtype=np.int64),
        "ranks": rng.integers(1, pool + 1, n).astype(np.int32),
        "top10_item_ids": rng.integers(1, pool + 1, (n, 10)).astype(np.int32),
        "gold_scores": rng.normal(size=n).astype(np.float32),
        "top10_is_english": rng.random((n, 10)) < 0.5,
    }


@pytest.mark.parametrize(("pool", "dtype"), [(200, np.uint8), (50_000, np.uint16), (70_000, np.uint32)])
def test_it_keeps_every_value_in_the_smallest_unsigned_type(pool, dtype):
    arrays = engine_arrays(300 if pool < 256 else pool, pool)
    with np.load(io.BytesIO(rank_file_bytes(arrays))) as stored:
        for name, original in arrays.items():
            np.testing.assert_array_equal(stored[name], original)
        assert stored["ranks"].dtype == dtype and stored["top10_item_ids"].dtype == dtype
        assert stored["gold_scores"].dtype == np.float32 and stored["top10_is_english"].dtype == bool


def test_it_leaves_negative_and_empty_integers_alone():
    kept = compact({"a": np.array([-1, 5], dtype=np.int32), "b": np.array([], dtype=np.int64)})
    assert kept["a"].dtype == np.int32 and kept["b"].dtype == np.int64


def test_it_is_smaller_than_the_engines_layout_at_full_scale():
    arrays = engine_arrays(50_000, 50_000)
    plain = io.BytesIO()
    np.savez_compressed(plain, **arrays)
    assert len(rank_file_bytes(arrays)) < 0.9 * len(plain.getvalue())


@pytest.mark.parametrize("narrow", [False, True])
def test_it_reads_both_layouts_alike(narrow):
    arrays = {key: value for key, value in engine_arrays(500, 500).items() if key != "top10_is_english"}
    data = rank_file_bytes(arrays) if narrow else _plain(arrays)
    path = default_storage.save(f"runs/test/ranks-layout-{narrow}.npz", ContentFile(data))
    unit = read_rank_unit(path)
    np.testing.assert_array_equal(unit.ranks, arrays["ranks"])
    expected = sorted(range(500), key=lambda i: (-int(arrays["ranks"][i]), i))
    assert unit.order.tolist() == expected
    default_storage.delete(path)


def _plain(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()
