"""The on-disk embedding cache: atomic chunks, lookups by role-prefixed text, safe after a crash."""

import numpy as np

from evaluation.engine.cache import EmbeddingCache, text_key


def test_it_stores_chunks_and_returns_vectors_by_key_in_any_order(tmp_path):
    cache = EmbeddingCache(tmp_path, "org/model", "abc123")
    texts = [f"query: text {i}" for i in range(10)]
    vectors = np.arange(40, dtype=np.float32).reshape(10, 4)
    cache.put([text_key(t) for t in texts[:6]], vectors[:6])
    cache.put([text_key(t) for t in texts[6:]], vectors[6:])

    reopened = EmbeddingCache(tmp_path, "org/model", "abc123")
    order = [9, 0, 5, 6]
    np.testing.assert_array_equal(reopened.get([text_key(texts[i]) for i in order]), vectors[order])
    assert reopened.contains([text_key("query: text 3"), text_key("passage: text 3")]).tolist() == [True, False]
    assert reopened.stats().chunks == 2 and reopened.stats().unique_keys == 10


def test_it_keeps_models_revisions_and_precisions_apart(tmp_path):
    key = [text_key("same text")]
    EmbeddingCache(tmp_path, "org/model", "rev1").put(key, np.ones((1, 3), dtype=np.float32))
    assert EmbeddingCache(tmp_path, "org/model", "rev1").contains(key).all()
    assert not EmbeddingCache(tmp_path, "org/model", "rev2").contains(key).any()
    assert not EmbeddingCache(tmp_path, "org/other", "rev1").contains(key).any()
    assert not EmbeddingCache(tmp_path, "org/model", "rev1", "float16").contains(key).any()


def test_it_ignores_a_chunk_whose_keys_were_never_written(tmp_path):
    cache = EmbeddingCache(tmp_path, "m", "r")
    cache.put([text_key("a")], np.ones((1, 2), dtype=np.float32))
    # A worker killed between the two renames leaves vectors without keys, and maybe a temp file.
    np.save(cache.folder / "deadbeef.vectors.npy", np.zeros((1, 2), dtype=np.float32))
    (cache.folder / ".x.keys.npy.123.tmp").write_bytes(b"partial")
    fresh = EmbeddingCache(tmp_path, "m", "r")
    assert fresh.stats().rows == 1
    np.testing.assert_array_equal(fresh.get([text_key("a")]), [[1.0, 1.0]])


def test_chunks_written_in_the_background_are_all_stored_before_encoding_returns(tmp_path):
    # On an accelerator the chunk files are written by a background thread while the device computes.
    from evaluation.engine.backends import _ChunkWriter

    cache = EmbeddingCache(tmp_path, "model", "rev")
    keys = [text_key(f"text {number}") for number in range(1000)]
    writer = _ChunkWriter(cache, keys, len(keys), 64, background=True)
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(1000, 8)).astype(np.float32)
    reported = []
    writer.on_flush = reported.append
    for start in range(0, 1000, 30):
        rows = np.arange(start, min(1000, start + 30))
        writer.add(rows, vectors[rows])
    writer.finish()
    assert reported[-1] == 1000
    fresh = EmbeddingCache(tmp_path, "model", "rev")
    assert fresh.contains(keys).all()
    np.testing.assert_array_equal(fresh.get(keys[::-1]), vectors[::-1])
