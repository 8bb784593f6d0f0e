"""The precision policy on accelerators, and a clear failure for a model that overflows, emulated on the CPU.

A GPU encodes in float16 unless the model is bfloat16-native or of a family that overflows in float16;
every batch is checked for finite values, so an overflow fails the run with a message that says whose
fault it is instead of "succeeding" with NaN embeddings and the worst ranks.
"""

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

from evaluation.engine.encoders import SentenceTransformerEncoder, encoding_precision, resolve_model
from evaluation.engine.errors import NonFiniteEmbeddingError, ReducedPrecisionOverflow, SubmitterError
from evaluation.engine.pipeline import GPU_TOKEN_BUDGET, automatic_token_budget
from evaluation.engine.retrieval import disable_reduced_precision_reductions
from tests.fakes.models import build_tiny_model

TEXTS = ["a persona asks for an instruction", "an instruction", "persona", "a"]


def scaled_weights(folder, factor: float):
    """The tiny model with its word embeddings multiplied (initialised at ~0.02, so 1e7 puts them beyond
    float16's range of 65,504 and well within float32's)."""
    path = folder / "model.safetensors"
    weights = load_file(str(path))
    name = next(key for key in weights if key.endswith("word_embeddings.weight"))
    weights[name] = weights[name] * factor
    save_file(weights, str(path))
    return folder


def load(folder, **options) -> SentenceTransformerEncoder:
    return SentenceTransformerEncoder.load(resolve_model(str(folder)), device="cpu", **options)


def test_gpus_encode_in_float16_but_never_a_bfloat16_native_or_t5_model():
    policy = {
        (model_type, dtype, bf16): encoding_precision(
            "cuda", model_type=model_type, config_dtype=dtype, bf16_supported=bf16
        )
        for model_type in ("bert", "xlm-roberta", "t5", "mt5", "gemma3_text")
        for dtype in ("float32", "bfloat16", None)
        for bf16 in (True, False)
    }
    assert policy[("bert", "float32", True)] == policy[("xlm-roberta", None, False)] == "float16"
    assert policy[("bert", "bfloat16", True)] == "bfloat16"
    assert policy[("t5", "float32", True)] == policy[("mt5", None, True)] == policy[("gemma3_text", None, True)]
    assert policy[("t5", "float32", True)] == "bfloat16"
    # Without bfloat16 support those models fall back to float32, never float16.
    assert policy[("t5", "float32", False)] == policy[("bert", "bfloat16", False)] == "float32"
    # CPUs encode every model in float64, so that its embeddings round to the same float32 values on
    # every processor (tests/engine/test_it_gives_the_same_figures_whatever_the_cpu_kernels.py).
    assert encoding_precision("cpu", model_type="bert", config_dtype="float16", bf16_supported=True) == "float64"
    assert encoding_precision("cpu", model_type="t5", config_dtype="bfloat16", bf16_supported=True) == "float64"


def test_a_model_that_overflows_in_float16_fails_with_a_clear_message(tmp_path):
    folder = scaled_weights(build_tiny_model(tmp_path / "large-weights", TEXTS), 1e7)
    # In full precision (float64, a CPU's, and float32) the model is fine: LayerNorm brings the large
    # embeddings back to unit scale.
    for precision in (None, "float32"):
        assert np.isfinite(load(folder, precision=precision).encode(TEXTS)).all()
    # In float16 (as on a GPU before the precision policy) its embeddings overflow to infinity.
    encoder = load(folder, precision="float16")
    assert encoder.precision == "float16" and next(encoder.model.parameters()).dtype == torch.float16
    with pytest.raises(ReducedPrecisionOverflow, match="overflowed in float16"):
        encoder.encode(TEXTS)
    # The same model in bfloat16 (what the policy gives bf16-native and T5-family models) is finite.
    assert np.isfinite(load(folder, precision="bfloat16").encode(TEXTS)).all()


def test_a_model_that_emits_nan_in_float32_is_the_submitters_fault(tmp_path):
    folder = scaled_weights(build_tiny_model(tmp_path / "nan-weights", TEXTS), float("nan"))
    for precision in ("float32", "float64"):
        with pytest.raises(NonFiniteEmbeddingError, match=f"non-finite embeddings .* in {precision}") as failure:
            load(folder, precision=precision).encode(TEXTS)
        assert isinstance(failure.value, SubmitterError)


def test_the_gpu_token_budget_is_fixed_whatever_the_free_memory(monkeypatch):
    # Free memory must not enter the budget: asking for it would fail here.
    def no_free_memory_question(*args, **kwargs):
        raise AssertionError("the token budget asked how much memory is free")

    monkeypatch.setattr(torch.cuda, "mem_get_info", no_free_memory_question)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert automatic_token_budget(object(), "cuda") == automatic_token_budget(object(), "cuda:1") == GPU_TOKEN_BUDGET


def test_half_precision_products_accumulate_in_float32_where_the_bound_relies_on_it():
    matmul = torch.backends.cuda.matmul
    saved = matmul.allow_fp16_reduced_precision_reduction, matmul.allow_bf16_reduced_precision_reduction
    try:
        matmul.allow_fp16_reduced_precision_reduction = matmul.allow_bf16_reduced_precision_reduction = True
        disable_reduced_precision_reductions()
        assert not matmul.allow_fp16_reduced_precision_reduction
        assert not matmul.allow_bf16_reduced_precision_reduction
    finally:
        matmul.allow_fp16_reduced_precision_reduction, matmul.allow_bf16_reduced_precision_reduction = saved
