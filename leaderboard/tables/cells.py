"""What every leaderboard table is made of: a run's facts, a score cell, and the ranking rule's blocks.

Pure Python, no Django; the averaging rules are stated in leaderboard/tables/__init__.py.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evaluation.engine import ENGINE_VERSION
from evaluation.engine.registry import METRICS
from leaderboard.ranking import Estimate


@dataclass(frozen=True)
class RunInfo:
    """What the tables need to know about a run, without touching the database."""

    id: int
    label: str
    model_name: str
    origin: str
    kind: str = "dense"
    parameter_count: int | None = None
    dataset: str = ""
    declared_languages: tuple[str, ...] = ()
    embedding_dimension: int | None = None
    max_tokens: int | None = None
    memory_bytes_fp16: int | None = None
    license: str = ""
    # The engine version that scored the run; empty for published runs (the paper's figures).
    engine_version: str = ""

    @property
    def is_published(self) -> bool:
        return self.origin == "published"

    @property
    def is_older_engine(self) -> bool:
        return is_older_engine(self.origin, self.engine_version)


def is_older_engine(origin: str, engine_version: str) -> bool:
    """Whether a run was scored by an engine version other than the current one.

    Published runs are the reference implementation's figures (engine_version "reference"), not the
    output of any version of this engine; the current engine reproduces them (the reproduction page
    checks it), so they are ranked with current-engine re-runs, always labelled "published". A re-run
    scored by an earlier engine may differ in ways the version bump records, so it is never ranked
    against current-engine runs."""
    return origin != "published" and engine_version not in ("", ENGINE_VERSION)


# The blocks of a ranked table, in the order they are shown. Only the first is ranked.
RANKED, FEWER_LANGUAGES, OLDER_ENGINE = "ranked", "fewer_languages", "older_engine"


BLOCKS = (RANKED, FEWER_LANGUAGES, OLDER_ENGINE)


def block_of(run: RunInfo, averaged: Sequence[str] | None, ranked_over: Sequence[str]) -> str:
    """The block a run's row belongs to under the one ranking rule.

    A rank compares models measured on the same languages: a current-engine run averaged over exactly
    the languages the ranks are over is ranked; a run averaged over fewer (it declares fewer) is shown
    in its own block with its coverage and its average over its declared languages, unranked; an
    older-engine run is never ranked against current-engine runs."""
    if run.is_older_engine:
        return OLDER_ENGINE
    if averaged is not None and list(averaged) != list(ranked_over):
        return FEWER_LANGUAGES
    return RANKED


def block_label(block: str, ranked_over: Sequence[str], *, common: bool = False) -> str:
    """The heading of a block of rows, saying what its ranks are over (or why it has none)."""
    if block == RANKED:
        scope = "the languages every shown model declares" if common else "every selected language"
        return f"Ranked over {scope} ({len(ranked_over)}: {', '.join(ranked_over)})"
    if block == FEWER_LANGUAGES:
        return (
            "Models declaring fewer of the selected languages: each averaged over its declared languages "
            "(as in the paper), not ranked against the models above"
        )
    return (
        f"Scored by an older engine version (the current one is {ENGINE_VERSION}): not ranked against "
        "current-engine runs until re-queued"
    )


@dataclass
class Cell:
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    covered: int = 0
    expected: int = 0
    note: str = ""
    best: bool = False
    # Outside the model's declared languages: shown, greyed and labelled, never averaged.
    outside: bool = False
    # The languages (or query languages) the value is averaged over, where rows may differ in them;
    # None where every row of the column is over the same ones (a single language's cell).
    languages: tuple[str, ...] | None = None

    @property
    def missing(self) -> bool:
        return self.value is None

    @property
    def partial(self) -> bool:
        return self.value is not None and 0 < self.covered < self.expected

    @property
    def has_ci(self) -> bool:
        return self.ci_low is not None and self.ci_high is not None

    def estimate(self, samples=None) -> Estimate:
        assert self.value is not None
        return Estimate(self.value, self.ci_low, self.ci_high, samples)


def percent(value: float | None, digits: int = 1) -> str:
    return "" if value is None else f"{100 * value:.{digits}f}"


def cell_from_aggregate(aggregate: dict | None, expected: int) -> Cell:
    """A table cell from one aggregate row (mean, n, ci_low, ci_high, n_ci), or a 'not covered' cell."""
    if expected == 0:
        return Cell(expected=0, note="no results for this selection")
    if not aggregate or aggregate.get("n", 0) == 0 or aggregate.get("mean") is None:
        return Cell(expected=expected, note="not covered")
    # An interval of the mean exists only if every averaged value has one.
    with_ci = aggregate.get("n_ci", 0) == aggregate["n"]
    return Cell(
        value=aggregate["mean"],
        ci_low=aggregate.get("ci_low") if with_ci else None,
        ci_high=aggregate.get("ci_high") if with_ci else None,
        covered=aggregate["n"],
        expected=expected,
    )


def mean_cell(cells: Sequence[Cell]) -> Cell:
    """The mean of several cells, with the mean of their bounds as the interval (see module docstring)."""
    if not cells or any(cell.missing for cell in cells):
        return Cell(note="incomplete")
    value = sum(cell.value for cell in cells) / len(cells)  # type: ignore[misc]
    if all(cell.has_ci for cell in cells):
        low = sum(cell.ci_low for cell in cells) / len(cells)  # type: ignore[misc]
        high = sum(cell.ci_high for cell in cells) / len(cells)  # type: ignore[misc]
        return Cell(value=value, ci_low=low, ci_high=high, covered=len(cells), expected=len(cells))
    return Cell(value=value, covered=len(cells), expected=len(cells))


def comparable(cells: Iterable[Cell]) -> bool:
    """Whether the present cells of a column are averaged over the same languages (the ranking rule).

    A cell averaged over fewer languages than it is shown for (partial), or over other languages than
    another row's, is not comparable with them; a column holding such a pair is not ranked or marked."""
    present = [cell for cell in cells if not cell.missing]
    return not any(cell.partial for cell in present) and len({cell.languages for cell in present}) <= 1


def mark_best(cells: Iterable[Cell], *, higher_is_better: bool = True) -> bool:
    """Mark the best of a column's cells, the one rule every page, export and API uses for "best".

    Nothing is marked when the cells are not averaged over the same languages (`comparable`): a model
    is never marked against one averaged over other languages. Returns whether a mark was made."""
    present = [cell for cell in cells if not cell.missing]
    for cell in present:
        cell.best = False
    if not present or not comparable(present):
        return False
    best = (max if higher_is_better else min)(cell.value for cell in present)  # type: ignore[type-var]
    for cell in present:
        cell.best = math.isclose(cell.value, best, rel_tol=0, abs_tol=1e-12)  # type: ignore[arg-type]
    return True


def format_metric(metric: str, value: float | None) -> str:
    """A value as the pages print it, in the metric's scale; an unknown metric is taken as a fraction."""
    if value is None:
        return ""
    spec = METRICS.get(metric)
    return spec.format(value) if spec is not None else percent(value)
