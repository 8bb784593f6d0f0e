"""One evaluation: every task of the benchmark for one model on one dataset, encoding each text once.

The runner receives plain data (a Corpus, corpus.py: the items of each language, aligned by item id) and a
Backend, and
returns plain data (score rows, averages, details, a manifest); the Django side (evaluation/execution.py) reads
items from the database and writes the results. `evaluate()` is a loop over the task specs of the
registry (registry.TASKS); each spec names the unit method (units.py) that builds and scores its
units, so the runner never branches on a task. The tasks today:

  t1     persona(L) → instruction(L), pool = all instructions of L;
  t2     persona(L1) → instruction(L2) for every ordered pair L1 ≠ L2;
  t3     instruction(L) → persona(L);
  t3x    instruction(L1) → persona(L2) for every ordered pair;
  t4     compatibility classification on the frozen pair set (pairs.py, classification.py);
  t5     persona(L) → instruction(L) among the gold and its 20 BM25 hard negatives, mined with the
         gold instruction and frozen per dataset version (units.HardNegativeRetrieval);
  multi  multi-reference diagnostics over L + English instructions (diagnostics.py), when English
         originals are present.

Retrieval metrics (Recall@1/5/10, MRR@10) come from full-pool gold ranks; every value has a 95%
percentile bootstrap CI over queries (items) with a fixed seed. Averages over languages (or pairs)
are bootstrapped jointly with the same resamples, since the languages share their items.
"""

from __future__ import annotations

import platform
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.engine import DEFAULT_SEED, ENGINE_VERSION, bootstrap
from evaluation.engine.backends import Backend, EncodeStats, TextSet
from evaluation.engine.classification import ECE_INTERVAL
from evaluation.engine.corpus import Corpus
from evaluation.engine.diagnostics import script_aggregates
from evaluation.engine.errors import DatasetError
from evaluation.engine.languages import BY_CODE
from evaluation.engine.registry import TASKS
from evaluation.engine.results import SCHEMA_VERSION, Details, Manifest, RunResult, ScoreRow
from evaluation.engine.units import TOP_K, Context, Unit, method_of

ProgressCallback = Callable[[str, float, str], None]
ArtefactSink = Callable[[str, dict[str, np.ndarray]], str]


def plan_tasks(requested: list[str] | None, corpus: Corpus) -> tuple[list[str], dict[str, str]]:
    """The tasks to run, and the reason for every task of the full set that is not run."""
    requested = list(dict.fromkeys(requested or []))
    unknown = [task for task in requested if task not in TASKS]
    if unknown:
        raise DatasetError(f"Unknown task(s): {', '.join(unknown)}. Tasks are {', '.join(TASKS)}.")
    explicit = bool(requested)
    tasks = requested or list(TASKS)
    skipped: dict[str, str] = {}
    for spec in TASKS.values():
        reason = method_of(spec).unmet_requirement(spec, corpus)
        if reason and spec.id in tasks:
            if explicit:
                raise DatasetError(f"Task {spec.id} cannot run on this selection: it {reason}.")
            skipped[spec.id] = reason
        elif spec.id not in tasks:
            skipped[spec.id] = "not requested"
    return [task for task in TASKS if task in tasks and task not in skipped], skipped


def text_sets_for(corpus: Corpus, tasks: list[str]) -> dict[tuple[str, str, str], TextSet]:
    """Every (language, field, role) text set the tasks need; each is encoded once for all tasks."""
    specs = [TASKS[task] for task in tasks]
    sets: dict[tuple[str, str, str], TextSet] = {}
    for language in corpus.languages.values():
        for spec in specs:
            sets.update(method_of(spec).language_sets(spec, language))
    for spec in specs:
        sets.update(method_of(spec).extra_sets(spec, corpus))
    return sets


def unique_texts(corpus: Corpus, prefixed: Callable[[list[str], str], list[str]]) -> list[str]:
    """Every text a full run encodes, role prefix applied by `prefixed` (an encoder's), once each in
    first-seen order: what a plain encoder is given when the benches time the encoding floor."""
    planned, _ = plan_tasks(None, corpus)
    return list(
        dict.fromkeys(
            text
            for text_set in text_sets_for(corpus, planned).values()
            for text in prefixed(list(text_set.texts), text_set.role)
        )
    )


