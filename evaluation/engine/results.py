"""Typed, versioned run results: what the engine returns and what `run.details` / `run.manifest` hold.

`RunResult` is the engine's answer; its `Details` and `Manifest` are stored with `to_dict()` and read
back with `from_dict()`, the one reader of the engine's part of a run's details. The JSON has one
spelling per field (schema 1, see `SCHEMA_VERSION`); rows written before schema 1 are converted by the
data migration evaluation/0005, not by tolerant readers.

Details, schema 1 (keys of run.details written by others, e.g. the worker's attempt history or a
published import's list of skipped files, sit beside these and are not the engine's to read):

  schema_version      1
  skipped_tasks       {task: reason}
  averages            {task: {metric: {value, ci_low, ci_high, n}}}: mean over languages (or ordered
                      pairs), interval from the same bootstrap resamples of the shared items
  script_groups       {task: {same_script | cross_script | script:<Code>: {pairs, metrics}}} (cross-lingual tasks)
  ranks               [{task, source, target, path}]: per-query rank files (.npz) in default storage
  tokenizer_coverage  {script: {languages, texts, tokens_per_word, unk_rate, truncated_share, source}}
  <task id>           the task's own block, of the type its unit method declares (UnitMethod.details_type,
                      task_details.py): pair classification
                      {reliability: {lang: {before, after, calibrator, dev_cv_ece, temperature,
                      n_test_pairs}}, pair_sets: {lang: {digest, pairs}}, features}, each reliability
                      bin {lower, upper, count, mean_p, mean_y}; hard negatives {pools: {lang: {digest,
                      queries, pool_size}}, mining}.

No Django imports here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from evaluation.engine.registry import TASKS
from evaluation.engine.task_details import DETAILS_TYPES, TaskDetails
from evaluation.engine.task_details import ClassificationDetails as ClassificationDetails
from evaluation.engine.task_details import HardNegativeDetails as HardNegativeDetails
from evaluation.engine.task_details import Interval as Interval
from evaluation.engine.task_details import MultiReferenceDetails as MultiReferenceDetails
from evaluation.engine.task_details import PairSetInfo as PairSetInfo
from evaluation.engine.task_details import PoolInfo as PoolInfo
from evaluation.engine.task_details import Reliability as Reliability
from evaluation.engine.task_details import ReliabilityBin as ReliabilityBin

SCHEMA_VERSION = 1


class ResultsSchemaError(ValueError):
    """Stored results that are not of the schema this code reads."""


def _check_version(data: dict[str, Any], what: str) -> None:
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ResultsSchemaError(
            f"{what} of schema {version!r}; this code reads schema {SCHEMA_VERSION} (run the data migrations)."
        )


@dataclass(frozen=True)
class ScoreRow:
    task: str
    source: str
    target: str | None
    metric: str
    value: float
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True)
class ScriptGroup:
    pairs: list[str]
    metrics: dict[str, float]


@dataclass(frozen=True)
class RankFile:
    task: str
    source: str
    target: str | None
    path: str


# Keys of run.details that only the engine writes, besides the tasks' own blocks (tokenizer coverage is
# also measured by the pre-flight checks).
ENGINE_KEYS = frozenset({"averages", "ranks", "skipped_tasks", "script_groups"})


@dataclass
class Details:
    """The engine's part of run.details."""

    skipped_tasks: dict[str, str] = field(default_factory=dict)
    averages: dict[str, dict[str, Interval]] = field(default_factory=dict)
    script_groups: dict[str, dict[str, ScriptGroup]] = field(default_factory=dict)
    ranks: list[RankFile] = field(default_factory=list)
    tokenizer_coverage: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Each task's own block, of the type its unit method declares (UnitMethod.details_type).
    tasks: dict[str, TaskDetails] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "schema_version": self.schema_version,
            "skipped_tasks": dict(self.skipped_tasks),
            "averages": {task: {m: asdict(i) for m, i in metrics.items()} for task, metrics in self.averages.items()},
            "script_groups": {
                task: {name: asdict(group) for name, group in groups.items()}
                for task, groups in self.script_groups.items()
            },
            "ranks": [asdict(entry) for entry in self.ranks],
        }
        if self.tokenizer_coverage:
            data["tokenizer_coverage"] = self.tokenizer_coverage
        for task, block in self.tasks.items():
            data[task] = block.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Details:
        """The engine's details of a run; empty when the engine has not written any (e.g. a queued run)."""
        data = data or {}
        if "schema_version" not in data and not ((ENGINE_KEYS | TASKS.keys()) & data.keys()):
            # Nothing of the engine yet; the pre-flight checks may have measured the tokenizer already.
            return cls(tokenizer_coverage=dict(data.get("tokenizer_coverage") or {}))
        _check_version(data, "Run details")
        # Each block's type is found by its method's name (task_details.DETAILS_TYPES), not on the methods,
        # which bring torch and scikit-learn into a process that only reads stored results.
        blocks: dict[str, TaskDetails] = {}
        for task, spec in TASKS.items():
            if task in data and (block_type := DETAILS_TYPES.get(spec.method)) is not None:
                blocks[task] = block_type.from_dict(data[task])
        return cls(
            skipped_tasks=dict(data.get("skipped_tasks", {})),
            averages=_averages(data),
            script_groups={
                task: {name: ScriptGroup(**group) for name, group in groups.items()}
                for task, groups in data.get("script_groups", {}).items()
            },
            ranks=[RankFile(**entry) for entry in data.get("ranks", [])],
            tokenizer_coverage=dict(data.get("tokenizer_coverage") or {}),
            tasks=blocks,
        )

    @classmethod
    def averages_from_dict(cls, data: dict[str, Any] | None) -> dict[str, dict[str, Interval]]:
        """The averages of `from_dict(data)` alone, for a reader of many runs that needs nothing else
        (a board of 1,000 re-runs would otherwise type every run's list of rank files). `data` may hold
        only the schema version and the averages."""
        data = data or {}
        if "schema_version" not in data and not ((ENGINE_KEYS | TASKS.keys()) & data.keys()):
            return {}
        _check_version(data, "Run details")
        return _averages(data)


