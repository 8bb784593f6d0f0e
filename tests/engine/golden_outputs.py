"""The engine's full output on fixed data, reduced to what must never move: the refactor guard.

`engine_outputs()` evaluates the demo data and the shared validation sample with the two lexical
baselines and a tiny random sentence encoder, and keeps every score with its interval, the averages,
the details (reliability bins, pair-set digests, script groups, tokenizer coverage, for every
per-query rank file a digest of its ranks and its mean gold score) and the manifest less what depends
on the machine or the clock. Run this module (`python -m tests.engine.golden_outputs --write`) to
record the reference file; the test runs it with `--tasks` in a subprocess and compares what it
prints, figures to 1e-6 and everything else exactly. Nothing depends on the processor (CPUs encode
and score in float64 since engine 2.1.0) or on the process's hash seed (BM25's vocabulary is in
sorted order since engine 2.0.0).
No Django: the data is read with plain readers.
"""

from __future__ import annotations

import gzip
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from evaluation.engine.backends import load_backend
from evaluation.engine.corpus import build_corpus
from evaluation.engine.runner import evaluate
from tests.engine.reference_outputs import rank_figures, recorded_tiny_model
from tests.validation import validation_triples

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_DIR = REPO_ROOT / "evaluation" / "demo"
GOLDEN_FILE = Path(__file__).parent / "golden" / "engine_outputs.json.gz"
MODELS = ("bm25", "tfidf-char", "tiny")
# Manifest entries that describe the machine, the checkout or the clock rather than the result.
VOLATILE_MANIFEST = ("code_version", "hardware", "libraries", "timings", "encoding", "device")


def demo_triples() -> dict[str, list[tuple[int, str, str]]]:
    rows: dict[str, list[tuple[int, str, str]]] = {}
    for path in sorted(DEMO_DIR.glob("nirdesha_*.jsonl")):
        code = path.name.split("_")[1]
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            rows.setdefault(code, []).append(
                (int(record["id"]), record["indian_context_persona"], record["indian_context_instruction"])
            )
    return rows


def datasets() -> dict[str, dict[str, list[tuple[int, str, str]]]]:
    return {"demo": demo_triples(), "validation": validation_triples()}


def _tiny_model(folder: Path, data: dict) -> Path:
    texts = [text for rows in data.values() for _, persona, instruction in rows[:20] for text in (persona, instruction)]
    return recorded_tiny_model(folder / "tiny-model", texts, seed=7)


def reduce(result, artefacts: dict[str, dict]) -> dict:
    """The parts of an Evaluation that must be reproduced exactly, as JSON-ready data."""
    from dataclasses import asdict

    details = json.loads(json.dumps(result.details.to_dict()))
    details["ranks"] = [{**entry, "path": artefacts[entry["path"]]} for entry in details.get("ranks", [])]
    manifest = {
        key: value
        for key, value in json.loads(json.dumps(result.manifest.to_dict())).items()
        if key not in VOLATILE_MANIFEST
    }
    model = manifest.get("model") or {}
    manifest["model"] = {key: value for key, value in model.items() if key not in ("name", "resolved_revision")}
    return {
        "scores": [asdict(row) for row in result.scores],
        "averages": details["averages"],
        "details": details,
        "manifest": manifest,
    }


def engine_outputs(tasks: list[str] | None = None) -> dict[str, dict]:
    """(dataset, model) → reduced output of one evaluation."""
    outputs = {}
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for data_name, data in datasets().items():
            corpus = build_corpus(
                data, requested_languages=None, name=data_name, version="golden", content_hash=data_name
            )
            for model in MODELS:
                name = str(_tiny_model(root / data_name, data)) if model == "tiny" else model
                loaded = load_backend(name, cache_root=root / "cache", device="cpu")
                artefacts: dict[str, dict] = {}

                def sink(key: str, arrays: dict[str, np.ndarray], artefacts=artefacts) -> str:
                    artefacts[key] = rank_figures(arrays)
                    return key

                result = evaluate(corpus, loaded.backend, tasks=tasks, artefact_sink=sink)
                outputs[f"{data_name}/{model}"] = reduce(result, artefacts)
    return outputs


# Fitted parameters that are not figures, compared relative to their size: temperature scaling's T
# minimises a log loss that is nearly flat when the classifier is weak (T ≈ 10 for the tiny random
# model), so float32 noise of the embeddings moves the minimiser by a few parts in a million while
# every probability and ECE computed with it moves by less than 1e-7.
RELATIVE_TOLERANCES = {"temperature": 1e-4}


def compare(expected: object, actual: object, path: str = "", tolerance: float = 1e-6) -> list[str]:
    """Every place where two JSON documents differ (floats within `tolerance`; parameters within
    RELATIVE_TOLERANCES of their value)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        problems = [f"{path}/{key}: missing" for key in expected if key not in actual]
        problems += [f"{path}/{key}: unexpected" for key in actual if key not in expected]
        for key in expected:
            if key in actual:
                problems += compare(expected[key], actual[key], f"{path}/{key}", tolerance)
        return problems
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{path}: {len(expected)} entries expected, {len(actual)} found"]
        return [
            p
            for i, (a, b) in enumerate(zip(expected, actual, strict=True))
            for p in compare(a, b, f"{path}[{i}]", tolerance)
        ]
    if isinstance(expected, float) and isinstance(actual, int | float) and not isinstance(actual, bool):
        if np.isnan(expected) and np.isnan(actual):
            return []
        relative = RELATIVE_TOLERANCES.get(path.rsplit("/", 1)[-1])
        allowed = relative * abs(expected) if relative is not None else tolerance
        return [] if abs(expected - actual) <= allowed else [f"{path}: {expected!r} expected, {actual!r} found"]
    return [] if expected == actual else [f"{path}: {expected!r} expected, {actual!r} found"]


def main(argv: list[str]) -> None:
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--write", action="store_true", help="record the reference file")
    parser.add_argument("--tasks", default="", help="comma-separated tasks (default: all planned)")
    parser.add_argument(
        "--add-detail",
        default="",
        help="record only this new block of details (e.g. multi) into the reference file, every other "
        "recorded figure kept as it was (a new figure, not a moved one)",
    )
    options = parser.parse_args(argv)
    tasks = [task for task in options.tasks.split(",") if task] or None
    outputs = engine_outputs(tasks)
    if options.add_detail:
        recorded = json.loads(gzip.decompress(GOLDEN_FILE.read_bytes()).decode("utf-8"))
        for key, found in outputs.items():
            block = found["details"].get(options.add_detail)
            if options.add_detail in recorded[key]["details"] or block is None:
                raise SystemExit(f"{key}: details/{options.add_detail} is already recorded or not produced")
            recorded[key]["details"][options.add_detail] = block
        outputs, options.write = recorded, True
    document = json.dumps(outputs, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    if options.write:
        GOLDEN_FILE.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN_FILE.write_bytes(gzip.compress(document.encode("utf-8"), compresslevel=9, mtime=0))
        print(f"wrote {GOLDEN_FILE} ({GOLDEN_FILE.stat().st_size} bytes)", file=sys.stderr)
    else:
        sys.stdout.write(document)


if __name__ == "__main__":
    main(sys.argv[1:])


def recorded_outputs() -> dict[str, dict]:
    """The reference file's outputs."""
    return json.loads(gzip.decompress(GOLDEN_FILE.read_bytes()).decode("utf-8"))
