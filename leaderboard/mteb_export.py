"""A run's scores in MTEB's results format, so that they can travel to the MTEB ecosystem. No Django.

MTEB keeps one JSON file per task (`mteb.TaskResult`): `dataset_revision`, `task_name`,
`mteb_version`, `evaluation_time`, `kg_co2_emissions` and `scores`, a mapping split → list of
per-subset dicts, each with `hf_subset`, `languages` (ISO 639-3 + script, e.g. "hin-Deva"),
`main_score` and the metrics under MTEB's names (`recall_at_1`, `mrr_at_10`, …) as fractions.
Files sit in `<model name with "/" as "__">/<revision>/<task_name>.json`, next to a `model_meta.json`.

The format followed is that of mteb 2.26 (mteb/results/task_result.py, TaskResult and its
validators); `mteb_version` names that version, since these files were written by this site,
not by mteb, and `nirdesha` inside each file says which engine and benchmark version did.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass

from evaluation.engine.registry import TASKS
from evaluation.engine.results import ScoreRow
from evaluation.languages import BY_CODE

MTEB_FORMAT_VERSION = "2.26.24"
SPLIT = "test"
# Task names in MTEB's CamelCase style, derived from the registry.
MTEB_TASK_NAMES = {task_id: f"Nirdesha{spec.short_title.replace(' ', '')}" for task_id, spec in TASKS.items()}


@dataclass(frozen=True)
class RunFacts:
    model_name: str
    revision: str
    dataset_name: str
    dataset_version: str
    engine_version: str
    run_id: int
    parameter_count: int | None = None
    embedding_dimension: int | None = None
    max_tokens: int | None = None
    license: str = ""
    release_date: str | None = None
    open_weights: bool | None = None
    evaluated_at: str | None = None


def mteb_metric_name(metric: str) -> str:
    """MTEB writes "@" as "_at_": recall@1 -> recall_at_1."""
    return metric.replace("@", "_at_")


def language_script(code: str) -> str:
    info = BY_CODE.get(code)
    return f"{code}-{info.script}" if info else code


def task_results(facts: RunFacts, scores: Iterable[ScoreRow]) -> dict[str, dict]:
    """MTEB task name → its TaskResult as a dict, for every task the run has scores on."""
    subsets: dict[str, dict[str, dict]] = {}
    for row in scores:
        subset_name = row.source if row.target is None else f"{row.source}-{row.target}"
        subset = subsets.setdefault(row.task, {}).setdefault(
            subset_name,
            {
                "hf_subset": subset_name,
                "languages": [language_script(code) for code in (row.source, row.target) if code],
            },
        )
        subset[mteb_metric_name(row.metric)] = row.value
    results: dict[str, dict] = {}
    for task_id, by_subset in subsets.items():
        spec = TASKS.get(task_id)
        if spec is None:
            continue
        main = mteb_metric_name(spec.main_metric)
        entries = []
        for name in sorted(by_subset):
            entry = by_subset[name]
            if main not in entry:
                # MTEB requires a main score in every subset; one without it is not exported.
                continue
            entries.append({**entry, "main_score": entry[main]})
        if not entries:
            continue
        name = MTEB_TASK_NAMES[task_id]
        results[name] = {
            "dataset_revision": f"{facts.dataset_name}@{facts.dataset_version}",
            "task_name": name,
            "mteb_version": MTEB_FORMAT_VERSION,
            "scores": {SPLIT: entries},
            "evaluation_time": None,
            "kg_co2_emissions": None,
            "nirdesha": {
                "task": task_id,
                "title": spec.title,
                "main_metric": spec.main_metric,
                "engine_version": facts.engine_version,
                "run_id": facts.run_id,
            },
        }
    return results


def model_meta(facts: RunFacts) -> dict:
    """The parts of MTEB's model_meta.json that we know."""
    return {
        "name": facts.model_name,
        "revision": facts.revision or None,
        "release_date": facts.release_date,
        "n_parameters": facts.parameter_count,
        "embed_dim": facts.embedding_dimension,
        "max_tokens": facts.max_tokens,
        "license": facts.license or None,
        "open_weights": facts.open_weights,
        "framework": ["Sentence Transformers"],
    }


def folder_name(facts: RunFacts) -> str:
    return f"{facts.model_name.strip('/').replace('/', '__')}/{facts.revision or 'no_revision_available'}"


def archive(facts: RunFacts, scores: Iterable[ScoreRow]) -> bytes:
    """A zip of MTEB's results layout: model_meta.json and one <task_name>.json per task."""
    folder = folder_name(facts)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr(f"{folder}/model_meta.json", json.dumps(model_meta(facts), indent=2))
        for name, result in task_results(facts, scores).items():
            bundle.writestr(f"{folder}/{name}.json", json.dumps(result, indent=2, ensure_ascii=False))
    return buffer.getvalue()
