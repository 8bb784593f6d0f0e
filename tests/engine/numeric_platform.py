"""The numeric platform the engine's recorded outputs belong to.

The engine's figures are reproducible bit for bit on one machine, not across processors: torch picks
its CPU kernels (AVX2, AVX-512) and MKL and OpenBLAS their code paths by processor, and float32 sums
taken in another order differ in their last bits. Through near-ties in a ranking, a logistic
regression solved to its tolerance and a calibrator chosen by a cross-validated ECE, those bits can
move a recorded figure well beyond 1e-6 (seen: ECE after calibration of the tiny random model, 0.015,
between the machine the files were first recorded on and an AMD EPYC).

So the refactor guards compare with files recorded on the same platform, and say how to record them
again on a new one: from the code that has landed, before changing the engine, so that the new files
are the old code's figures and the guard keeps its meaning.

    git stash -u    # or a clean checkout of the landed main
    export PYTHONHASHSEED=0 HF_HUB_OFFLINE=1
    .venv/bin/python -m tests.engine.golden_outputs --write --tasks t1,t2,t3,t3x,t4,multi
    .venv/bin/python -m tests.engine.reference_outputs
    .venv/bin/python -m tests.engine.numeric_platform --write
    git stash pop
"""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

import pytest

PLATFORM_FILE = Path(__file__).resolve().parent / "golden" / "platform.json"


def _cpu() -> tuple[str, bool]:
    model, avx512 = platform.processor() or "unknown", False
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return model, avx512
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name":
            model = value.strip()
        elif key.strip() == "flags":
            avx512 = "avx512f" in value.split()
    return model, avx512


def numeric_platform() -> dict[str, object]:
    """What decides the engine's last bits here: the processor and the kernels torch chose for it."""
    import torch

    model, avx512 = _cpu()
    return {
        "machine": platform.machine(),
        "cpu": model,
        "avx512": avx512,
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
    }


def require_recording_platform() -> None:
    """Fail with the way out when this machine is not the one the recorded outputs belong to."""
    recorded = json.loads(PLATFORM_FILE.read_text(encoding="utf-8"))
    here = numeric_platform()
    if recorded["platform"] != here:
        pytest.fail(
            f"The engine's recorded outputs belong to {recorded['platform']} (recorded from "
            f"{recorded['recorded_from']}); this machine is {here}. Float32 kernels differ between "
            "processors, so record them again here from the landed code, as tests/engine/numeric_platform.py says.",
            pytrace=False,
        )


def write(recorded_from: str) -> None:
    PLATFORM_FILE.parent.mkdir(parents=True, exist_ok=True)
    document = {"platform": numeric_platform(), "recorded_from": recorded_from}
    PLATFORM_FILE.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {PLATFORM_FILE}", file=sys.stderr)


if __name__ == "__main__":
    import subprocess

    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python -m tests.engine.numeric_platform --write")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    write(f"commit {commit or 'unknown'}")