# Evaluating -------------------------------------------------------------------------------------------


def _summarise(units: list[Unit], metrics: Iterable[str], n_resamples: int, seed: int) -> None:
    """Point values and bootstrap samples of every unit's per-query metrics, in one matrix product."""
    metrics = list(metrics)
    if not units:
        return
    matrix = np.stack([unit.per_query[metric] for unit in units for metric in metrics])
    samples = bootstrap.bootstrap_means(matrix, n_resamples, seed)
    row = 0
    for unit in units:
        for metric in metrics:
            unit.values[metric] = float(matrix[row].mean())
            unit.boot[metric] = samples[row]
            row += 1


def _average(units: list[Unit], metrics: Iterable[str]) -> dict[str, dict[str, Any]]:
    result = {}
    for metric in metrics:
        usable = [unit for unit in units if metric in unit.values and not np.isnan(unit.values[metric])]
        if not usable:
            continue
        samples = np.mean([unit.boot[metric] for unit in usable], axis=0)
        low, high = bootstrap.percentile_interval(samples)
        result[metric] = {
            "value": float(np.mean([unit.values[metric] for unit in usable])),
            "ci_low": low,
            "ci_high": high,
            "n": len(usable),
        }
    return result


def _score_rows(units: list[Unit], metrics: Iterable[str]) -> list[ScoreRow]:
    rows = []
    for unit in units:
        for metric in metrics:
            value = unit.values.get(metric)
            if value is None or np.isnan(value):
                continue
            low, high = bootstrap.percentile_interval(unit.boot[metric])
            rows.append(ScoreRow(unit.task, unit.source, unit.target, metric, value, low, high))
    return rows


def code_version() -> str:
    """`git describe` of the checkout when available, else the engine version."""
    root = Path(__file__).resolve().parents[2]
    try:
        described = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--tags"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        described = ""
    return described or ENGINE_VERSION


def library_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    names = [
        "numpy", "scipy", "scikit-learn", "torch", "sentence-transformers", "transformers",
        "huggingface-hub", "bm25s", "tokenizers",
    ]  # fmt: skip
    versions = {"python": sys.version.split()[0]}
    for name in names:
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            continue
    return versions


def hardware(device: str) -> dict[str, Any]:
    import os

    import torch

    info = {"platform": platform.platform(), "machine": platform.machine(), "cpu_count": os.cpu_count()}
    info["device"] = device
    if device.startswith("cuda") and torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
    return info


