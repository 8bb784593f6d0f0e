"""A process encoding on its CPU keeps large freed blocks for the next batch, and hands them back after.

Each check runs in a fresh interpreter, since the C library's settings belong to the whole process.
Page faults are counted, not timed: a block served again from the heap touches no new page, one mapped
afresh faults on every page it writes. The tensors are torch's, as in a forward pass (numpy asks the
kernel for huge pages for its large arrays, torch does not).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tests.data import REPO_ROOT
from tests.fakes.models import build_tiny_model

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator (Linux)")

# A float64 feed-forward block of a 4,096-token all-MiniLM-L6-v2 batch: its 4,096 × 1,536 activations are
# 50 MB each, over glibc's adaptive mmap threshold (at most 32 MB), and their sizes vary within a pass, as
# a forward pass's do.
MEASURE = """
import json, resource
import numpy as np
import torch

torch.set_num_threads(1)
x = torch.randn(4096, 384, dtype=torch.float64)
up = torch.randn(384, 1536, dtype=torch.float64)
down = torch.randn(1536, 384, dtype=torch.float64)

def faults_of_passes(count):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(count):
        hidden = torch.nn.functional.gelu(x @ up)
        out = torch.nn.functional.layer_norm(x + hidden @ down, (384,))
        del hidden, out
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

def resident_bytes():
    return int(open("/proc/self/statm").read().split()[1]) * 4096
"""


def run_python(code: str, environment: dict[str, str] | None = None) -> dict:
    import os

    completed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(MEASURE) + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={**os.environ, "HF_HUB_OFFLINE": "1", **(environment or {})},
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])


def test_passes_reuse_their_activations_without_faulting_and_hand_them_back_after_the_encode():
    measured = run_python(
        """
        from evaluation.engine.host_memory import keep_large_blocks_for_reuse, return_free_memory

        faults_of_passes(1)
        mapped_afresh = faults_of_passes(4)
        kept = keep_large_blocks_for_reuse()
        # The heap grows to what a pass needs, then serves every later pass from what it holds.
        faults_of_passes(4)
        served_again = faults_of_passes(4)
        holding = resident_bytes()
        return_free_memory()
        returned = holding - resident_bytes()
        print(json.dumps({"kept": kept, "mapped_afresh": mapped_afresh, "served_again": served_again,
                          "returned": returned}))
        """
    )
    assert measured["kept"] is True
    # With glibc's defaults both 50 MB activations fault through their 12,800 pages again in every pass.
    assert measured["mapped_afresh"] >= 4 * 2 * 12_800, measured
    assert measured["served_again"] < measured["mapped_afresh"] // 20, measured
    assert measured["returned"] >= 45 * 2**20, measured


def test_the_environments_own_allocator_settings_decide():
    measured = run_python(
        """
        from evaluation.engine.host_memory import keep_large_blocks_for_reuse

        print(json.dumps({"kept": keep_large_blocks_for_reuse()}))
        """,
        {"MALLOC_MMAP_THRESHOLD_": str(64 * 2**20)},
    )
    assert measured == {"kept": False}


@pytest.mark.slow
def test_loading_an_encoder_for_the_cpu_keeps_large_blocks_and_its_embeddings_are_unchanged(tmp_path):
    folder = build_tiny_model(tmp_path / "tiny", ["a persona who cooks", "an instruction to bake bread"])
    code = f"""
        torch.set_num_threads(1)
        from evaluation.engine import host_memory
        from evaluation.engine.encoders import SentenceTransformerEncoder, resolve_model

        texts = ["a persona who cooks", "an instruction to bake bread", "ऐसा व्यक्ति जो खाना बनाता है"] * 40
        encoder = SentenceTransformerEncoder.load(resolve_model({str(folder)!r}), device="cpu")
        vectors = encoder.encode(texts)
        print(json.dumps({{"kept": host_memory._State.keeping, "precision": encoder.precision,
                          "vectors": vectors.view(np.uint32).tolist()}}))
        """
    kept = run_python(code)
    left_alone = run_python(code, {"MALLOC_MMAP_THRESHOLD_": str(128 * 1024)})
    assert (kept["kept"], kept["precision"]) == (True, "float64")
    assert left_alone["kept"] is False
    # The allocator never touches a value: the same bits either way.
    assert kept["vectors"] == left_alone["vectors"]
