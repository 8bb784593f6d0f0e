"""Parser for the reference implementation's published result files. Pure Python, no Django.

The reference runner wrote one JSON file per (task, model, language or ordered language pair) into
folders named `<task>-<model>`. This module turns a folder of such folders into plain score records
in the leaderboard's vocabulary (tasks t1/t2/t3/t3x/t4, ISO 639-3 codes, metric names as the engine
writes them, values as fractions 0–1), checking every file and naming it in any error.

Two things are deliberately not carried over from the reference:
- its ECE values compare the mean predicted probability of a bin with the accuracy of the
  thresholded label, which is not the expected calibration error, so they are stored under the
  metric name `ece_reference` and never as `ece`;
- its "calibrated" T4 block was fitted on the split it reports, so only the base (uncalibrated)
  test metrics become leaderboard scores.

Every T4 block (dev and test, base and calibrated, both ECE figures) of every T4 file, the pooled
`all` file included, is nevertheless kept as published (`ModelResults.t4_blocks`, keyed by the
language in the file's name), so that the paper's Table 7 can be set beside the files.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from evaluation.engine.languages import BY_CODE, TARGET_CODES
from evaluation.engine.registry import TASKS


class PublishedResultError(ValueError):
    """A published result file that cannot be imported; the message names the file."""


class SkippedFile(Exception):
    """A well-formed file that does not belong on the leaderboard; the message says why."""


@dataclass(frozen=True)
class CatalogueEntry:
    """A published baseline under its canonical Hugging Face id."""

    name: str
    display_name: str
    parameter_count: int | None
    license: str
    aliases: tuple[str, ...] = ()
    parameter_source: str = ""
    # The translated languages the paper averages the model over (its section 3.3 and Tables 3–6).
    declared_languages: tuple[str, ...] = ()


# Parameter counts are the safetensors totals that the Hugging Face model pages show, rounded to
# millions, except for the two L3Cube models, whose count is computed from their config.json
# (BERT-base as in google/muril-base-cased: 12 layers, hidden 768, vocabulary 197,285, with pooler).
HF_PAGE = "Hugging Face model page (safetensors parameter count)"
# Declared languages. Section 3.3 of the paper: BGE-M3 and LaBSE cover all 12 languages, DistilUSE,
# Paraphrase-MPNet and Paraphrase-XLM-R only Gujarati, Hindi, Marathi and Urdu, and the averages of
# Tables 3–6 are taken over those. The same section says E5-Large-Instruct covers 11 and the
# Indic-SBERT variants 10 languages, but Tables 3 and 5 print and average all 12 for them, so the
# tables' 12 are what is declared (the reproduction page notes the contradiction).
ALL_TWELVE = ("asm", "ben", "guj", "hin", "kan", "mal", "mar", "ory", "pan", "tam", "tel", "urd")
GUJ_HIN_MAR_URD = ("guj", "hin", "mar", "urd")
CATALOGUE: tuple[CatalogueEntry, ...] = (
    CatalogueEntry(
        "intfloat/multilingual-e5-large-instruct",
        "E5-Large-Instruct",
        560_000_000,
        "MIT",
        ("multilingual-e5-large-instruct",),
        HF_PAGE,
        ALL_TWELVE,
    ),
    CatalogueEntry("BAAI/bge-m3", "BGE-M3", 568_000_000, "MIT", ("bge-m3",), HF_PAGE, ALL_TWELVE),
    CatalogueEntry("sentence-transformers/LaBSE", "LaBSE", 471_000_000, "Apache-2.0", ("LaBSE",), HF_PAGE, ALL_TWELVE),
    CatalogueEntry(
        "sentence-transformers/distiluse-base-multilingual-cased-v2",
        "distiluse-base-multilingual-cased-v2",
        135_000_000,
        "Apache-2.0",
        ("distiluse-base-multilingual-cased-v2", "distiluse-base-multilingual-cased"),
        HF_PAGE,
        GUJ_HIN_MAR_URD,
    ),
    CatalogueEntry(
        "sentence-transformers/paraphrase-multilingual-mpnet-base-v2",
        "paraphrase-multilingual-mpnet-base-v2",
        278_000_000,
        "Apache-2.0",
        ("paraphrase-multilingual-mpnet-base-v2",),
        HF_PAGE,
        GUJ_HIN_MAR_URD,
    ),
    CatalogueEntry(
        "sentence-transformers/paraphrase-xlm-r-multilingual-v1",
        "paraphrase-xlm-r-multilingual-v1",
        278_000_000,
        "Apache-2.0",
        ("paraphrase-xlm-r-multilingual-v1",),
        HF_PAGE,
        GUJ_HIN_MAR_URD,
    ),
    CatalogueEntry(
        "l3cube-pune/indic-sentence-bert-nli",
        "IndicSBERT (NLI)",
        238_000_000,
        "CC-BY-4.0",
        ("indic-sentence-bert-nli",),
        "computed from config.json (MuRIL-base BERT, vocabulary 197,285)",
        ALL_TWELVE,
    ),
    CatalogueEntry(
        "l3cube-pune/indic-sentence-similarity-sbert",
        "IndicSBERT-STS",
        238_000_000,
        "CC-BY-4.0",
        ("indic-sentence-similarity-sbert",),
        "computed from config.json (MuRIL-base BERT, vocabulary 197,285)",
        ALL_TWELVE,
    ),
)


def _alias_table() -> dict[str, CatalogueEntry]:
    table: dict[str, CatalogueEntry] = {}
    for entry in CATALOGUE:
        for alias in (entry.name, entry.name.rsplit("/", 1)[-1], *entry.aliases):
            table[alias.lower()] = entry
    return table


ALIASES = _alias_table()


def canonical_model(name: str) -> CatalogueEntry | None:
    """The catalogue entry for a backbone or folder name as the reference spelled it, if known."""
    return ALIASES.get(name.strip().lower())


# Folder prefix -> the reference's task name inside the files.
# The reference's result folders, each with the "task" its files declare and the task it holds here.
FOLDER_TASKS = {spec.reference_folder: spec.reference_task for spec in TASKS.values() if spec.reference_folder}
TASK_OF_FOLDER = {spec.reference_folder: spec.id for spec in TASKS.values() if spec.reference_folder}
RETRIEVAL_METRICS = {"1": "recall@1", "5": "recall@5", "10": "recall@10"}
T4_METRICS = ("auroc", "auprc", "accuracy")
# The reference wrote "all" as the language of T4 files; the language is in the file name instead.
T4_FILE_LANGUAGE = re.compile(r"-(?P<code>[a-z]{3})-[A-Za-z_]+-\d{8}T\d{6}Z\.json$")


@dataclass(frozen=True)
class PublishedScore:
    task: str
    source: str
    target: str | None
    metric: str
    value: float


@dataclass
class PublishedFile:
    path: Path
    model: CatalogueEntry
    task: str
    scores: list[PublishedScore]
    meta: dict
    # T4 only: (the language in the file's name or "all", the file's metrics object as published).
    t4_block: tuple[str, dict] | None = None


@dataclass
class ParsedResults:
    models: dict[str, ModelResults]
    skipped: list[str]


@dataclass
class ModelResults:
    """Everything the published files say about one model."""

    model: CatalogueEntry
    scores: list[PublishedScore] = field(default_factory=list)
    files: int = 0
    provenance: dict[str, dict] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    t4_blocks: dict[str, dict] = field(default_factory=dict)


@dataclass(frozen=True)
class PublishedDetails:
    """run.details of a published run: what its import kept besides the scores, written and read only here.

    A published run's details have one writer, `import_published_results`, as a re-run's have one,
    the engine (evaluation.engine.results.Details); the two never meet on one run. The JSON keeps
    the keys it has always had: "published": true, "skipped_files" (the import's reasons for each file
    it left out) and "t4_published" (every block of every T4 file, by the language in the file's
    name or "all", each with its file name under "file").
    """

    skipped_files: tuple[str, ...] = ()
    t4_blocks: dict[str, dict] = field(default_factory=dict)

    @classmethod
    def of(cls, results: ModelResults) -> PublishedDetails:
        return cls(skipped_files=tuple(results.skipped), t4_blocks=dict(results.t4_blocks))

    def to_dict(self) -> dict:
        return {"published": True, "skipped_files": list(self.skipped_files), "t4_published": self.t4_blocks}

    @classmethod
    def from_dict(cls, data: dict | None) -> PublishedDetails:
        """The published part of a run's details; empty for a run that is not published."""
        data = data or {}
        if not data.get("published"):
            return cls()
        return cls(
            skipped_files=tuple(str(reason) for reason in data.get("skipped_files") or ()),
            t4_blocks=dict(data.get("t4_published") or {}),
        )

    def t4_files(self) -> list[tuple[str, str]]:
        """(language code or "all", file name) of every T4 file kept, by code."""
        return [(code, str(block.get("file", ""))) for code, block in sorted(self.t4_blocks.items())]

    def table_7_file(self) -> str | None:
        """The T4 file whose blocks the paper's Table 7 prints: a model's pooled "all" file, else Assamese."""
        return "all" if "all" in self.t4_blocks else "asm" if "asm" in self.t4_blocks else None


