"""Engine vs a naive per-task loop on the shared validation data with all-MiniLM-L6-v2.

The naive loop does what the reference runner does: for every task × language (or language pair) it
encodes the queries and the documents afresh, scores them with numpy, and encodes T4's pairs
separately. The engine encodes every unique text once (cold cache) and reuses it for T1–T4 and the
diagnostics. Both produce the same retrieval metrics (checked below); the script prints wall times and
their ratio (target ≥ 10×).

It also measures the encode floor: plain sentence-transformers encoding every unique text of the run
once (batch 32, as the engine's CPU default), in the engine's precision (float64 on a CPU since
engine 2.1.0), and prints the cold engine run's wall time over it (target <= 1.3x). With
`--floor-only` (which skips the naive loop) it also times the same encode in float32, so that the
cost of the precision itself is printed beside the engine's cost over its floor, and a cold engine
run in float32 (the engine CLI's `--precision float32`, a researcher's quick look whose figures may
differ from the board's at near-ties) over that float32 floor; the figures of the two engine runs
are compared.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/engine_speed.py [--languages Hindi,Tamil] [--limit 150] [--floor-only]
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
from tqdm import tqdm  # noqa: E402

from evaluation.engine.backends import load_backend  # noqa: E402
from evaluation.engine.classification import evaluate_pair_set  # noqa: E402
from evaluation.engine.corpus import build_corpus  # noqa: E402
from evaluation.engine.encoders import SentenceTransformerEncoder, resolve_model  # noqa: E402
from evaluation.engine.pairs import build_pair_set  # noqa: E402
from evaluation.engine.results import RunResult  # noqa: E402
from evaluation.engine.runner import evaluate, unique_texts  # noqa: E402
from tests.fakes.models import minilm_path  # noqa: E402
from tests.validation import VALIDATION_LANGUAGES, validation_triples  # noqa: E402

SEED = 1


def naive_ranks(query_vectors: np.ndarray, doc_vectors: np.ndarray) -> np.ndarray:
    scores = query_vectors @ doc_vectors.T
    gold = np.diag(scores)[:, None]
    return (scores >= gold).sum(axis=1)


def naive(corpus, encoder: SentenceTransformerEncoder) -> tuple[dict, int]:
    """Every task re-encodes what it needs, like the reference runner. Returns metrics and texts encoded."""
    encoded = 0
    results: dict[tuple, float] = {}
    codes = list(corpus.languages)

    def encode(texts, role):
        nonlocal encoded
        encoded += len(texts)
        return encoder.encode(list(texts), role)

    units = [("t1", c, c) for c in codes] + [("t2", a, b) for a, b in itertools.permutations(codes, 2)]
    units += [("t3", c, c) for c in codes] + [("t3x", a, b) for a, b in itertools.permutations(codes, 2)]
    for task, source, target in tqdm(units, desc="naive retrieval", file=sys.stderr):
        if task in ("t1", "t2"):
            queries = encode(corpus.languages[source].personas, "query")
            documents = encode(corpus.languages[target].instructions, "document")
        else:
            queries = encode(corpus.languages[source].instructions, "reverse_query")
            documents = encode(corpus.languages[target].personas, "document")
        ranks = naive_ranks(queries, documents)
        results[(task, source, None if task in ("t1", "t3") else target, "recall@1")] = float(np.mean(ranks <= 1))
        results[(task, source, None if task in ("t1", "t3") else target, "recall@10")] = float(np.mean(ranks <= 10))
    english = corpus.english
    for code in tqdm(codes, desc="naive diagnostics", file=sys.stderr):
        queries = encode(corpus.languages[code].personas, "query")
        documents = encode(corpus.languages[code].instructions + english.instructions, "document")
        scores = queries @ documents.T
        results[("multi", code, None, "pool")] = float(scores.shape[1])
    for code in tqdm(codes, desc="naive t4", file=sys.stderr):
        language = corpus.languages[code]
        pairs = build_pair_set(
            code, language.item_ids, list(language.instructions), seed=SEED, content_hash=corpus.content_hash
        )
        u = encode([language.personas[row] for row in pairs.persona_rows], "query")
        v = encode([language.instructions[row] for row in pairs.instruction_rows], "document")
        features = np.hstack([np.abs(u - v), u * v])
        output = evaluate_pair_set(features, pairs, seed=SEED, n_resamples=1000)
        results[("t4", code, None, "auroc")] = output.metrics["auroc"]
    return results, encoded


def moved_figures(reference: RunResult, other: RunResult) -> str:
    """How far the float32 run's figures lie from the float64 run's (which are the board's)."""
    first = {(s.task, s.source, s.target, s.metric): s.value for s in reference.scores}
    second = {(s.task, s.source, s.target, s.metric): s.value for s in other.scores}
    shared = [key for key in first if key in second]
    moved = [key for key in shared if first[key] != second[key]]
    worst = max((abs(first[key] - second[key]) for key in shared), default=0.0)
    largest = max(moved, key=lambda key: abs(first[key] - second[key]), default=None)
    where = f" ({'/'.join(str(part) for part in largest if part)})" if largest else ""
    return (
        f"float32 against float64 figures: {len(moved)} of {len(shared)} differ, largest difference {worst:.2e}{where}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--languages", default=",".join(VALIDATION_LANGUAGES))
    parser.add_argument("--limit", type=int, default=None, help="Items per language (default: all 150).")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--floor-only", action="store_true", help="Only the engine against the encode floor.")
    arguments = parser.parse_args()
    languages = tuple(name.strip() for name in arguments.languages.split(","))
    rows = validation_triples(languages=languages, limit=arguments.limit)
    corpus = build_corpus(rows, requested_languages=None, name="validation", version="bench", content_hash="b")
    n_items = corpus.pool_size
    print(f"Data: {len(corpus.languages)} languages + English, {n_items} items each; model all-MiniLM-L6-v2")

    # Load the model and run one small encode first, so neither side pays for start-up.
    encoder = SentenceTransformerEncoder.load(resolve_model(str(minilm_path())), device=arguments.device)
    encoder.encode(["warm-up"])

    def run_engine(precision: str | None = None) -> tuple[float, float, RunResult]:
        with tempfile.TemporaryDirectory() as cache_root:  # a cold embedding cache every time
            wall, cpu = time.perf_counter(), time.process_time()
            loaded = load_backend(
                str(minilm_path()), cache_root=cache_root, device=arguments.device, precision=precision
            )
            result = evaluate(corpus, loaded.backend, seed=SEED)
            return time.perf_counter() - wall, time.process_time() - cpu, result

    def encode_floor(model: object = encoder.model) -> float:
        """Seconds for plain sentence-transformers to encode the run's unique texts once."""
        unique = unique_texts(corpus, encoder.prefixed)
        started = time.perf_counter()
        model.encode(unique, batch_size=32, show_progress_bar=False)  # type: ignore[attr-defined]
        return time.perf_counter() - started

    if arguments.floor_only:
        single = SentenceTransformerEncoder.load(
            resolve_model(str(minilm_path())), device=arguments.device, precision="float32"
        ).model
        # Floors and engine alternate, twice, so that a change of load on the shared machine hits all.
        floors, singles, engines, quick = [], [], [], []
        results: dict[str, RunResult] = {}
        for _ in range(2):
            floors.append(encode_floor())
            singles.append(encode_floor(single))
            wall, _, results["float64"] = run_engine()
            engines.append(wall)
            wall, _, results["float32"] = run_engine("float32")
            quick.append(wall)
        floor, engine, float32 = float(np.mean(floors)), float(np.mean(engines)), float(np.mean(singles))
        engine_float32 = float(np.mean(quick))
        print(f"encode floor ({encoder.precision}): {floor:.1f} s ({', '.join(f'{value:.1f}' for value in floors)})")
        print(f"the same encode in float32: {float32:.1f} s ({', '.join(f'{value:.1f}' for value in singles)})")
        print(f"engine cold run, all tasks: {engine:.1f} s ({', '.join(f'{value:.1f}' for value in engines)})")
        print(f"engine / floor: {engine / floor:.2f}x (target <= 1.3x)")
        print(f"floor / float32 floor: {floor / float32:.2f}x (the cost of {encoder.precision} encoding)")
        print(f"engine / float32 floor: {engine / float32:.2f}x")
        quick_runs = ", ".join(f"{value:.1f}" for value in quick)
        print(f"engine cold run in float32 (--precision float32): {engine_float32:.1f} s ({quick_runs})")
        print(f"engine in float32 / float32 floor: {engine_float32 / float32:.2f}x (target <= 1.0x, stretch 0.7x)")
        print(moved_figures(results["float64"], results["float32"]))
        return

    # The machine is shared, so the engine runs before AND after the naive loop and the two are
    # averaged; CPU seconds (process time, all threads) are printed too, being less sensitive to load.
    engine_runs = [run_engine()]
    wall, cpu = time.perf_counter(), time.process_time()
    naive_results, naive_texts = naive(corpus, encoder)
    naive_wall, naive_cpu = time.perf_counter() - wall, time.process_time() - cpu
    engine_runs.append(run_engine())
    engine_result = engine_runs[-1][2]
    engine_wall = float(np.mean([run[0] for run in engine_runs]))
    engine_cpu = float(np.mean([run[1] for run in engine_runs]))
    timings = engine_result.manifest.timings
    print(
        f"engine: {engine_wall:8.1f} s wall, {engine_cpu:8.1f} s CPU (mean of 2 runs: "
        f"{', '.join(f'{run[0]:.1f}' for run in engine_runs)} s; {engine_result.manifest.texts_encoded} texts "
        f"encoded; last run encode {timings['encode']:.1f} s, score {timings['score']:.1f} s)"
    )
    print(f"naive:  {naive_wall:8.1f} s wall, {naive_cpu:8.1f} s CPU ({naive_texts} texts encoded)")

    engine_values = {(s.task, s.source, s.target, s.metric): s.value for s in engine_result.scores}
    compared = [key for key in naive_results if key in engine_values]
    worst = max(abs(naive_results[key] - engine_values[key]) for key in compared)
    print(f"same metrics: {len(compared)} values compared, largest difference {worst:.2e}")
    print(
        f"speed-up: {naive_wall / engine_wall:.1f}x wall, {naive_cpu / engine_cpu:.1f}x CPU (target >= 10x); "
        f"texts encoded {naive_texts / engine_result.manifest.texts_encoded:.1f}x"
    )


if __name__ == "__main__":
    main()
