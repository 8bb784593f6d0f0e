"""The index of a run's error analysis: every unit (task and language, or language pair) it has an errors
page for, grouped by task, each with the address of its page."""

from __future__ import annotations

from dataclasses import dataclass

from evaluation.engine.languages import BY_CODE
from evaluation.engine.registry import TASKS
from evaluation.models import Run
from leaderboard.errors import UnitKey, error_units
from leaderboard.pages.selection import LANGUAGE_ORDER


@dataclass(frozen=True)
class TaskUnits:
    title: str
    task: str
    units: list[UnitKey]


def errors_index(run: Run) -> list[TaskUnits]:
    """The run's units with an errors page, task by task in registry order, languages in the site's order."""
    found = error_units(run)
    groups = []
    for task, spec in TASKS.items():
        keys = [
            UnitKey(spec, source, target)
            for unit_task, source, target in found
            if unit_task == task and source in BY_CODE and (target is None or target in BY_CODE)
        ]
        keys.sort(key=lambda key: (LANGUAGE_ORDER.get(key.language, 99), LANGUAGE_ORDER.get(key.target or "", -1)))
        if keys:
            groups.append(TaskUnits(spec.title, task, keys))
    return groups


ERROR_COLUMNS = (
    "run_id",
    "task",
    "query_language",
    "document_language",
    "item_id",
    "gold_rank",
    "query_text",
    "gold_text",
    "retrieved_item_ids",
)


def error_rows(report) -> list[list]:
    """The queries of an errors page (leaderboard.errors.ErrorReport) as its download: one line per query
    shown, in the page's order (worst gold rank first), the vocabulary's columns."""
    key = report.key
    return [
        [
            report.run.pk,
            key.spec.id,
            key.language,
            key.target or "",
            query["item_id"],
            query["rank"],
            query["query"]["text"],
            query["gold"]["text"],
            " ".join(str(found["item_id"]) for found in query["retrieved"]),
        ]
        for query in report.queries
    ]
