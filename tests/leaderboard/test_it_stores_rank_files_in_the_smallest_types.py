"""Rank files keep the engine's values in the smallest unsigned types; files of the older layout stay readable."""

from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from evaluation.rank_storage import LAYOUT, SHOWN_TOP, RankWriter, compact, load, rank_file_bytes, stored_pool_item_ids
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


def unit_with_lengths(seed: int, n: int = 400) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        **{key: value for key, value in engine_arrays(n, n).items() if key != "top10_is_english"},
        "query_lengths": rng.integers(1, 90, n).astype(np.int32),
        "gold_lengths": rng.integers(1, 60, n).astype(np.int32),
    }


def test_it_keeps_the_top_three_and_each_text_sets_lengths_once_and_reads_them_back():
    """Layout 2: T2 hin→tam reads Hindi personas (as T1 hin did) and Tamil instructions (new)."""
    writer = RankWriter()
    t1 = unit_with_lengths(1)
    t2 = {**unit_with_lengths(2), "query_lengths": t1["query_lengths"]}
    files = {"ranks-t1-hin": writer.file_bytes("ranks-t1-hin", t1)}
    files["ranks-t2-hin-tam"] = writer.file_bytes("ranks-t2-hin-tam", t2)
    with np.load(io.BytesIO(files["ranks-t2-hin-tam"])) as raw:
        assert int(raw["layout"]) == LAYOUT and raw["top_item_ids"].shape == (400, SHOWN_TOP)
        assert "query_lengths" not in raw.files and str(raw["query_lengths_from"]) == "ranks-t1-hin/query_lengths"
        assert "gold_lengths" in raw.files  # Tamil instructions: first seen here

    def sibling(name):
        return np.load(io.BytesIO(files[name]))

    for name, original in (("ranks-t1-hin", t1), ("ranks-t2-hin-tam", t2)):
        read = load(files[name], sibling)
        for key in ("query_item_ids", "ranks", "gold_scores", "query_lengths", "gold_lengths"):
            np.testing.assert_array_equal(read[key], original[key])
        np.testing.assert_array_equal(read["top_item_ids"], original["top10_item_ids"][:, :SHOWN_TOP])


def test_it_counts_the_english_documents_of_the_top_ten_in_both_layouts():
    arrays = engine_arrays(300, 300)
    stored = RankWriter().file_bytes("ranks-multi-hin-eng", arrays)
    for data in (stored, rank_file_bytes(arrays)):
        read = load(data)
        np.testing.assert_array_equal(read["english_in_top10"], arrays["top10_is_english"].sum(axis=1))


def test_it_names_t5s_stored_pool_file_instead_of_repeating_the_pools(tmp_path):
    rng = np.random.default_rng(5)
    n = 60
    negatives = np.stack([rng.permutation(np.r_[0:i, i + 1 : n])[:20] for i in range(n)])
    (tmp_path / "hash").mkdir()
    np.save(tmp_path / "hash" / "t5-pools-key.npy", negatives)
    item_ids = np.arange(101, 101 + n, dtype=np.int64)
    pools = item_ids[np.concatenate([np.arange(n)[:, None], negatives], axis=1)]
    arrays = {
        **unit_with_lengths(3, n),
        "query_item_ids": item_ids,
        "pool_item_ids": pools.astype(np.int32),
        "pools_file": np.array("hash/t5-pools-key.npy"),
    }
    data = RankWriter().file_bytes("ranks-t5-hin", arrays)
    read = load(data)
    assert "pool_item_ids" not in read
    np.testing.assert_array_equal(stored_pool_item_ids(read, tmp_path), pools)
    # Without a stored pool file the pools stay in the rank file.
    kept = load(RankWriter().file_bytes("ranks-t5-hin", {k: v for k, v in arrays.items() if k != "pools_file"}))
    np.testing.assert_array_equal(stored_pool_item_ids(kept, tmp_path / "elsewhere"), pools)


def test_the_errors_page_reader_reads_a_layout_2_unit_and_its_siblings_lengths():
    writer = RankWriter()
    t1, t2 = unit_with_lengths(1), unit_with_lengths(2)
    t2["query_lengths"] = t1["query_lengths"]
    paths = [
        default_storage.save(f"runs/layout2/{name}.npz", ContentFile(writer.file_bytes(name, arrays)))
        for name, arrays in (("ranks-t1-hin", t1), ("ranks-t2-hin-tam", t2))
    ]
    unit = read_rank_unit(paths[1])
    np.testing.assert_array_equal(unit.query_lengths, t1["query_lengths"])
    np.testing.assert_array_equal(unit.top_item_ids, t2["top10_item_ids"][:, :SHOWN_TOP])
    for path in paths:
        default_storage.delete(path)