def _averages(data: dict[str, Any]) -> dict[str, dict[str, Interval]]:
    return {
        task: {metric: Interval(**values) for metric, values in metrics.items()}
        for task, metrics in data.get("averages", {}).items()
    }


@dataclass
class Manifest:
    """What produced a run's scores (run.manifest)."""

    engine_version: str
    code_version: str
    seed: int
    bootstrap: dict[str, Any]
    dataset: dict[str, Any]
    model: dict[str, Any]
    tasks: list[str]
    skipped_tasks: dict[str, str]
    device: str
    hardware: dict[str, Any]
    libraries: dict[str, str]
    timings: dict[str, float]
    texts_total: int
    texts_encoded: int
    texts_from_cache: int
    encoding: dict[str, Any]
    ranking: dict[str, Any]
    metric_scale: str
    # Task-specific blocks (e.g. the T4 splits and pair-set digests), stored under the task's id;
    # None for a task with a block that did not run.
    task_blocks: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    run_id: int | None = None
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("task_blocks", "run_id")}
        data.update(self.task_blocks)
        if self.run_id is not None:
            data["run_id"] = self.run_id
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Manifest:
        _check_version(data, "Run manifest")
        names = {f.name for f in fields(cls)} - {"task_blocks"}
        return cls(
            **{key: value for key, value in data.items() if key in names},
            task_blocks={task: data[task] for task in TASKS if task in data},
        )


@dataclass
class RunResult:
    """One evaluation's results: score rows, details (averages included) and the manifest."""

    scores: list[ScoreRow]
    details: Details
    manifest: Manifest
    encode_stats: Any = None

    @property
    def averages(self) -> dict[str, dict[str, Interval]]:
        return self.details.averages


def render_document(result: RunResult, *, run_id: int | None = None) -> dict[str, Any]:
    """The JSON document of an evaluation (`--output` of `manage.py evaluate` and `python -m evaluation.engine`).

    Scores sorted by (task, source, target, metric), the averages, and the manifest. `run_id` is the
    database run when there is one (None for a run without a database).
    """
    rows = sorted(result.scores, key=lambda row: (row.task, row.source, row.target or "", row.metric))
    details = result.details.to_dict()
    return {
        "schema_version": SCHEMA_VERSION,
        "run": run_id,
        "scores": [asdict(row) for row in rows],
        "averages": details["averages"],
        "manifest": result.manifest.to_dict(),
    }
