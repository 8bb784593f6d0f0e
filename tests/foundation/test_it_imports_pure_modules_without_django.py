"""The pure computation (engine, registry, results, tables, ranking, plots, agreement, sampling) needs no Django."""

import pkgutil

import pytest

import evaluation.engine
from tests.no_django import run_without_django

ENGINE_MODULES = sorted(
    f"evaluation.engine.{info.name}"
    for info in pkgutil.iter_modules(evaluation.engine.__path__)
    if info.name != "__main__"
)
PURE_MODULES = [
    "evaluation.engine",
    *ENGINE_MODULES,
    "evaluation.engine.dataset_files",
    "evaluation.engine.languages",
    "evaluation.gpu_estimate",
    "evaluation.public",
    "evaluation.redaction",
    "evaluation.networks",
    "evaluation.people",
    "evaluation.published_intervals",
    "evaluation.proportions",
    "leaderboard.columns",
    "leaderboard.tables.cells",
    "leaderboard.tables.selection",
    "leaderboard.tables.overview",
    "leaderboard.tables.per_language",
    "leaderboard.tables.pairs",
    "leaderboard.tables.runs",
    "leaderboard.ranking",
    "leaderboard.significance",
    "leaderboard.wording",
    "leaderboard.translation_split",
    "leaderboard.calibration_reference",
    "leaderboard.script_gap",
    "leaderboard.breakdowns",
    "evaluation.rank_storage",
    "evaluation.engine.rank_files",
    "leaderboard.plots",
    "leaderboard.coverage",
    "leaderboard.reproduce",
    "leaderboard.intervals",
    "leaderboard.mteb_export",
    "leaderboard.mteb_tasks",
    "annotation.agreement",
    "annotation.sampling",
]


@pytest.mark.slow
def test_it_imports_every_pure_module_with_django_blocked():
    assert {"evaluation.engine.registry", "evaluation.engine.results", "evaluation.engine.runner"} <= set(
        ENGINE_MODULES
    )
    code = "import importlib\n" + "".join(f"importlib.import_module({name!r})\n" for name in PURE_MODULES)

    done = run_without_django(code)

    assert done.returncode == 0, done.stderr[-3000:]


def test_the_blocker_does_refuse_django():
    done = run_without_django("import django.db\n")
    assert done.returncode != 0 and "django is blocked here" in done.stderr
