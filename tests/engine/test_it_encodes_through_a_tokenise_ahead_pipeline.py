"""The tokenise-ahead, token-budgeted pipeline gives sentence-transformers' own embeddings."""

import numpy as np
import pytest
from sentence_transformers import SentenceTransformer

from evaluation.engine.batches import TokenisedBatches, plan_batches
from evaluation.engine.encoders import SentenceTransformerEncoder, l2_normalise, resolve_model
from tests.fakes.models import build_tiny_model, minilm_path
from tests.validation import validation_triples


@pytest.fixture(scope="module")
def texts():
    # 60 texts of two scripts, up to MiniLM's 256 tokens: batches of many shapes, and real-weight
    # encodes that stay short on a CPU (float64).
    rows = validation_triples(languages=("Hindi", "Tamil"), limit=15)
    return [text for language in rows.values() for row in language for text in row[1:]]


def reference(folder, texts):
    model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    return l2_normalise(model.encode(texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=False))


@pytest.mark.parametrize("which", ["tiny", pytest.param("minilm", marks=pytest.mark.slow)])
def test_it_gives_the_same_vectors_as_sentence_transformers_encode(which, texts, tmp_path):
    folder = minilm_path() if which == "minilm" else build_tiny_model(tmp_path / "tiny", texts[:50], seed=3)
    # A small budget forces many batches of different shapes through the producer thread.
    encoder = SentenceTransformerEncoder.load(resolve_model(str(folder)), device="cpu", token_budget=2048)
    assert encoder.pipeline() is not None, "a Transformer model must take the pipeline"
    seen = []
    vectors = encoder.encode_prefixed(texts, on_batch=lambda rows, batch: seen.append(rows))
    np.testing.assert_allclose(vectors, reference(folder, texts), atol=1e-5, rtol=0)
    assert sorted(np.concatenate(seen).tolist()) == list(range(len(texts)))
    assert len(seen) > 3


def test_it_cuts_batches_by_tokens_not_by_texts():
    lengths = np.array([10, 200, 30, 200, 12, 11])
    batches = plan_batches(lengths, token_budget=400, max_rows=64)
    # Longest first: two 200-token rows fill one batch; the short rows share the next.
    assert [sorted(batch.tolist()) for batch in batches] == [[1, 3], [0, 2, 4, 5]]
    assert all(len(batch) * lengths[batch].max() <= 400 for batch in batches)


def test_it_trims_each_batch_to_its_own_longest_text(texts):
    model = SentenceTransformer(str(minilm_path()), device="cpu", local_files_only=True)
    sample = texts[:40]
    for batch in TokenisedBatches(model, sample, token_budget=1024, max_rows=16, pin=False):
        alone = model.preprocess([sample[row] for row in batch.positions])
        for key in ("input_ids", "attention_mask"):
            assert batch.features[key].equal(alone[key]), key


@pytest.mark.slow
def test_it_keeps_float32_cpu_vectors_bit_for_bit_with_the_fixed_batch_plan(texts):
    encoder = SentenceTransformerEncoder.load(resolve_model(str(minilm_path())), device="cpu", precision="float32")
    assert encoder.batch_plan == "fixed"
    ordered = sorted(texts, key=len)
    vectors = encoder.encode_prefixed(ordered, group_size=64)
    # The engine before the pipeline: sentence-transformers' encode on each group of 64 texts.
    model = encoder.model
    expected = np.concatenate(
        [
            l2_normalise(model.encode(ordered[start : start + 64], batch_size=32, normalize_embeddings=False))
            for start in range(0, len(ordered), 64)
        ]
    )
    np.testing.assert_array_equal(vectors, expected)


@pytest.mark.slow
def test_the_engine_stores_token_budgeted_batches_under_the_right_texts(texts, tmp_path):
    """A CPU's plan in float64 (batches in token order, not text order) fills the run and the cache with
    each text's own vector, bit for bit the vector that batches cut as sentence-transformers cuts them give."""
    from evaluation.engine.backends import DenseBackend, TextSet
    from evaluation.engine.cache import EmbeddingCache, text_key
    from evaluation.engine.pipeline import CPU_TOKEN_BUDGET, PipelineEncoder

    resolved = resolve_model(str(minilm_path()))
    text_set = TextSet("hin", "persona", "query", tuple(texts))
    encoder = SentenceTransformerEncoder.load(resolved, device="cpu")
    assert (encoder.precision, encoder.batch_plan) == ("float64", "tokens")
    cache = EmbeddingCache(tmp_path / "cache", resolved.name, resolved.commit, encoder.precision)
    backend = DenseBackend(encoder, cache, chunk_size=50)
    stats = backend.prepare([text_set])
    assert stats.texts_encoded == len(set(texts))
    vectors = backend.vectors(text_set)
    np.testing.assert_array_equal(cache.get([text_key(text) for text in texts]), vectors)
    # The same float64 model through the fixed plan: sentence-transformers' batches of 32 texts sorted
    # by characters, in groups of 50, padded to each batch's longest text.
    fixed = PipelineEncoder(
        encoder.model, "cpu", CPU_TOKEN_BUDGET, 32, plan="fixed", group_size=50, precision="float64"
    ).encode(list(texts))
    assert fixed.dtype == np.float64
    # In float64 the batch shapes move an embedding by about 1e-16, far inside its rounding to float32.
    np.testing.assert_array_equal(vectors, l2_normalise(fixed))
