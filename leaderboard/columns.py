"""How each task of the registry shows on the leaderboard: its sub-navigation link, its overview
columns and its axis on the compare page. Pure Python, no Django.

The engine's registry (evaluation/engine/registry.py) says what a task is; this module says how the
site shows it, so that the engine carries no display knowledge. Entries are keyed by task id and
only say where a task differs from the defaults derived from its spec, so a task added to the
registry shows on the site with no entry here:
- its sub-navigation link is its short title, when it has a page of its own (TaskSpec.has_page);
- a task in the overall score gets one overview column of its main metric, other tasks none;
- a retrieval task is an axis of the compare page, labelled with its short title; other tasks are not.

Every function reads the registry on each call, never a copy made at import, so a task added to it
(as the tests do) shows everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from evaluation.engine.registry import METRICS, TASKS, TaskSpec, is_cross_lingual


@dataclass(frozen=True)
class ColumnSpec:
    """A column of the leaderboard's overview as declared here: one metric of one task, averaged over languages.

    key: the column's name in `?sort=`, the exports and the API (the task id for a task's main column).
    """

    key: str
    label: str
    metric: str
    description: str = ""


@dataclass(frozen=True)
class TaskDisplay:
    """Where a task's display differs from the defaults (see the module docstring).

    nav_label: the task's link in the sub-navigation (empty: the task's short title).
    columns: the task's overview columns (None: one column of the main metric if the task is in the
      overall score, else none).
    compare_label: the task's axis on the compare page (None: the short title for a retrieval task,
      no axis for the others; empty: no axis).
    """

    nav_label: str = ""
    columns: tuple[ColumnSpec, ...] | None = None
    compare_label: str | None = None


DISPLAY: dict[str, TaskDisplay] = {
    "t1": TaskDisplay(columns=(ColumnSpec("t1", "T1 mono R@1", "recall@1", "persona→instruction, same language"),)),
    "t2": TaskDisplay(columns=(ColumnSpec("t2", "T2 cross R@1", "recall@1", "persona→instruction, language pairs"),)),
    "t3": TaskDisplay(
        nav_label="T3 mono",
        columns=(ColumnSpec("t3", "T3 mono R@1", "recall@1", "instruction→persona, same language"),),
    ),
    "t3x": TaskDisplay(
        nav_label="T3 cross",
        columns=(ColumnSpec("t3x", "T3 cross R@1", "recall@1", "instruction→persona, language pairs"),),
    ),
    "t4": TaskDisplay(
        columns=(
            ColumnSpec("t4_auroc", "T4 AUROC", "auroc", "compatibility classification"),
            ColumnSpec("t4_ece", "T4 ECE", "ece", "before calibration; lower is better"),
        ),
        compare_label="T4 AUROC",
    ),
}


def display(spec: TaskSpec) -> TaskDisplay:
    return DISPLAY.get(spec.id, TaskDisplay())


def nav_label(spec: TaskSpec) -> str:
    """The sub-navigation label; empty for a task without a page of its own."""
    return (display(spec).nav_label or spec.short_title) if spec.has_page else ""


def nav_links() -> list[tuple[str, str]]:
    """(task id, label) of every task with a page of its own, in registry order, for the sub-navigation."""
    return [(spec.id, nav_label(spec)) for spec in TASKS.values() if spec.has_page]


def task_columns(spec: TaskSpec) -> tuple[ColumnSpec, ...]:
    """The task's overview columns: its entry's, or by default one of its main metric if it is in the overall score."""
    declared = display(spec).columns
    if declared is not None:
        return declared
    if not spec.in_overall:
        return ()
    label = f"{spec.short_title} {METRICS[spec.main_metric].short_label}"
    return (ColumnSpec(spec.id, label, spec.main_metric, spec.description),)


def compare_label(spec: TaskSpec) -> str:
    """The task's label on the compare page's axes; empty when it is not compared there."""
    declared = display(spec).compare_label
    if declared is not None:
        return declared
    return spec.short_title if spec.kind == "retrieval" else ""


def compare_axes() -> list[tuple[str, str, str]]:
    """(task, metric, label) of each axis of the compare page: a task's main metric."""
    return [(spec.id, spec.main_metric, label) for spec in TASKS.values() if (label := compare_label(spec))]


@dataclass(frozen=True)
class Column:
    """An overview column as the tables use it: a ColumnSpec with its task and the metric's direction."""

    key: str
    label: str
    task: str
    metric: str
    higher_is_better: bool = True
    description: str = ""

    @property
    def pair(self) -> bool:
        return is_cross_lingual(self.task)


def overview_columns() -> tuple[Column, ...]:
    """The overview's columns, task by task in registry order."""
    return tuple(
        Column(
            column.key,
            column.label,
            spec.id,
            column.metric,
            METRICS[column.metric].higher_is_better,
            column.description,
        )
        for spec in TASKS.values()
        for column in task_columns(spec)
    )


def overall_keys() -> tuple[str, ...]:
    """The columns averaged into the overall score: the main metric of each task counted in it."""
    return tuple(
        column.key
        for spec in TASKS.values()
        if spec.in_overall
        for column in task_columns(spec)
        if column.metric == spec.main_metric
    )
