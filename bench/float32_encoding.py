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
    process, and how far the float32 embeddings lie from the float64 ones (each rounded to float32);
  * with `--settling` (implies `--timings`), what the float32 design would have to re-encode in float64:
    over the single-gold full-pool units (T1, T2, T3, T3x; T5, multi and T4 would add to it, so this is
    a lower bound), the pairs whose float32-encoded score lies within 2·B of its gold's tie edge and the
    queries whose top 11 hold two float32-encoded scores within 2·B, for a score bound B of 1, 2 and 4
    times 2·max‖Δ‖ (Δ: a text's float32 minus float64 embedding; 2·max‖Δ‖ is the tightest bound a
    per-text bound gives, and it is known only after the float64 encode it is meant to spare). For
    each factor the texts those pairs touch are encoded in float64 and timed, so the design's encode
    (float32 for all, float64 for these) is measured, not estimated.

It changes nothing in the engine: it says on which machines, and by how much, the float32 design
would need its float64 settling.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/float32_encoding.py [--models minilm,tiny] [--timings] [--settling]
        [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from evaluation.engine.backends import DenseBackend  # noqa: E402
from evaluation.engine.cache import EmbeddingCache  # noqa: E402
from evaluation.engine.corpus import Corpus  # noqa: E402
from evaluation.engine.encoders import ResolvedModel, SentenceTransformerEncoder, resolve_model  # noqa: E402
from evaluation.engine.pipeline import CPU_TOKEN_BUDGET  # noqa: E402
from evaluation.engine.registry import TASKS  # noqa: E402
from evaluation.engine.retrieval import tie_edge  # noqa: E402
from evaluation.engine.runner import evaluate, plan_tasks, text_sets_for, unique_texts  # noqa: E402
from evaluation.engine.units import TOP_K  # noqa: E402
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


def timings(corpus, settling: bool = False) -> dict:
    """One process: float64 (the engine's), float32 with the same batches, sentence-transformers' float32;
    with `settling`, what the float32 design would re-encode in float64 (see `settling_needs`)."""
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
    measured: dict[str, Any] = {}
    if settling:
        row_of = {text: row for row, text in enumerate(texts)}
        measured["settling"] = []
        for factor in SETTLING_FACTORS:
            needs = settling_needs(corpus, exact.prefixed, row_of, float32_vectors, float64_vectors, factor)
            subset = [texts[row] for row in sorted(needs.pop("rows"))]
            subset_seconds, _ = timed(lambda subset=subset: exact.encode_prefixed(subset))
            needs["float64_seconds"] = round(subset_seconds, 1)
            needs["design_encode_seconds"] = round(float32_seconds + subset_seconds, 1)
            needs["design_over_floor"] = round((float32_seconds + subset_seconds) / floor_seconds, 2)
            measured["settling"].append(needs)
    return measured | {
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


SETTLING_FACTORS = (1.0, 2.0, 4.0)
SETTLED_TASKS = ("t1", "t2", "t3", "t3x")


def settling_needs(
    corpus: Corpus,
    prefixed: Callable[[list[str], str], list[str]],
    row_of: dict[str, int],
    approximate: np.ndarray,
    exact: np.ndarray,
    factor: float,
) -> dict[str, Any]:
    """Pairs and queries the float32 design could not settle from float32 embeddings, and the texts they touch.

    A score of float32 embeddings lies within B = factor · 2·max‖Δ‖ of the exact one (both vectors have
    unit length), so a document certainly counts against its gold, or certainly not, unless its score
    lies within 2·B of the gold's tie edge (the gold moves too); and the order of the top 11 is certain
    unless two neighbours lie within 2·B. Those need the float64 embeddings of the query, the gold and
    the documents concerned. Returns counts, the rows of the texts concerned (in `row_of`'s order) and
    how many of the pairs' ranks really differ between the two encodings.
    """
    approximate = approximate.astype(np.float64)
    exact = exact.astype(np.float64)
    bound = factor * 2.0 * float(np.linalg.norm(approximate - exact, axis=1).max())
    sets = text_sets_for(corpus, [task for task in plan_tasks(None, corpus)[0] if task in SETTLED_TASKS])

    def rows(language: str, field: str, role: str) -> np.ndarray:
        text_set = next(
            value for value in sets.values() if (value.language, value.field, value.role) == (language, field, role)
        )
        return np.array([row_of[text] for text in prefixed(list(text_set.texts), role)])

    needed: set[int] = set()
    units = edge_pairs = uncertain_tops = moved_ranks = 0
    for task in SETTLED_TASKS:
        spec = TASKS[task]
        for source in corpus.languages:
            for target in corpus.languages:
                if (target == source) != (task in ("t1", "t3")):
                    continue
                queries = rows(source, spec.query_field, spec.query_role)
                documents = rows(target, spec.document_field, "document")
                units += 1
                near = approximate[queries] @ approximate[documents].T
                true = exact[queries] @ exact[documents].T
                gold_near, gold_true = np.diag(near), np.diag(true)
                edge_near, edge_true = (tie_edge(torch.tensor(gold)).numpy() for gold in (gold_near, gold_true))
                moved_ranks += int(((near >= edge_near[:, None]).sum(1) != (true >= edge_true[:, None]).sum(1)).sum())
                band = np.abs(near - edge_near[:, None]) <= 2 * bound
                np.fill_diagonal(band, False)
                for query, document in zip(*np.nonzero(band), strict=True):
                    edge_pairs += 1
                    needed.update((queries[query], documents[query], documents[document]))
                order = np.argsort(-near, axis=1, kind="stable")[:, : TOP_K + 1]
                top = np.take_along_axis(near, order, axis=1)
                close = (top[:, :-1] - top[:, 1:]) <= 2 * bound
                for query in np.nonzero(close.any(axis=1))[0]:
                    uncertain_tops += 1
                    needed.add(queries[query])
                    for place in np.nonzero(close[query])[0]:
                        needed.update((documents[order[query, place]], documents[order[query, place + 1]]))
    return {
        "factor": factor,
        "score_bound": bound,
        "units": units,
        "edge_pairs": edge_pairs,
        "uncertain_top_queries": uncertain_tops,
        "texts_needing_float64": len(needed),
        "texts": len(row_of),
        "ranks_that_really_moved": moved_ranks,
        "rows": needed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="minilm,tiny", help="Recorded dense models: minilm, tiny.")
    parser.add_argument("--timings", action="store_true", help="Also time the three encodes (all-MiniLM-L6-v2).")
    parser.add_argument(
        "--settling",
        action="store_true",
        help="Also measure what the float32 design would re-encode in float64 (implies --timings).",
    )
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
    if arguments.timings or arguments.settling:
        report["timings"] = measured = timings(corpus, settling=arguments.settling)
        print(
            f"encode of {measured['texts']} texts: float64 {measured['float64_tokens_seconds']} s, "
            f"float32 (same batches) {measured['float32_tokens_seconds']} s, "
            f"sentence-transformers float32 {measured['float32_floor_seconds']} s "
            f"(float64 / floor {measured['float64_over_floor']}x, "
            f"float32 / floor {measured['float32_tokens_over_floor']}x); float32 vs float64 embeddings: "
            f"largest value {measured['largest_value_difference']:.2e}, "
            f"L2 largest {measured['largest_l2_difference']:.2e}, median {measured['median_l2_difference']:.2e}"
        )
        for needs in measured.get("settling", []):
            print(
                f"settling at {needs['factor']:g}x the tightest bound (B = {needs['score_bound']:.2e}) over "
                f"{needs['units']} T1/T2/T3/T3x units: {needs['edge_pairs']} pairs near a tie edge, "
                f"{needs['uncertain_top_queries']} queries with an uncertain top 11, "
                f"{needs['texts_needing_float64']} of {needs['texts']} texts to re-encode in float64 "
                f"({needs['float64_seconds']} s); the design's encode {needs['design_encode_seconds']} s = "
                f"{needs['design_over_floor']}x the floor (ranks that really moved: {needs['ranks_that_really_moved']})"
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
