"""Encoding on CUDA through the engine's pipeline gives `model.encode`'s vectors: every one finite, cosine ≥ 0.9999.

The reference is sentence-transformers' own `encode` of the same model in float32 on the same GPU. The
engine encodes all-MiniLM-L6-v2 in float16 (its precision policy on an accelerator) through the
tokenise-ahead producer, pinned memory and token-budgeted batches; forced into out-of-memory errors by
a per-process memory cap, it halves its batches and gives the same vectors; a T5-family model is
encoded in bfloat16, never float16, and stays finite.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from evaluation.engine.encoders import SentenceTransformerEncoder, resolve_model
from tests.fakes.models import build_tiny_t5_model, minilm_path
from tests.gpu.cuda import ON_CUDA, corpus_texts, validation_corpus

pytestmark = ON_CUDA


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return corpus_texts(validation_corpus())


def reference_vectors(folder, texts: list[str]) -> np.ndarray:
    """sentence-transformers' encode in float32 on the GPU, normalised."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(folder), device="cuda", local_files_only=True)
    try:
        with torch.inference_mode():
            return model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
    finally:
        del model
        torch.cuda.empty_cache()


def cosines(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    return (left.astype(np.float64) * right.astype(np.float64)).sum(axis=1)


def engine_encoder(folder, **options) -> SentenceTransformerEncoder:
    return SentenceTransformerEncoder.load(resolve_model(str(folder)), device="cuda", **options)


def test_it_encodes_minilm_in_float16_as_model_encode_does_in_float32(texts):
    reference = reference_vectors(minilm_path(), texts)
    encoder = engine_encoder(minilm_path())
    assert encoder.precision == "float16"
    assert encoder.batch_plan == "tokens" and encoder.pipeline() is not None
    vectors = encoder.encode_prefixed(texts)
    assert np.isfinite(vectors).all()
    similarity = cosines(vectors, reference)
    print(f"MiniLM float16 vs float32 encode: min cosine {similarity.min():.7f} over {len(texts)} texts")
    assert similarity.min() >= 0.9999
    full = engine_encoder(minilm_path(), precision="float32").encode_prefixed(texts)
    print(f"MiniLM float32 pipeline vs encode: min cosine {cosines(full, reference).min():.9f}")
    assert cosines(full, reference).min() >= 0.999999


def test_it_halves_its_batches_on_out_of_memory_and_gives_the_same_vectors(texts):
    encoder = engine_encoder(minilm_path())
    free = encoder.encode_prefixed(texts)
    capped = engine_encoder(minilm_path())
    torch.cuda.empty_cache()
    total = torch.cuda.get_device_properties(0).total_memory
    # Room for the weights already loaded and about 48 MB more: a first batch of 65,536 tokens needs
    # several hundred MB of attention scores, so it must run out of memory and halve.
    cap = torch.cuda.memory_allocated() + 48 * 2**20
    torch.cuda.set_per_process_memory_fraction(cap / total)
    try:
        vectors = capped.encode_prefixed(texts)
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
    print(f"out-of-memory halvings under a {cap / 2**20:.0f} MiB cap: {capped.halvings}")
    assert capped.halvings > 0
    assert np.isfinite(vectors).all()
    assert cosines(vectors, free).min() >= 0.9999


def test_it_encodes_a_t5_family_model_in_bfloat16_and_finite(texts, tmp_path):
    folder = build_tiny_t5_model(tmp_path / "t5", texts[:300])
    reference = reference_vectors(folder, texts)
    encoder = engine_encoder(folder)
    assert encoder.precision == ("bfloat16" if torch.cuda.is_bf16_supported() else "float32")
    vectors = encoder.encode_prefixed(texts)
    assert np.isfinite(vectors).all()
    similarity = cosines(vectors, reference)
    print(f"T5 {encoder.precision} vs float32 encode: min cosine {similarity.min():.7f}")
    # bfloat16 keeps 8 significant bits (float16: 11), so its vectors sit further from float32's.
    assert similarity.min() >= (0.999 if encoder.precision == "bfloat16" else 0.9999)


def test_it_encodes_through_tokenizer_processes_in_few_shapes_as_model_encode_does(texts):
    """The accelerator's default path for a language of a full-size run (tokenizer worker processes,
    widths rounded up to a multiple of 32), forced here for the 1,800 validation texts."""
    reference = reference_vectors(minilm_path(), texts)
    encoder = engine_encoder(minilm_path())
    pipeline = encoder.pipeline()
    assert pipeline.tokeniser_processes >= 1 and pipeline.width_multiple == 32
    pipeline.process_minimum = 1
    vectors = encoder.encode_prefixed(texts)
    similarity = cosines(vectors, reference)
    print(f"MiniLM float16 through {pipeline.tokenised_in}: min cosine {similarity.min():.7f}")
    assert pipeline.tokenised_in.endswith(("process", "processes"))
    assert np.isfinite(vectors).all() and similarity.min() >= 0.9999
    # Two calls through the same workers give the same vectors, bit for bit.
    assert np.array_equal(encoder.encode_prefixed(texts), vectors)
