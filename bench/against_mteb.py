"""The engine against mteb's retrieval evaluation: the same texts, the same model, T1 in both.

T1 is persona → instruction retrieval over the full pool of each language's instructions. Both sides
load all-MiniLM-L6-v2 from the bundled folder (offline) and evaluate the validation sample's
languages: the engine through `evaluation.engine.runner.evaluate(tasks=["t1"])` (cold embedding
cache, bootstrap intervals included, as a run does), mteb 2.x through `mteb.evaluate` on an
in-memory `AbsTaskRetrieval` with one subset per language (its pytrec_eval scoring, no result cache).

The engine runs twice, as two sides: in its own precision policy ("engine": float64 on a CPU, the
board's figures on every processor) and in float32 ("engine-float32": the engine CLI's
`--precision float32`, mteb's own precision, for a quick look). Each side runs in its own process
(this script starts itself with `--side`), and the sides take turns going first (`--rounds 2`:
engine, engine-float32, mteb, then the reverse), so that a change of load on a shared machine hits
all of them. Each child times its own work from loading the model to the last metric (wall and CPU
seconds of all its threads) and reports its peak resident memory; the parent prints the medians,
the ratios engine/mteb, and whether Recall@1, Recall@10, MRR@10 and nDCG@10 agree per language.

Where the definitions differ: the engine breaks a tie between the gold instruction and another one
pessimistically (the other ranks first); pytrec_eval orders tied documents by their id, so a tie can
go either way there. Their figures are the same unless a query's gold is tied, and the engine's
policy encodes in float64 on a CPU where mteb encodes in float32, which can only move a near-tie. The engine has no
nDCG@10 of its own (it shows the reference runner's published one); here it is computed from the
engine's own gold ranks, 1 / log2(1 + rank) within the top 10, which is pytrec_eval's definition for
a query with one relevant document.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/against_mteb.py [--languages Hindi,Tamil] [--limit 50] [--rounds 2]
        [--sides engine,engine-float32,mteb]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from tests.data import VALIDATION_LANGUAGES  # noqa: E402

METRICS = ("recall@1", "recall@10", "mrr@10", "ndcg@10")
MTEB_NAMES = {"recall@1": "recall_at_1", "recall@10": "recall_at_10", "mrr@10": "mrr_at_10", "ndcg@10": "ndcg_at_10"}
# mteb rounds nDCG to five decimals; one query's rank moving changes a figure by far more (1/n).
AGREEMENT_TOLERANCE = 1e-5
# Each side's process: the engine in its policy's precision, the engine in float32, mteb.
SIDES = ("engine", "engine-float32", "mteb")
ENGINE_PRECISIONS = {"engine": None, "engine-float32": "float32"}


def load_corpus(languages: tuple[str, ...], limit: int | None):
    from evaluation.engine.corpus import build_corpus
    from tests.validation import validation_triples

    rows = validation_triples(languages=languages, limit=limit)
    return build_corpus(rows, requested_languages=None, name="validation", version="bench", content_hash="m")


def engine_side(
    languages: tuple[str, ...], limit: int | None, precision: str | None = None
) -> dict[str, dict[str, float]]:
    import numpy as np

    from evaluation.engine.backends import load_backend
    from evaluation.engine.runner import evaluate
    from tests.fakes.models import minilm_path

    corpus = load_corpus(languages, limit)
    ranks: dict[str, np.ndarray] = {}

    def keep_ranks(name: str, arrays: dict[str, np.ndarray]) -> str:
        # The unit's gold ranks, kept in memory rather than written: "ranks-t1-<language>".
        ranks[name.removeprefix("ranks-t1-")] = arrays["ranks"]
        return name

    with tempfile.TemporaryDirectory() as cache_root:  # a cold embedding cache, as a first run has
        loaded = load_backend(str(minilm_path()), cache_root=cache_root, device="cpu", precision=precision)
        result = evaluate(corpus, loaded.backend, tasks=["t1"], artefact_sink=keep_ranks)
    figures: dict[str, dict[str, float]] = {code: {} for code in corpus.languages}
    for score in result.scores:
        if score.task == "t1" and score.metric in METRICS:
            figures[score.source][score.metric] = score.value
    for code, gold in ranks.items():
        figures[code]["ndcg@10"] = float(np.mean(np.where(gold <= 10, 1.0 / np.log2(1.0 + gold), 0.0)))
    return figures


def mteb_side(languages: tuple[str, ...], limit: int | None) -> dict[str, dict[str, float]]:
    import mteb
    from datasets import Dataset
    from mteb.abstasks.retrieval import AbsTaskRetrieval
    from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData
    from mteb.abstasks.task_metadata import TaskMetadata
    from sentence_transformers import SentenceTransformer

    from tests.fakes.models import minilm_path

    corpus = load_corpus(languages, limit)
    codes = list(corpus.languages)

    def split(code: str) -> RetrievalSplitData:
        language = corpus.languages[code]
        n = len(language.personas)
        # Distinct prefixes: mteb skips a document whose id equals its query's.
        return RetrievalSplitData(
            queries=Dataset.from_dict({"id": [f"q{i}" for i in range(n)], "text": list(language.personas)}),
            corpus=Dataset.from_dict({"id": [f"d{i}" for i in range(n)], "text": list(language.instructions)}),
            relevant_docs={f"q{i}": {f"d{i}": 1} for i in range(n)},
            top_ranked=None,
        )

    class PersonaToInstruction(AbsTaskRetrieval):
        metadata = TaskMetadata(
            name="NirdeshaT1",
            description="T1 of the Nirdesha benchmark: each persona's instruction among all of its language.",
            reference="https://github.com/embeddings-benchmark/mteb",
            dataset={"path": "NA", "revision": "NA"},
            type="Retrieval",
            category="t2t",
            modalities=["text"],
            eval_splits=["test"],
            # The labels only select subsets; the subsets are named by the engine's language codes.
            eval_langs={code: ["eng-Latn"] for code in codes},
            main_score="recall_at_1",
            date=("2026-01-01", "2026-01-01"),
            domains=[],
            task_subtypes=[],
            license="cc-by-4.0",
            annotations_creators="derived",
            dialect=[],
            sample_creation="found",
            bibtex_citation="",
        )

        def load_data(self, num_proc: int | None = None, **kwargs: object) -> None:
            self.dataset = {code: {"test": split(code)} for code in codes}
            self.data_loaded = True

    model = SentenceTransformer(str(minilm_path()), device="cpu")
    result = mteb.evaluate(
        model,
        PersonaToInstruction(),
        cache=None,
        show_progress_bar=False,
        encode_kwargs={"batch_size": 32},
    )
    figures: dict[str, dict[str, float]] = {}
    for task_result in result.task_results:
        for entry in task_result.scores["test"]:
            figures[entry["hf_subset"]] = {metric: float(entry[MTEB_NAMES[metric]]) for metric in METRICS}
    return figures


def child(side: str, languages: tuple[str, ...], limit: int | None) -> None:
    wall, cpu = time.perf_counter(), time.process_time()
    if side in ENGINE_PRECISIONS:
        figures = engine_side(languages, limit, ENGINE_PRECISIONS[side])
    else:
        figures = mteb_side(languages, limit)
    report = {
        "side": side,
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
        # Linux reports ru_maxrss in KiB.
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "figures": figures,
    }
    print("RESULT " + json.dumps(report))


def run_side(side: str, arguments: argparse.Namespace) -> dict:
    command = [sys.executable, __file__, "--side", side, "--languages", arguments.languages]
    if arguments.limit is not None:
        command += ["--limit", str(arguments.limit)]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=arguments.timeout)
    lines = [line for line in finished.stdout.splitlines() if line.startswith("RESULT ")]
    if finished.returncode != 0 or not lines:
        sys.exit(f"the {side} side failed (exit {finished.returncode}):\n{finished.stderr[-4000:]}")
    return json.loads(lines[-1].removeprefix("RESULT "))


def agreement(engine: dict, other: dict, names: str = "engine/mteb") -> list[str]:
    lines = []
    for metric in METRICS:
        differences = {code: abs(engine[code][metric] - other[code][metric]) for code in engine if code in other}
        worst = max(differences.values())
        differing = sorted(code for code, value in differences.items() if value > AGREEMENT_TOLERANCE)
        verdict = "agree" if not differing else f"differ in {', '.join(differing)}"
        lines.append(
            f"{metric}: {verdict} over {len(differences)} language{'s' if len(differences) != 1 else ''} "
            f"(largest difference {worst:.2e}; "
            + ", ".join(f"{code} {engine[code][metric]:.4f}/{other[code][metric]:.4f}" for code in sorted(differences))
            + f" {names})"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--languages", default=",".join(VALIDATION_LANGUAGES))
    parser.add_argument("--limit", type=int, default=None, help="Items per language (default: all 150).")
    parser.add_argument("--rounds", type=int, default=1, help="Pairs of runs; each round swaps who goes first.")
    parser.add_argument("--timeout", type=float, default=1800, help="Seconds one side may take.")
    parser.add_argument("--sides", default=",".join(SIDES), help="Which of engine, engine-float32, mteb to run.")
    parser.add_argument("--side", choices=SIDES, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    languages = tuple(name.strip() for name in arguments.languages.split(",") if name.strip())
    if arguments.limit is not None and arguments.limit < 1:
        parser.error("--limit must be at least 1")
    if arguments.side:
        child(arguments.side, languages, arguments.limit)
        return

    sides = tuple(side.strip() for side in arguments.sides.split(",") if side.strip())
    if not sides or set(sides) - set(SIDES) or "mteb" not in sides or len(sides) < 2:
        parser.error(f"--sides: mteb and at least one of engine, engine-float32 (from {', '.join(SIDES)})")
    runs: dict[str, list[dict]] = {side: [] for side in sides}
    for round_number in range(max(1, arguments.rounds)):
        order = sides if round_number % 2 == 0 else tuple(reversed(sides))
        for side in order:
            runs[side].append(run_side(side, arguments))

    def median(side: str, key: str) -> float:
        return statistics.median(run[key] for run in runs[side])

    n_items = arguments.limit or "all"
    print(f"T1 (persona -> instruction, full pool), {', '.join(languages)}, {n_items} items each, MiniLM-L6, CPU")
    for side in sides:
        walls = ", ".join(f"{run['wall']:.1f}" for run in runs[side])
        print(
            f"{side}: {median(side, 'wall'):.1f} s wall ({walls}), {median(side, 'cpu'):.1f} s CPU, "
            f"peak memory {median(side, 'peak_mb'):.0f} MB"
        )
    for side in sides:
        if side == "mteb":
            continue
        print(
            f"{side}/mteb: {median(side, 'wall') / median('mteb', 'wall'):.2f}x wall, "
            f"{median(side, 'cpu') / median('mteb', 'cpu'):.2f}x cpu (medians of {len(runs[side])} run(s) each)"
        )
        for line in agreement(runs[side][-1]["figures"], runs["mteb"][-1]["figures"], f"{side}/mteb"):
            print(f"  {side} against mteb, {line}")
    if "engine" in runs and "engine-float32" in runs:
        for line in agreement(runs["engine"][-1]["figures"], runs["engine-float32"][-1]["figures"], "float64/float32"):
            print(f"  engine float64 against float32, {line}")
    print(
        "definitions: ties between the gold and another document count against the engine (pessimistic); "
        "pytrec_eval orders tied documents by id. The engine's nDCG@10 is computed here from its gold ranks."
    )


if __name__ == "__main__":
    main()
