"""Pack what a lent GPU machine needs and does not have into `.gpu/` (git-ignored; carried by the device tool).

The device machine has torch, transformers, sentence-transformers, scikit-learn and scipy, but not the
shared data next to this checkout, bm25s, or all-MiniLM-L6-v2's weights, and only 64 MiB travel with a
call. So:

  * the shared validation CSVs (1.4 MB) are copied as they are (read there through NIRDESHA_SHARED_DATA);
  * the bm25s wheel (pure Python) is downloaded for the device's Python;
  * all-MiniLM-L6-v2 travels with its weights stored in float16 (45 MB instead of 91 MB). On the device
    they are widened back to float32 (bench/gpu_unpack.py), so every test and bench there runs one
    and the same model, CPU and GPU alike; it differs from the published weights by float16's
    rounding of each weight (relative 2^-11), which no comparison made there depends on.

    .venv/bin/python bench/gpu_pack.py      # then: device run, carry [".gpu"], bench/gpu_session.sh
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.data import VALIDATION_DIR  # noqa: E402
from tests.fakes.models import minilm_path  # noqa: E402

PACK = ROOT / ".gpu"


def pack_minilm(target: Path) -> None:
    from safetensors.torch import load_file, save_file

    source = minilm_path()
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("model.safetensors", "*.bin", "onnx", "openvino"))
    weights = load_file(str(source / "model.safetensors"))
    save_file(
        {name: tensor.half().contiguous() for name, tensor in weights.items()}, str(target / "model16.safetensors")
    )


def main() -> None:
    PACK.mkdir(exist_ok=True)
    shutil.copytree(VALIDATION_DIR, PACK / "data" / VALIDATION_DIR.name, dirs_exist_ok=True)
    pack_minilm(PACK / "minilm16")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            "3.12",
            "--implementation",
            "cp",
            "--platform",
            "manylinux_2_28_x86_64",
            "--platform",
            "any",
            "-d",
            str(PACK / "wheels"),
            "bm25s==0.3.16",
        ],
        check=True,
    )
    total = sum(path.stat().st_size for path in PACK.rglob("*") if path.is_file())
    print(f"packed {total / 2**20:.1f} MiB into {PACK}")


if __name__ == "__main__":
    main()
