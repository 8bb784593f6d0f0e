"""What encoding in float32 on this CPU would change: every recorded figure and rank, and the time it saves.

CPUs encode in float64 and round each embedding to float32 once (evaluation/engine/encoders.py), so that
every processor gives the same embeddings and the recorded guards (tests/engine/reference/) hold
everywhere. That costs time: a float64 forward pass is the engine's largest cost, and it puts the
engine above the plain float32 encode floor (issue 38). The design that would win the time back
encodes in float32 and settles only the pairs that lie near a tie edge, or near a 10th place, with
float64 embeddings; whether it can keep every figure rests on how far float32 embeddings move the
figures that no rank decides (T4's, which read the vectors themselves), and on how many pairs lie near
an edge. This bench measures both on the processor it runs on:

  * the engine, all tasks, on the shared validation sample, with the model encoded in float32 (the
    token-budget batches the engine uses in float64, so only the precision differs), compared with
    the recorded outputs as the guard compares them: figures to 1e-6, every rank file exactly;
  * with `--timings` (all-MiniLM-L6-v2 only), the encode of the run's unique texts in float64 (the
    engine's CPU precision), in float32 with the same batches, and sentence-transformers' own float32
    `encode` (batches of 32: the floor bench/engine_speed.py divides by), one after the other in one
    process, and how far the float32 embeddings lie from the float64 ones (each rounded to float32).

It changes nothing in the engine: it says on which machines, and by how much, the float32 design
would need its float64 settling.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/float32_encoding.py [--models minilm,tiny] [--timings] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from evaluation.engine.backends import DenseBackend  # noqa: E402
from evaluation.engine.cache import EmbeddingCache  # noqa: E402
from evaluation.engine.encoders import ResolvedModel, SentenceTransformerEncoder, resolve_model  # noqa: E402
from evaluation.engine.pipeline import CPU_TOKEN_BUDGET  # noqa: E402
from evaluation.engine.runner import evaluate, unique_texts  # noqa: E402
from tests.engine.reference_outputs import RESAMPLES, SEED, load, model_name, rank_figures, validation_corpus  # noqa: E402
from tests.fakes.models import minilm_path  # noqa: E402

TOLERANCE = 1e-6


def float32_encoder(resolved: ResolvedModel) -> SentenceTransformerEncoder:
    """The model in float32 with the engine's token-budget batches (a float32 model on a CPU would
    otherwise take sentence-transformers' fixed batches)."""
    return SentenceTransformerEncoder.load(resolved, device="cpu", precision="float32", token_budget=CPU_TOKEN_BUDGET)


def against_the_recording(which: str, corpus, folder: Path) -> dict:
    """The engine's outputs with float32 encoding, compared with the recorded (float64) ones."""
    name = model_name(which, folder, corpus)
    resolved = resolve_model(name)
    encoder = float32_encoder(resolved)
    backend = DenseBackend(
        encoder, EmbeddingCache(folder / "cache", name, resolved.commit, "float32"), resolved=resolved
    )
    artefacts: dict[str, dict] = {}

    def sink(artefact: str, arrays: dict[str, np.ndarray]) -> str:
        artefacts[artefact] = rank_figures(arrays)
        return artefact

    started = time.perf_counter()
    result = evaluate(corpus, backend, seed=SEED, n_resamples=RESAMPLES, artefact_sink=sink)
    wall = time.perf_counter() - started
    expected = load(which)
    actual = {
        (row.task, row.source, row.target, row.metric): (row.value, row.ci_low, row.ci_high) for row in result.scores
    }
    missing = {tuple(row[:4]) for row in expected["scores"]} - set(actual)
    if missing:
        example = sorted(missing, key=str)[0]
        raise SystemExit(f"{which}: the run gave no row for {len(missing)} recorded figures, e.g. {example}")
    gaps = []
    for row in expected["scores"]:
        key, recorded = tuple(row[:4]), np.array(row[4:], dtype=float)
        today = np.array(actual[key], dtype=float)
        both = np.isfinite(recorded) & np.isfinite(today)
        same_gaps = np.array_equal(np.isfinite(recorded), np.isfinite(today))
        gap = float(np.abs(recorded[both] - today[both]).max(initial=0.0)) if same_gaps else float("inf")
        gaps.append((gap, "/".join(str(part) for part in key if part is not None)))
    gaps.sort(reverse=True)
    moved = [
        artefact
        for artefact, figures in expected["rank_artefacts"].items()
        if artefacts.get(artefact, {}).get("ranks") != figures["ranks"]
    ]
    return {
        "model": which,
        "engine_seconds": round(wall, 1),
        "encode_seconds": round(result.manifest.timings["encode"], 1),
        "figures": len(gaps),
        "figures_over_tolerance": sum(gap > TOLERANCE for gap, _ in gaps),
        "largest_gaps": [[label, gap] for gap, label in gaps[:8]],
        "largest_gap_outside_t4": max((gap for gap, label in gaps if not label.startswith("t4/")), default=0.0),
        "rank_files": len(expected["rank_artefacts"]),
        "rank_files_moved": moved,
    }


