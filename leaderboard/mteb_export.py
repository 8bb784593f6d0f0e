"""A run's scores in MTEB's results format, so that they can travel to the MTEB ecosystem. No Django.

MTEB keeps one JSON file per task (`mteb.TaskResult`): `dataset_revision`, `task_name`,
`mteb_version`, `evaluation_time`, `kg_co2_emissions` and `scores`, a mapping split → list of
per-subset dicts, each with `hf_subset`, `languages` (ISO 639-3 + script, e.g. "hin-Deva"),
`main_score` and the metrics under MTEB's names (`recall_at_1`, `mrr_at_10`, …) as fractions.
Files sit in `<model name with "/" as "__">/<revision>/<task_name>.json`, next to a `model_meta.json`;
the folder is named after the very name `model_meta.json` gives, so that mteb's
`ResultCache.load_results(models=[name])` finds it.

Task names: the full benchmark's are `NirdeshaT1`, `NirdeshaT2`, …; any other version (the validation
sample, the demo, a version of another name) exports under names of its own (`NirdeshaValidationT1`,
`NirdeshaDemoT1`), so that its results never land in the full benchmark's columns. The same names are
those of the mteb tasks that evaluation/mteb_tasks.py defines, against which these files validate.

The format followed is that of mteb 2.26 (mteb/results/task_result.py, TaskResult and its
validators); `mteb_version` names that version, since these files were written by this site,
not by mteb, and `nirdesha` inside each file says which engine and benchmark version did.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass

from evaluation.engine.languages import BY_CODE
from evaluation.engine.registry import TASKS
from evaluation.engine.results import ScoreRow

MTEB_FORMAT_VERSION = "2.26.24"
SPLIT = "test"
# Task names in MTEB's CamelCase style, derived from the registry: those of the full benchmark.
MTEB_TASK_NAMES = {task_id: f"Nirdesha{spec.short_title.replace(' ', '')}" for task_id, spec in TASKS.items()}
BENCHMARK_NAME = "nirdesha"
DEMO_PREFIX = "NirdeshaDemo"


def mteb_task_prefix(dataset_name: str, is_demo: bool = False) -> str:
    """ "Nirdesha" for the full benchmark; "NirdeshaDemo" for a demo; "Nirdesha" + the version's own name else."""
    if is_demo:
        return DEMO_PREFIX
    rest = dataset_name.strip().lower().removeprefix(BENCHMARK_NAME)
    return "Nirdesha" + "".join(part.capitalize() for part in re.split(r"[^0-9a-zA-Z]+", rest) if part)


def mteb_task_name(task_id: str, dataset_name: str = BENCHMARK_NAME, is_demo: bool = False) -> str:
    return f"{mteb_task_prefix(dataset_name, is_demo)}{TASKS[task_id].short_title.replace(' ', '')}"


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
    kind: str = "dense"
    declared_languages: tuple[str, ...] = ()
    hub_url: str = ""
    is_demo: bool = False


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
        name = mteb_task_name(task_id, facts.dataset_name, facts.is_demo)
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


# The licence ids mteb's ModelMeta accepts (mteb 2.26.24, mteb/models/model_meta.py, LICENSES), besides a URL.
MTEB_LICENCES = frozenset(
    {
        "not specified", "mit", "cc-by-2.0", "cc-by-3.0", "cc-by-4.0", "cc-by-sa-3.0", "cc-by-sa-4.0",
        "cc-by-nc-3.0", "cc-by-nc-4.0", "cc-by-nc-sa-3.0", "cc-by-nc-sa-4.0", "cc-by-nc-nd-4.0", "cc-by-nd-4.0",
        "openrail", "openrail++", "odc-by", "afl-3.0", "apache-2.0", "cc-by-nd-2.1-jp", "cc0-1.0", "bsd-3-clause",
        "gpl-3.0", "lgpl", "lgpl-3.0", "cdla-sharing-1.0", "mpl-2.0", "msr-la-nc", "multiple", "gemma", "eupl-1.2",
        "openmdw-1.1",
    }
)  # fmt: skip
# mteb requires "organisation/name"; a lexical baseline of this site has a bare name, so it is named
# under the site's own namespace rather than under mteb's baselines (which are other implementations).
BASELINE_NAMESPACE = "nirdesha-baselines"


# mteb's own name for a model whose name is unknown (ModelMeta.create_empty).
UNKNOWN_NAME = "no_model_name/available"
HUB_URL = re.compile(r"^https://huggingface\.co/(?P<id>[A-Za-z0-9][\w.-]*/[\w.-]+)/?$")


def mteb_model_name(facts: RunFacts) -> str:
    """A Hub id as it is; a baseline under the site's namespace; a local folder as the Hub model staff say it
    holds (its hub_url, e.g. the packaged all-MiniLM-L6-v2), else as unknown."""
    if facts.kind == "lexical":
        return f"{BASELINE_NAMESPACE}/{facts.model_name}"
    if "/" in facts.model_name:
        return facts.model_name
    hub = HUB_URL.match(facts.hub_url)
    return hub["id"] if hub else UNKNOWN_NAME


def mteb_licence(licence: str) -> str | None:
    """The licence as mteb names it (lower-case SPDX ids); None (unknown) for anything it does not know."""
    spdx = licence.strip().lower()
    return spdx if spdx in MTEB_LICENCES else None


def model_meta(facts: RunFacts) -> dict:
    """MTEB's model_meta.json (every field of mteb's ModelMeta), with None wherever we do not know the fact.

    As mteb's own ModelMeta.create_empty() does, an unknown fact is None, never a guess: the memory
    use, the similarity function the model was trained for, its use of instructions, its training
    data and code are not recorded here, and a missing revision is "no_revision_available".
    """
    languages = [language_script(code) for code in facts.declared_languages]
    return {
        "name": mteb_model_name(facts),
        "revision": facts.revision or "no_revision_available",
        "release_date": facts.release_date,
        "languages": languages or None,
        "loader": None,
        "n_parameters": facts.parameter_count,
        "memory_usage_mb": None,
        "max_tokens": facts.max_tokens,
        "embed_dim": facts.embedding_dimension,
        "license": mteb_licence(facts.license),
        "open_weights": facts.open_weights,
        "public_training_code": None,
        "public_training_data": None,
        # Dense models are loaded and run with sentence-transformers here; a lexical baseline with none of these.
        "framework": ["Sentence Transformers"] if facts.kind != "lexical" else [],
        "reference": facts.hub_url or None,
        "similarity_fn_name": None,
        "use_instructions": None,
        "training_datasets": None,
        "model_type": ["sparse"] if facts.kind == "lexical" else ["dense"],
    }


def folder_name(facts: RunFacts) -> str:
    """mteb's folder for the model: its metadata name with "/" as "__", then the revision."""
    return f"{mteb_model_name(facts).replace('/', '__')}/{facts.revision or 'no_revision_available'}"


def archive(facts: RunFacts, scores: Iterable[ScoreRow]) -> bytes:
    """A zip of MTEB's results layout: model_meta.json and one <task_name>.json per task."""
    folder = folder_name(facts)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr(f"{folder}/model_meta.json", json.dumps(model_meta(facts), indent=2))
        for name, result in task_results(facts, scores).items():
            bundle.writestr(f"{folder}/{name}.json", json.dumps(result, indent=2, ensure_ascii=False))
    return buffer.getvalue()
