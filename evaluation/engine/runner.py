"""One evaluation: every task of the benchmark for one model on one dataset, encoding each text once.

The runner receives plain data (the items of each language, aligned by item id) and a Backend, and
returns plain data (score rows, averages, details, a manifest); the Django side (services.py) reads
items from the database and writes the results. Tasks:

  t1     persona(L) → instruction(L), pool = all instructions of L;
  t2     persona(L1) → instruction(L2) for every ordered pair L1 ≠ L2;
  t3     instruction(L) → persona(L);
  t3x    instruction(L1) → persona(L2) for every ordered pair;
  t4     compatibility classification on the frozen pair set (pairs.py, classification.py);
  multi  multi-reference diagnostics over L + English instructions (diagnostics.py), when English
         originals are present.

Retrieval metrics (Recall@1/5/10, MRR@10) come from full-pool gold ranks; every value has a 95%
percentile bootstrap CI over queries (items) with a fixed seed. Averages over languages (or pairs)
are bootstrapped jointly with the same resamples, since the languages share their items.
"""

from __future__ import annotations

import itertools
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from evaluation.engine import DEFAULT_SEED, ENGINE_VERSION, bootstrap
from evaluation.engine.backends import Backend, EncodeStats, TextSet
from evaluation.engine.classification import ECE_INTERVAL, T4_METRICS, evaluate_pair_set
from evaluation.engine.diagnostics import MULTI_METRICS, multi_reference_per_query, script_aggregates
from evaluation.engine.errors import DatasetError
from evaluation.engine.metrics import RETRIEVAL_METRICS, per_query_retrieval
from evaluation.engine.pairs import SPLITS, build_pair_set
from evaluation.engine.retrieval import rank_golds
from evaluation.languages import BY_CODE

ProgressCallback = Callable[[str, float, str], None]
ArtefactSink = Callable[[str, dict[str, np.ndarray]], str]

ALL_TASKS = ("t1", "t2", "t3", "t3x", "t4", "multi")
CROSS_LINGUAL = {"t2", "t3x"}
SOURCE_LANGUAGE = "eng"
TOP_K = 10


@dataclass(frozen=True)
class LanguageTexts:
    """The items of one language, sorted by item id."""

    code: str
    item_ids: np.ndarray
    personas: tuple[str, ...]
    instructions: tuple[str, ...]


@dataclass(frozen=True)
class Corpus:
    name: str
    version: str
    content_hash: str
    languages: dict[str, LanguageTexts]  # the evaluated (translated) languages, in order
    english: LanguageTexts | None = None

    @property
    def pool_size(self) -> int:
        return len(next(iter(self.languages.values())).item_ids) if self.languages else 0


@dataclass
class ScoreRow:
    task: str
    source: str
    target: str | None
    metric: str
    value: float
    ci_low: float | None
    ci_high: float | None


@dataclass
class Evaluation:
    scores: list[ScoreRow]
    averages: dict[str, dict[str, dict]]
    details: dict
    manifest: dict
    encode_stats: EncodeStats


# Building and checking the corpus ---------------------------------------------------------------------


def _preview(values: Iterable[object], limit: int = 8) -> str:
    values = list(values)
    shown = ", ".join(str(value) for value in values[:limit])
    return shown + (f" … ({len(values)} in all)" if len(values) > limit else "")


