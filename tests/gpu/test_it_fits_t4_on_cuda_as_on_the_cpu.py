"""T4 on an accelerator: the classifier fitted by Newton's method in float64 on CUDA gives the CPU's figures.

The CPU fits with scikit-learn; CUDA with evaluation/engine/logistic.py on the device. Every figure,
every bootstrap resample and the chosen calibrator agree to 1e-9 (the figures are compared at 1e-6),
on nearly separable pairs and on hard ones, at the full model width (768 pair features).
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from evaluation.engine.classification import evaluate_pair_set
from tests.engine.synthetic_pairs import synthetic_pair_features
from tests.gpu.cuda import ON_CUDA

pytestmark = ON_CUDA


@pytest.mark.parametrize("noise", [0.1, 1.0])
def test_t4_on_cuda_gives_the_cpus_figures(noise):
    features, pairs = synthetic_pair_features(6000, noise, dimension=384)
    started = time.perf_counter()
    on_cpu = evaluate_pair_set(features, pairs, seed=3, n_resamples=100)
    cpu_seconds = time.perf_counter() - started
    started = time.perf_counter()
    on_cuda = evaluate_pair_set(features, pairs, seed=3, n_resamples=100, device="cuda")
    cuda_seconds = time.perf_counter() - started
    gap = max(abs(on_cuda.metrics[name] - on_cpu.metrics[name]) for name in on_cpu.metrics)
    print(
        f"noise {noise}: T4 on CUDA {cuda_seconds:.2f} s, on the CPU {cpu_seconds:.2f} s; largest figure gap {gap:.1e}"
    )
    np.testing.assert_allclose(on_cuda.probabilities, on_cpu.probabilities, rtol=0, atol=1e-9)
    assert on_cuda.chosen == on_cpu.chosen
    for name, value in on_cpu.metrics.items():
        assert on_cuda.metrics[name] == pytest.approx(value, abs=1e-9), name
        np.testing.assert_allclose(on_cuda.boot[name], on_cpu.boot[name], rtol=0, atol=1e-9, err_msg=name)