def evaluate(
    corpus: Corpus,
    backend: Backend,
    *,
    tasks: list[str] | None = None,
    seed: int = DEFAULT_SEED,
    n_resamples: int = bootstrap.DEFAULT_RESAMPLES,
    progress: ProgressCallback | None = None,
    artefact_sink: ArtefactSink | None = None,
    timings: dict[str, float] | None = None,
    classifiers_from_the_start: bool = False,
) -> RunResult:
    """Run the planned tasks; `progress` may raise (e.g. RunCancelled) to stop between steps.

    `classifiers_from_the_start`: T4's per-language fits start with the first task's units, beside
    retrieval, instead of at T4 (units.PairClassification.start_ahead); the figures are the same.
    """
    report = progress or (lambda stage, fraction, detail: None)
    timings = dict(timings or {})
    planned, skipped = plan_tasks(tasks, corpus)
    specs = [TASKS[task] for task in planned]
    sets = text_sets_for(corpus, planned)

    started = time.perf_counter()
    stats = backend.prepare(list(sets.values()), report)
    timings["encode"] = time.perf_counter() - started

    work = [(spec, key) for spec in specs for key in method_of(spec).unit_keys(spec, corpus)]
    context = Context(corpus, backend, sets, seed, n_resamples, report, artefact_sink, total_steps=len(work))
    context.classifiers_from_the_start = classifiers_from_the_start
    units_by_task: dict[str, list[Unit]] = {spec.id: [] for spec in specs}
    scoring_started = time.perf_counter()
    try:
        for spec in specs:
            method_of(spec).start_ahead(spec, context)
        for spec, (source, target) in work:
            units_by_task[spec.id].append(method_of(spec).score(spec, context, source, target))
            context.step += 1
    except BaseException:
        # Whatever stopped the run, no fit submitted ahead starts after it.
        context.cancel_work_ahead()
        raise

    scores: list[ScoreRow] = []
    averages: dict[str, dict[str, Any]] = {}
    details: dict[str, Any] = {"skipped_tasks": skipped}
    task_manifests: dict[str, dict[str, Any] | None] = {}
    for spec in specs:
        units, method = units_by_task[spec.id], method_of(spec)
        if method.bootstrapped_by_runner:
            _summarise(units, spec.metrics, n_resamples, seed)
        scores += _score_rows(units, spec.metrics)
        averages[spec.id] = _average(units, spec.metrics)
        if (block := method.details(spec, context, units)) is not None:
            if method.details_type is None or not isinstance(block, method.details_type):
                raise TypeError(f"task {spec.id}: its method wrote a {type(block).__name__}, not its details_type")
            details[spec.id] = block.to_dict()
        if method.has_manifest_block:
            task_manifests[spec.id] = method.manifest(spec, units)
    script_of = {code: BY_CODE[code].script for code in corpus.languages if code in BY_CODE}
    details["script_groups"] = {
        # Every unit of a cross-lingual task has a target; the filter says so to the type checker.
        spec.id: script_aggregates(
            {(u.source, u.target): u.values for u in units_by_task[spec.id] if u.target is not None}, script_of
        )
        for spec in specs
        if spec.cross_lingual
    }
    timings["score"] = time.perf_counter() - scoring_started
    details["averages"] = averages
    details["ranks"] = context.rank_files
    coverage = backend.tokenizer_coverage(list(sets.values()))
    if coverage:
        details["tokenizer_coverage"] = coverage
    report("SCORING", 1.0, "done")
    manifest = build_manifest(corpus, backend, stats, planned, skipped, seed, n_resamples, timings)
    for spec in TASKS.values():
        if method_of(spec).has_manifest_block:
            manifest[spec.id] = task_manifests.get(spec.id)
    return RunResult(
        scores=scores,
        details=Details.from_dict({**details, "schema_version": SCHEMA_VERSION}),
        manifest=Manifest.from_dict({**manifest, "schema_version": SCHEMA_VERSION}),
        encode_stats=stats,
    )


def build_manifest(
    corpus: Corpus,
    backend: Backend,
    stats: EncodeStats,
    planned: list[str],
    skipped: dict[str, str],
    seed: int,
    n_resamples: int,
    timings: dict[str, float],
) -> dict[str, Any]:
    """What produced the scores: engine, code, seed, data, model, machine, libraries, timings."""
    return {
        "engine_version": ENGINE_VERSION,
        "code_version": code_version(),
        "seed": seed,
        "bootstrap": {
            "resamples": n_resamples,
            "confidence": bootstrap.CONFIDENCE,
            "unit": "query (item); T4: test item with its three pairs",
            "interval": f"percentile; ECE metrics: {ECE_INTERVAL}",
        },
        "dataset": {
            "name": corpus.name,
            "version": corpus.version,
            "content_hash": corpus.content_hash,
            "pool_size": corpus.pool_size,
            "languages": list(corpus.languages),
            "english_originals": corpus.english is not None,
        },
        "model": backend.describe(),
        "tasks": planned,
        "skipped_tasks": skipped,
        "device": backend.device,
        "hardware": hardware(backend.device),
        "libraries": library_versions(),
        "timings": {stage: round(seconds, 3) for stage, seconds in timings.items()},
        "texts_total": stats.texts_total,
        "texts_encoded": stats.texts_encoded,
        "texts_from_cache": stats.texts_from_cache,
        "encoding": asdict(stats),
        "ranking": {
            "ties": "pessimistic (rank = documents scoring ≥ the gold)",
            "pool": "full",
            "top_k": TOP_K,
            # Dense scores in float64 on a CPU, float16 re-scored in float32 near ties on an accelerator
            # (DenseBackend.score_precision); lexical scores are float64 everywhere.
            "scores": backend.score_precision,
        },
        "metric_scale": "fractions in [0, 1]; max@r is a mean rank; max@r_norm is the 0–100 formula divided by 100",
    }