def _fail(path: Path, message: str) -> PublishedResultError:
    return PublishedResultError(f"{path}: {message}")


def _fraction(path: Path, value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _fail(path, f"{where} is not a number ({value!r})")
    if not 0.0 <= float(value) <= 1.0:
        raise _fail(path, f"{where} = {value} is outside 0–1 (values must be fractions)")
    return float(value)


def _language(path: Path, code: str) -> str:
    if code not in TARGET_CODES and code not in BY_CODE:
        raise _fail(path, f"unknown language code {code!r}")
    return code


def _split_pair(path: Path, lang_or_pair: str) -> tuple[str, str | None]:
    if "->" in lang_or_pair:
        source, target = (part.strip() for part in lang_or_pair.split("->", 1))
        if source == target:
            raise _fail(path, f"pair {lang_or_pair!r} has the same language on both sides")
        return _language(path, source), _language(path, target)
    return _language(path, lang_or_pair.strip()), None


def _retrieval_scores(path: Path, data: dict, task: str, source: str, target: str | None) -> list[PublishedScore]:
    metrics = data.get("metrics")
    if not isinstance(metrics, dict) or not isinstance(metrics.get("recall"), dict):
        raise _fail(path, "metrics.recall is missing")
    scores = []
    for cutoff, metric in RETRIEVAL_METRICS.items():
        if cutoff not in metrics["recall"]:
            raise _fail(path, f"metrics.recall[{cutoff!r}] is missing")
        value = _fraction(path, metrics["recall"][cutoff], f"metrics.recall[{cutoff!r}]")
        scores.append(PublishedScore(task, source, target, metric, value))
    for key in ("mrr@10", "ndcg@10"):
        if key in metrics:
            scores.append(PublishedScore(task, source, target, key, _fraction(path, metrics[key], f"metrics.{key}")))
        elif key == "mrr@10":
            raise _fail(path, "metrics['mrr@10'] is missing")
    return scores


T4_BLOCK_FIELDS = ("base", "calibrated")
T4_ECE_FIELDS = ("ece_base", "ece_calibrated")


def _t4_block(path: Path, data: dict) -> dict:
    """The dev and test blocks of a T4 file as published, checked: {split: {base, calibrated, ece_*}}."""
    metrics = data.get("metrics") or {}
    block: dict = {}
    for split in ("dev", "test"):
        part = metrics.get(split)
        if not isinstance(part, dict):
            raise _fail(path, f"metrics.{split} is missing")
        kept: dict = {}
        for name in T4_BLOCK_FIELDS:
            if isinstance(part.get(name), dict):
                kept[name] = {
                    metric: _fraction(path, part[name][metric], f"{split}.{name}.{metric}")
                    for metric in T4_METRICS
                    if metric in part[name]
                }
        for name in T4_ECE_FIELDS:
            if name in part:
                kept[name] = _fraction(path, part[name], f"{split}.{name}")
        block[split] = kept
    return block


def _t4_scores(path: Path, data: dict, task: str) -> list[PublishedScore]:
    match = T4_FILE_LANGUAGE.search(path.name)
    if not match:
        raise _fail(path, "T4 file name does not carry a language (expected '...-<iso639-3>-<split>-<time>.json')")
    if match["code"] == "all":
        # One reference folder holds such a file next to 11 per-language ones. Its language cannot be
        # known, so it gives no per-language score; its blocks are kept under "all" (parse_file).
        return []
    source = _language(path, match["code"])
    test = (data.get("metrics") or {}).get("test")
    if not isinstance(test, dict) or not isinstance(test.get("base"), dict):
        raise _fail(path, "metrics.test.base is missing")
    scores = [
        PublishedScore(task, source, None, metric, _fraction(path, test["base"].get(metric), f"test.base.{metric}"))
        for metric in T4_METRICS
    ]
    if "ece_base" in test:
        # Kept under its own name: the reference's ECE is not comparable with ours (module docstring).
        value = _fraction(path, test["ece_base"], "test.ece_base")
        scores.append(PublishedScore(task, source, None, "ece_reference", value))
    return scores


def parse_file(path: Path, folder_task: str, folder_model: str) -> PublishedFile:
    """Read one result file; `folder_task`/`folder_model` come from its folder name and must agree."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise _fail(path, f"not UTF-8 text ({error.reason} at byte {error.start})") from error
    except json.JSONDecodeError as error:
        raise _fail(path, f"invalid JSON at line {error.lineno} column {error.colno}: {error.msg}") from error
    if not isinstance(data, dict):
        raise _fail(path, "expected a JSON object")
    for key in ("task", "backbone", "lang_or_pair"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise _fail(path, f"field {key!r} is missing or empty")
    if data["task"] != FOLDER_TASKS[folder_task]:
        raise _fail(path, f"task {data['task']!r} does not match its folder {folder_task!r}")
    model = canonical_model(data["backbone"])
    if model is None:
        raise _fail(path, f"unknown backbone {data['backbone']!r}; add it to evaluation.published.CATALOGUE")
    folder_entry = canonical_model(folder_model)
    if folder_entry is not None and folder_entry != model:
        raise _fail(path, f"backbone {data['backbone']!r} does not match its folder model {folder_model!r}")

    t4_block = None
    task = TASK_OF_FOLDER[folder_task]
    if TASKS[task].kind == "classification":
        scores = _t4_scores(path, data, task)
        match = T4_FILE_LANGUAGE.search(path.name)
        t4_block = (match["code"] if match else "all", _t4_block(path, data))
    else:
        source, target = _split_pair(path, data["lang_or_pair"])
        crosslingual = TASKS[task].cross_lingual
        if crosslingual != (target is not None):
            expected = "an ordered pair like 'hin->tam'" if crosslingual else "one language"
            raise _fail(path, f"lang_or_pair {data['lang_or_pair']!r} should be {expected} in {folder_task}")
        scores = _retrieval_scores(path, data, task, source, target)

    meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
    system = meta.get("system") if isinstance(meta.get("system"), dict) else {}
    provenance = {
        "config_path": meta.get("config_path"),
        "seed": meta.get("seed"),
        "split": data.get("split_tag"),
        "timestamp": data.get("timestamp"),
        "device": system.get("cuda_device"),
        "python": system.get("python"),
        "packages": system.get("packages") or {},
    }
    return PublishedFile(path=path, model=model, task=task, scores=scores, meta=provenance, t4_block=t4_block)


def split_folder_name(name: str) -> tuple[str, str] | None:
    """`t2_xling_retrieval-bge-m3` -> (`t2_xling_retrieval`, `bge-m3`); None for foreign folders."""
    for prefix in sorted(FOLDER_TASKS, key=len, reverse=True):
        if name.startswith(prefix + "-"):
            return prefix, name[len(prefix) + 1 :]
    return None


def result_files(root: Path) -> list[tuple[Path, str, str]]:
    """Every result file under `root` with its folder's task and model, in a stable order."""
    if not root.is_dir():
        raise PublishedResultError(f"{root}: not a folder of published results")
    found = []
    for folder in sorted(root.iterdir()):
        parts = split_folder_name(folder.name) if folder.is_dir() else None
        if parts is None:
            continue
        found.extend((path, *parts) for path in sorted(folder.glob("*.json")))
    if not found:
        raise PublishedResultError(f"{root}: no '<task>-<model>/*.json' result files found")
    return found


def parse_directory(root: Path, *, progress: Callable[[Iterable], Iterable] | None = None) -> ParsedResults:
    """Parse every file under `root`, keyed by canonical model id. Raises on the first bad file.

    The same (task, language or pair, metric) reported twice for one model is an error that names
    both files, because silently keeping either would make the result depend on file order.
    """
    files = result_files(root)
    iterator = progress(files) if progress else files
    results: dict[str, ModelResults] = {}
    seen: dict[tuple, Path] = {}
    skipped: list[str] = []
    for path, folder_task, folder_model in iterator:
        try:
            parsed = parse_file(path, folder_task, folder_model)
        except SkippedFile as reason:
            skipped.append(str(reason))
            owner = canonical_model(folder_model)
            if owner is not None:
                results.setdefault(owner.name, ModelResults(model=owner)).skipped.append(str(reason))
            continue
        entry = results.setdefault(parsed.model.name, ModelResults(model=parsed.model))
        for score in parsed.scores:
            key = (parsed.model.name, score.task, score.source, score.target, score.metric)
            if key in seen:
                raise _fail(path, f"{score.task} {score.source}->{score.target} {score.metric} also in {seen[key]}")
            seen[key] = path
        entry.scores.extend(parsed.scores)
        entry.files += 1
        if parsed.t4_block is not None:
            code, block = parsed.t4_block
            if code in entry.t4_blocks:
                raise _fail(path, f"a second T4 file for {code!r} ({entry.t4_blocks[code]['file']})")
            entry.t4_blocks[code] = {**block, "file": path.name}
        task_provenance = entry.provenance.setdefault(
            parsed.task,
            {"files": 0, "config_path": parsed.meta["config_path"], "seed": parsed.meta["seed"], "timestamps": []},
        )
        task_provenance["files"] += 1
        if parsed.meta["timestamp"]:
            task_provenance["timestamps"].append(parsed.meta["timestamp"])
        for key in ("device", "python", "split", "packages"):
            if parsed.meta.get(key):
                task_provenance.setdefault(key, parsed.meta[key])
    for entry in results.values():
        for task_provenance in entry.provenance.values():
            stamps = sorted(task_provenance.pop("timestamps"))
            task_provenance["first_timestamp"] = stamps[0] if stamps else None
            task_provenance["last_timestamp"] = stamps[-1] if stamps else None
    return ParsedResults(models=results, skipped=skipped)


# Each published Recall@k is a count of hits over the n queries of its pool, written at full double
# precision, so n can be read off the values: the smallest n for which every value times n is an
# integer. (The shipped files give 49,949, not the 50,000 items of a pool: the reference scored the
# queries it kept.) A common factor of every count would make n/d fit too; with thousands of counts
# that does not happen, and a count of 1 or a prime count rules it out.
RECALL_METRICS = frozenset({"recall@1", "recall@5", "recall@10"})


def derive_query_count(values: Iterable[float], *, tolerance: float = 1e-6, largest: int = 1_000_000) -> int | None:
    """The number of queries n that every value is a count over (value × n an integer), or None if none fits."""
    fractions = sorted({value for value in values if 0 < value < 1})
    if not fractions:
        return None
    smallest = fractions[0]

    def fits(n: int) -> bool:
        return all(abs(value * n - round(value * n)) <= tolerance * max(1.0, value * n) for value in fractions)

    # The smallest value is k hits out of n for some k; try k = 1, 2, … so that the first fit is the smallest n.
    for hits in range(1, int(largest * smallest) + 2):
        n = round(hits / smallest)
        if 0 < n <= largest and fits(n):
            return n
    return None


def published_query_count(parsed: ParsedResults) -> int | None:
    """The query count n behind every published Recall@k of these results (derive_query_count)."""
    return derive_query_count(
        score.value for results in parsed.models.values() for score in results.scores if score.metric in RECALL_METRICS
    )