def build_corpus(
    rows_by_language: dict[str, list[tuple[int, str, str]]],
    *,
    requested_languages: list[str] | None,
    name: str = "",
    version: str = "",
    content_hash: str = "",
) -> Corpus:
    """Check the items and assemble a Corpus; DatasetError with a readable message when they don't fit.

    rows_by_language: language code → (item_id, persona, instruction) rows of the dataset.
    requested_languages: translated languages to evaluate; empty or None = all in the dataset.
    """
    label = f"{name} {version}".strip() or "the dataset"
    available = [code for code, rows in rows_by_language.items() if code != SOURCE_LANGUAGE and rows]
    requested = list(dict.fromkeys(requested_languages or []))
    if SOURCE_LANGUAGE in requested:
        raise DatasetError(
            "English (eng) is the source language, not a language to evaluate; its originals are used "
            "automatically by the multi-reference diagnostics when the dataset has them."
        )
    unknown = [code for code in requested if code not in BY_CODE]
    if unknown:
        raise DatasetError(f"Unknown language code(s): {', '.join(unknown)}. Use ISO 639-3 codes such as hin, tam.")
    if requested:
        missing = [code for code in requested if code not in available]
        if missing:
            names = ", ".join(f"{BY_CODE[code].name} ({code})" for code in missing)
            raise DatasetError(f"{label} has no items in {names}.")
        codes = requested
    else:
        codes = sorted(available, key=lambda code: BY_CODE[code].name if code in BY_CODE else code)
    if not codes:
        raise DatasetError(f"{label} has no items in any translated language.")

    def assemble(code: str) -> LanguageTexts:
        rows = sorted(rows_by_language[code], key=lambda row: row[0])
        ids = np.array([row[0] for row in rows], dtype=np.int64)
        duplicates = np.unique(ids[1:][ids[1:] == ids[:-1]])
        if len(duplicates):
            raise DatasetError(f"{label}: {code} has duplicate item ids: {_preview(duplicates.tolist())}.")
        empty = [row[0] for row in rows if not (row[1] or "").strip() or not (row[2] or "").strip()]
        if empty:
            raise DatasetError(f"{label}: {code} has items with an empty persona or instruction: {_preview(empty)}.")
        return LanguageTexts(code, ids, tuple(row[1] for row in rows), tuple(row[2] for row in rows))

    languages = {code: assemble(code) for code in codes}
    reference_code = codes[0]
    reference = set(languages[reference_code].item_ids.tolist())
    for code in codes[1:]:
        ids = set(languages[code].item_ids.tolist())
        if ids != reference:
            only_first, only_this = sorted(reference - ids), sorted(ids - reference)
            parts = []
            if only_first:
                parts.append(f"missing from {code}: {_preview(only_first)}")
            if only_this:
                parts.append(f"missing from {reference_code}: {_preview(only_this)}")
            raise DatasetError(
                f"{label}: item ids are not aligned across languages ({reference_code} has {len(reference)}, "
                f"{code} has {len(ids)}; {'; '.join(parts)}). Every language must hold the same items."
            )
    english = None
    if rows_by_language.get(SOURCE_LANGUAGE):
        english = assemble(SOURCE_LANGUAGE)
        if set(english.item_ids.tolist()) != reference:
            english = None  # Diagnostics need parallel English; plan_tasks says why they are skipped.
    return Corpus(name, version, content_hash, languages, english)


def plan_tasks(requested: list[str] | None, corpus: Corpus) -> tuple[list[str], dict[str, str]]:
    """The tasks to run, and the reason for every task of the full set that is not run."""
    requested = list(dict.fromkeys(requested or []))
    unknown = [task for task in requested if task not in ALL_TASKS]
    if unknown:
        raise DatasetError(f"Unknown task(s): {', '.join(unknown)}. Tasks are {', '.join(ALL_TASKS)}.")
    explicit = bool(requested)
    tasks = requested or list(ALL_TASKS)
    skipped: dict[str, str] = {}
    reasons = {}
    if len(corpus.languages) < 2:
        reasons.update({task: "needs at least two languages" for task in CROSS_LINGUAL})
    if corpus.english is None:
        reasons["multi"] = "needs English originals aligned with the translated items"
    if corpus.pool_size < 15:
        reasons["t4"] = "needs at least 15 items per language for train/dev/test splits"
    for task in ALL_TASKS:
        if task in reasons and task in tasks:
            if explicit:
                raise DatasetError(f"Task {task} cannot run on this selection: it {reasons[task]}.")
            skipped[task] = reasons[task]
        elif task not in tasks:
            skipped[task] = "not requested"
    return [task for task in ALL_TASKS if task in tasks and task not in skipped], skipped


def text_sets_for(corpus: Corpus, tasks: list[str]) -> dict[tuple[str, str, str], TextSet]:
    """Every (language, field, role) text set the tasks need; each is encoded once for all tasks."""
    sets: dict[tuple[str, str, str], TextSet] = {}

    def add(language: LanguageTexts, field_name: str, role: str) -> None:
        texts = language.personas if field_name == "persona" else language.instructions
        sets[(language.code, field_name, role)] = TextSet(language.code, field_name, role, texts)

    forward = {"t1", "t2", "t4", "multi"} & set(tasks)
    reverse = {"t3", "t3x"} & set(tasks)
    for language in corpus.languages.values():
        if forward:
            add(language, "persona", "query")
            add(language, "instruction", "document")
        if reverse:
            add(language, "instruction", "reverse_query")
            add(language, "persona", "document")
    if "multi" in tasks and corpus.english is not None:
        add(corpus.english, "persona", "query")
        add(corpus.english, "instruction", "document")
    return sets


