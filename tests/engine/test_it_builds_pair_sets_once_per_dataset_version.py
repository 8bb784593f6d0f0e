"""T4 pair sets (with their dev calibration folds) and T5 hard-negative pools are built once per dataset
version, stored, read by every run."""

import numpy as np
import pytest

from evaluation.engine import pairs
from evaluation.engine.backends import load_backend
from evaluation.engine.corpus import build_corpus
from evaluation.engine.runner import evaluate
from tests.fakes.models import build_tiny_model
from tests.validation import validation_triples


@pytest.fixture
def corpus():
    rows = validation_triples(languages=("Hindi", "Tamil"), limit=60)
    return build_corpus(rows, requested_languages=None, name="validation", version="v1", content_hash="v1hash")


@pytest.fixture
def store(tmp_path):
    yield pairs.use_store(tmp_path / "pair-sets")
    pairs.use_store(None)


def run(corpus, name, tmp_path):
    loaded = load_backend(name, cache_root=tmp_path / "cache", device="cpu")
    return evaluate(corpus, loaded.backend, tasks=["t4", "t5"], seed=1, n_resamples=50)


def test_a_second_model_on_the_same_version_spends_no_time_building_pair_sets(corpus, store, tmp_path):
    tiny = build_tiny_model(tmp_path / "tiny", list(corpus.languages["hin"].personas[:20]))
    first = run(corpus, str(tiny), tmp_path)
    # Two languages: a T4 pair set, its dev calibration folds and T5's hard-negative pools for each.
    assert store.stats.built == 6 and store.stats.loaded == 0
    spent = store.stats.build_seconds
    assert spent > 0

    second = run(corpus, "bm25", tmp_path)
    assert store.stats.built == 6 and store.stats.loaded == 6
    assert store.stats.build_seconds == spent
    assert second.manifest.task_blocks["t4"]["pair_set_digests"] == first.manifest.task_blocks["t4"]["pair_set_digests"]
    assert second.details.to_dict()["t5"]["pools"] == first.details.to_dict()["t5"]["pools"]

    # The stored pair sets are the ones built without a store.
    pairs.use_store(None)
    for code, language in corpus.languages.items():
        built = pairs.build_pair_set(
            code, language.item_ids, list(language.instructions), seed=1, content_hash=corpus.content_hash
        )
        assert built.digest() == first.manifest.task_blocks["t4"]["pair_set_digests"][code]


def test_another_version_or_seed_gets_its_own_pair_sets(corpus, store):
    language = corpus.languages["hin"]
    texts = list(language.instructions)
    pairs.build_pair_set("hin", language.item_ids, texts, seed=1, content_hash="v1hash")
    pairs.build_pair_set("hin", language.item_ids, texts, seed=2, content_hash="v1hash")
    edited = [*texts[:-1], texts[-1] + " (corrected)"]
    pairs.build_pair_set("hin", language.item_ids, edited, seed=1, content_hash="v2hash")
    assert store.stats.built == 3 and store.stats.loaded == 0
    pairs.build_pair_set("hin", language.item_ids, texts, seed=1, content_hash="v1hash")
    assert store.stats.built == 3 and store.stats.loaded == 1


def test_parallel_hard_negative_mining_equals_the_one_thread_result(corpus, monkeypatch):
    # Small blocks, so that the threads really share each split.
    monkeypatch.setattr(pairs, "HARD_NEGATIVE_BLOCK", 7)
    language = corpus.languages["tam"]
    splits = pairs.split_items(language.item_ids, 1, "v1hash")
    instructions = list(language.instructions) + list(corpus.languages["hin"].instructions)
    splits = np.concatenate([splits, splits])
    one = pairs.hard_negatives(instructions, splits, workers=1)
    many = pairs.hard_negatives(instructions, splits, workers=4)
    np.testing.assert_array_equal(one, many)
    assert (one != np.arange(len(one))).all() and (splits[one] == splits).all()