def timings(corpus) -> dict:
    """One process: float64 (the engine's), float32 with the same batches, sentence-transformers' float32."""
    resolved = resolve_model(str(minilm_path()))
    exact = SentenceTransformerEncoder.load(resolved, device="cpu")
    single = float32_encoder(resolved)
    texts = unique_texts(corpus, exact.prefixed)
    for encoder in (exact, single):
        encoder.encode_prefixed(texts[:32])  # start-up paid before any clock runs

    def timed(encode) -> tuple[float, np.ndarray]:
        started = time.perf_counter()
        vectors = np.asarray(encode(), dtype=np.float32)
        return time.perf_counter() - started, vectors

    float64_seconds, float64_vectors = timed(lambda: exact.encode_prefixed(texts))
    float32_seconds, float32_vectors = timed(lambda: single.encode_prefixed(texts))
    floor_seconds, _ = timed(lambda: single.model.encode(texts, batch_size=32, show_progress_bar=False))
    difference = float32_vectors.astype(np.float64) - float64_vectors.astype(np.float64)
    return {
        "texts": len(texts),
        "threads": torch.get_num_threads(),
        "float64_tokens_seconds": round(float64_seconds, 1),
        "float32_tokens_seconds": round(float32_seconds, 1),
        "float32_floor_seconds": round(floor_seconds, 1),
        "float64_over_floor": round(float64_seconds / floor_seconds, 2),
        "float32_tokens_over_floor": round(float32_seconds / floor_seconds, 2),
        "largest_value_difference": float(np.abs(difference).max()),
        "largest_l2_difference": float(np.linalg.norm(difference, axis=1).max()),
        "median_l2_difference": float(np.median(np.linalg.norm(difference, axis=1))),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="minilm,tiny", help="Recorded dense models: minilm, tiny.")
    parser.add_argument("--timings", action="store_true", help="Also time the three encodes (all-MiniLM-L6-v2).")
    parser.add_argument("--json", type=Path, default=None)
    arguments = parser.parse_args()
    corpus = validation_corpus()
    report: dict = {
        "cpu": cpu_name(),
        "torch": torch.__version__,
        "capability": torch.backends.cpu.get_cpu_capability(),
    }
    with tempfile.TemporaryDirectory() as folder:
        report["against_the_recording"] = [
            against_the_recording(which.strip(), corpus, Path(folder) / which.strip())
            for which in arguments.models.split(",")
        ]
    for entry in report["against_the_recording"]:
        label, largest = entry["largest_gaps"][0]
        moved = entry["rank_files_moved"]
        print(
            f"{entry['model']}: float32 encoding, engine {entry['engine_seconds']} s "
            f"(encode {entry['encode_seconds']} s); {entry['figures_over_tolerance']} of {entry['figures']} "
            f"figures beyond {TOLERANCE:g} (largest {largest:.2e} at {label}; outside T4 "
            f"{entry['largest_gap_outside_t4']:.2e}); {len(moved)} of {entry['rank_files']} rank files moved "
            f"{moved or ''}"
        )
    if arguments.timings:
        report["timings"] = measured = timings(corpus)
        print(
            f"encode of {measured['texts']} texts: float64 {measured['float64_tokens_seconds']} s, "
            f"float32 (same batches) {measured['float32_tokens_seconds']} s, "
            f"sentence-transformers float32 {measured['float32_floor_seconds']} s "
            f"(float64 / floor {measured['float64_over_floor']}x, "
            f"float32 / floor {measured['float32_tokens_over_floor']}x); float32 vs float64 embeddings: "
            f"largest value {measured['largest_value_difference']:.2e}, "
            f"L2 largest {measured['largest_l2_difference']:.2e}, median {measured['median_l2_difference']:.2e}"
        )
    if arguments.json:
        arguments.json.write_text(json.dumps(report, indent=2) + "\n")


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


if __name__ == "__main__":
    main()