# Evaluating -------------------------------------------------------------------------------------------


@dataclass
class _Unit:
    task: str
    source: str
    target: str | None
    per_query: dict[str, np.ndarray] = field(default_factory=dict)
    values: dict[str, float] = field(default_factory=dict)
    boot: dict[str, np.ndarray] = field(default_factory=dict)


def _summarise(units: list[_Unit], metrics: Iterable[str], n_resamples: int, seed: int) -> None:
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


def _average(units: list[_Unit], metrics: Iterable[str]) -> dict[str, dict]:
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


def hardware(device: str) -> dict:
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
) -> Evaluation:
    """Run the planned tasks; `progress` may raise (e.g. RunCancelled) to stop between steps."""
    report = progress or (lambda stage, fraction, detail: None)
    timings = dict(timings or {})
    planned, skipped = plan_tasks(tasks, corpus)
    sets = text_sets_for(corpus, planned)

    started = time.perf_counter()
    stats = backend.prepare(list(sets.values()), report)
    timings["encode"] = time.perf_counter() - started

    codes = list(corpus.languages)
    retrieval_units: list[tuple[str, str, str | None]] = []
    for task in planned:
        if task in ("t1", "t3"):
            retrieval_units += [(task, code, None) for code in codes]
        elif task in CROSS_LINGUAL:
            retrieval_units += [(task, a, b) for a, b in itertools.permutations(codes, 2)]
    total_steps = len(retrieval_units) + len(codes) * (("t4" in planned) + ("multi" in planned))
    step = 0
    rank_files: list[dict] = []
    units_by_task: dict[str, list[_Unit]] = {task: [] for task in planned}
    details: dict = {"skipped_tasks": skipped}

    def advance(detail: str, within: float = 1.0) -> None:
        report("SCORING", min(1.0, (step + within) / max(1, total_steps)), detail)

    def save_ranks(name: str, arrays: dict[str, np.ndarray], task: str, source: str, target: str | None) -> None:
        if artefact_sink is not None:
            path = artefact_sink(name, arrays)
            rank_files.append({"task": task, "source": source, "target": target, "path": path})

    scoring_started = time.perf_counter()
    for task, source, target in retrieval_units:
        query_language = corpus.languages[source]
        doc_language = corpus.languages[target or source]
        if task in ("t1", "t2"):
            queries = sets[(source, "persona", "query")]
            documents = sets[(target or source, "instruction", "document")]
        else:
            queries = sets[(source, "instruction", "reverse_query")]
            documents = sets[(target or source, "persona", "document")]
        pair = f"{source}→{target}" if target else source
        detail = f"task {task}: {pair} ({step + 1} of {total_steps})"
        advance(detail, 0.0)
        result = rank_golds(
            backend.scorer(queries, documents),
            np.arange(len(query_language.item_ids)),
            k=TOP_K,
            on_block=lambda done, total, detail=detail: advance(detail, done / total),
        )
        ranks = result.ranks[:, 0]
        units_by_task[task].append(_Unit(task, source, target, per_query_retrieval(ranks)))
        save_ranks(
            f"ranks-{task}-{source}" + (f"-{target}" if target else ""),
            {
                "query_item_ids": query_language.item_ids,
                "ranks": ranks.astype(np.int32),
                "top10_item_ids": doc_language.item_ids[result.topk].astype(np.int32),
                "gold_scores": result.gold_scores[:, 0],
            },
            task,
            source,
            target,
        )
        step += 1

    if "multi" in planned:
        english = corpus.english
        assert english is not None
        for code in codes:
            detail = f"task multi: {code} + English pool ({step + 1} of {total_steps})"
            advance(detail, 0.0)
            n = len(corpus.languages[code].item_ids)
            documents = [sets[(code, "instruction", "document")], sets[(SOURCE_LANGUAGE, "instruction", "document")]]
            english_mask = np.r_[np.zeros(n, dtype=bool), np.ones(n, dtype=bool)]
            result = rank_golds(
                backend.scorer(sets[(code, "persona", "query")], documents),
                np.stack([np.arange(n), n + np.arange(n)], axis=1),
                k=TOP_K,
                groups={"english": english_mask},
                on_block=lambda done, total, detail=detail: advance(detail, done / total),
            )
            per_query = multi_reference_per_query(
                result.ranks, result.gold_scores, result.group_counts["english"][:, 0], pool_size=2 * n
            )
            units_by_task["multi"].append(_Unit("multi", code, None, per_query))
            pool_ids = np.r_[corpus.languages[code].item_ids, english.item_ids]
            save_ranks(
                f"ranks-multi-{code}-eng",
                {
                    "query_item_ids": corpus.languages[code].item_ids,
                    "ranks": result.ranks.astype(np.int32),
                    "top10_item_ids": pool_ids[result.topk].astype(np.int32),
                    "top10_is_english": english_mask[result.topk],
                },
                "multi",
                code,
                SOURCE_LANGUAGE,
            )
            step += 1

    t4_details: dict = {"reliability": {}, "pair_sets": {}}
    if "t4" in planned:
        for code in codes:
            advance(f"task t4: {code} ({step + 1} of {total_steps})", 0.0)
            language = corpus.languages[code]
            pairs = build_pair_set(
                code, language.item_ids, list(language.instructions), seed=seed, content_hash=corpus.content_hash
            )
            features = backend.pair_features(
                sets[(code, "persona", "query")],
                sets[(code, "instruction", "document")],
                pairs.persona_rows,
                pairs.instruction_rows,
            )
            output = evaluate_pair_set(features, pairs, seed=seed, n_resamples=n_resamples)
            unit = _Unit("t4", code, None, values=dict(output.metrics), boot=dict(output.boot))
            units_by_task["t4"].append(unit)
            t4_details["reliability"][code] = {
                **output.reliability,
                "calibrator": output.chosen,
                "dev_cv_ece": output.dev_cv_ece,
                "temperature": output.temperature,
                "n_test_pairs": int(pairs.split_mask("test").sum()),
            }
            t4_details["pair_sets"][code] = {
                "digest": pairs.digest(),
                "pairs": {split: int(pairs.split_mask(split).sum()) for split in SPLITS},
            }
            step += 1
        t4_details["features"] = (
            "[|u−v|, u⊙v] of persona and instruction embeddings"
            if backend.kind == "dense"
            else "the baseline's own similarity score of the pair"
        )
        details["t4"] = t4_details

    metrics_of = {"t1": RETRIEVAL_METRICS, "t2": RETRIEVAL_METRICS, "t3": RETRIEVAL_METRICS}
    metrics_of |= {"t3x": RETRIEVAL_METRICS, "multi": MULTI_METRICS, "t4": T4_METRICS}
    scores: list[ScoreRow] = []
    averages: dict[str, dict] = {}
    for task in planned:
        units = units_by_task[task]
        if task != "t4":
            _summarise(units, metrics_of[task], n_resamples, seed)
        for unit in units:
            for metric in metrics_of[task]:
                value = unit.values.get(metric)
                if value is None or np.isnan(value):
                    continue
                low, high = bootstrap.percentile_interval(unit.boot[metric])
                scores.append(ScoreRow(task, unit.source, unit.target, metric, value, low, high))
        averages[task] = _average(units, metrics_of[task])
    script_of = {code: BY_CODE[code].script for code in codes if code in BY_CODE}
    details["script_groups"] = {
        task: script_aggregates({(unit.source, unit.target): unit.values for unit in units_by_task[task]}, script_of)
        for task in planned
        if task in CROSS_LINGUAL
    }
    timings["score"] = time.perf_counter() - scoring_started
    details["averages"] = averages
    details["ranks"] = rank_files
    coverage = backend.tokenizer_coverage(list(sets.values()))
    if coverage:
        details["tokenizer_coverage"] = coverage
    report("SCORING", 1.0, "done")

    manifest = {
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
            "languages": codes,
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
        "ranking": {"ties": "pessimistic (rank = documents scoring ≥ the gold)", "pool": "full", "top_k": TOP_K},
        "metric_scale": "fractions in [0, 1]; max@r is a mean rank; max@r_norm is the 0–100 formula divided by 100",
        "t4": {
            "splits": dict(zip(SPLITS, (0.6, 0.2, 0.2), strict=True)),
            "classifier": "StandardScaler + LogisticRegression(C=1.0) fitted on train",
            "calibration": "histogram binning (15 bins) and temperature scaling fitted on dev; reported on test",
            "ece": "15 equal-width bins of p(positive), Σ (n_b/N)|mean(y_b) − mean(p_b)|",
            "pair_set_digests": {code: info["digest"] for code, info in t4_details["pair_sets"].items()},
        }
        if "t4" in planned
        else None,
    }
    return Evaluation(scores=scores, averages=averages, details=details, manifest=manifest, encode_stats=stats)
