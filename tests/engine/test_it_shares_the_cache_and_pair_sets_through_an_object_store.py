"""With a bucket configured, the embedding cache and the pair sets live in it: what one host writes,
another host, with a scratch folder of its own and no shared disk, reads back unchanged.

The bucket is served by moto's S3-compatible server (a real HTTP server in a thread), reached through
django-storages exactly as production reaches AWS S3 or MinIO.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evaluation.engine import pairs
from evaluation.engine.cache import EmbeddingCache, text_key
from evaluation.engine.corpus import build_corpus
from evaluation.object_store import StorageBlobStore, embedding_cache_store, pair_set_store
from tests.object_store import BUCKET, bucket_as_default_storage
from tests.validation import validation_triples


@pytest.fixture
def bucket(settings):
    with bucket_as_default_storage(settings) as client:
        settings.EVALUATION_FILES_IN_STORAGE = True
        yield client


def host(prefix: str, scratch: Path) -> StorageBlobStore:
    return StorageBlobStore("default", prefix, scratch)


def test_a_host_reads_the_embeddings_another_host_wrote(bucket, tmp_path):
    keys = [text_key(f"text {number}") for number in range(300)]
    vectors = np.random.default_rng(0).normal(size=(300, 8)).astype(np.float32)
    writer = EmbeddingCache(host("embedding-cache", tmp_path / "a"), "org/model", "rev")
    writer.put(keys[:200], vectors[:200])
    writer.put(keys[200:], vectors[200:])
    assert writer.folder is None

    reader = EmbeddingCache(host("embedding-cache", tmp_path / "b"), "org/model", "rev")
    assert reader.contains(keys).all()
    np.testing.assert_array_equal(reader.get(keys[::-1]), vectors[::-1])
    assert reader.stats().rows == 300 and reader.stats().unique_keys == 300
    stored = bucket.list_objects_v2(Bucket=BUCKET, Prefix="embedding-cache/")["Contents"]
    assert len(stored) == 4  # two chunks, each a vectors file and a keys file
    # A revision of its own sees nothing of it.
    assert not EmbeddingCache(host("embedding-cache", tmp_path / "b"), "org/model", "rev2").contains(keys).any()


def test_a_chunk_whose_keys_never_arrived_is_not_read(bucket, tmp_path):
    store = host("embedding-cache", tmp_path / "a")
    cache = EmbeddingCache(store, "m", "r")
    cache.put([text_key("a")], np.ones((1, 2), dtype=np.float32))
    # A writer that died between its two uploads left vectors without keys.
    store.write(f"{cache.prefix}/deadbeef.vectors.npy", b"not read")
    fresh = EmbeddingCache(host("embedding-cache", tmp_path / "b"), "m", "r")
    assert fresh.stats().rows == 1
    np.testing.assert_array_equal(fresh.get([text_key("a")]), [[1.0, 1.0]])


def test_pair_sets_built_on_one_host_are_read_on_another(bucket, tmp_path):
    rows = validation_triples(languages=("Hindi",), limit=60)
    corpus = build_corpus(rows, requested_languages=None, name="validation", version="v1", content_hash="v1hash")
    language = corpus.languages["hin"]
    texts = list(language.instructions)
    try:
        first = pairs.use_store(host("pair-sets", tmp_path / "a"))
        built = pairs.build_pair_set("hin", language.item_ids, texts, seed=1, content_hash="v1hash")
        assert first is not None and first.stats.built == 1
        second = pairs.use_store(host("pair-sets", tmp_path / "b"))
        read = pairs.build_pair_set("hin", language.item_ids, texts, seed=1, content_hash="v1hash")
        assert second is not None and second.stats.built == 0 and second.stats.loaded == 1
    finally:
        pairs.use_store(None)
    assert read.digest() == built.digest()


def test_the_site_keeps_them_in_local_folders_without_a_bucket(settings, tmp_path):
    settings.EVALUATION_FILES_IN_STORAGE = False
    settings.EMBEDDING_CACHE_DIR = tmp_path / "cache"
    settings.PAIR_SET_DIR = tmp_path / "pairs"
    assert embedding_cache_store() == tmp_path / "cache"
    assert pair_set_store() == tmp_path / "pairs"
    settings.EVALUATION_FILES_IN_STORAGE = True
    assert isinstance(embedding_cache_store(), StorageBlobStore)
