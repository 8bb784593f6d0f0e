"""Every embedding, score and rank is the same bit for bit whichever CPU kernels torch and MKL use.

The recorded outputs (tests/engine/reference/) must hold on any x86-64 processor. A float32 forward
pass does not: AVX-512 and AVX2 kernels sum in different orders, and one rank of the tiny recorded
model differed between two such processors. CPUs therefore encode and score in float64 and round
each embedding to float32 once (evaluation/engine/encoders.py). On one machine, other processors'
kernels are stood in for by making torch use its unvectorised kernels (ATEN_CPU_CAPABILITY=default)
and MKL its SSE2 code path (MKL_CBWR=COMPATIBLE): both change float32 embeddings in their last bits
(checked here, so the comparison is not vacuous), and must change nothing the engine gives.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
# The machine's own choice, and the portable code paths of torch and MKL.
KERNELS = {
    "native": {},
    "portable": {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"},
}


def run_with_kernels(
    kernels: str, folder: Path, precision: str | None = None, embeddings_only: bool = False
) -> dict[str, np.ndarray]:
    """The tiny recorded model built and evaluated in a process with those kernels; its outputs and weights."""
    environment = {key: value for key, value in os.environ.items() if key not in ("ATEN_CPU_CAPABILITY", "MKL_CBWR")}
    environment.update(KERNELS[kernels], HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT))
    model, output = folder / "model", folder / "outputs.npz"
    command = [sys.executable, "-m", "tests.engine.kernel_outputs", str(model), str(output)]
    command += ["--precision", precision] if precision else []
    command += ["--embeddings-only"] if embeddings_only else []
    subprocess.run(
        command,
        cwd=ROOT,
        env=environment,
        check=True,
        capture_output=True,
        timeout=600,
    )
    with np.load(output) as saved:
        outputs = {key: saved[key] for key in saved.files}
    outputs["weights"] = np.frombuffer((model / "model.safetensors").read_bytes(), dtype=np.uint8)
    return outputs


def test_float32_embeddings_move_with_the_kernels_so_the_comparison_means_something(tmp_path):
    native = run_with_kernels("native", tmp_path / "native", "float32", embeddings_only=True)
    portable = run_with_kernels("portable", tmp_path / "portable", "float32", embeddings_only=True)
    np.testing.assert_array_equal(native["weights"], portable["weights"])
    assert native["embeddings"].shape == portable["embeddings"].shape
    moved = native["embeddings"] != portable["embeddings"]
    assert moved.any(), "these kernel settings no longer change float32 results here"
    assert np.abs(native["embeddings"] - portable["embeddings"]).max() < 1e-5


def test_the_engine_builds_the_recorded_model_and_gives_the_same_bits_with_either_kernels(tmp_path):
    native = run_with_kernels("native", tmp_path / "native")
    portable = run_with_kernels("portable", tmp_path / "portable")
    assert native.keys() == portable.keys()
    assert any(key.startswith("ranks-t1-") for key in native), sorted(native)
    for key, array in native.items():
        np.testing.assert_array_equal(portable[key], array, err_msg=key)
