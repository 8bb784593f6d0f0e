"""The overview's table: one row per run, a cell per column, the overall score and its rank interval.

Pure Python, no Django; the averaging rules are stated in leaderboard/tables/__init__.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from leaderboard.columns import Column, overall_keys, overview_columns
from leaderboard.coverage import Coverage
from leaderboard.ranking import PER_MODEL, SIMULTANEOUS, pairing, rank_intervals, rank_label
from leaderboard.tables.cells import (
    BLOCKS,
    FEWER_LANGUAGES,
    RANKED,
    Cell,
    RunInfo,
    block_label,
    block_of,
    cell_from_aggregate,
    mark_best,
    mean_cell,
)

# The model facts the overview sorts by: `?sort=` key → (RunInfo field, whether larger comes first).
# Memory comes lightest first; the licence alphabetically.
FACT_SORTS: dict[str, tuple[str, bool]] = {
    "params": ("parameter_count", True),
    "dim": ("embedding_dimension", True),
    "max_tokens": ("max_tokens", True),
    "memory": ("memory_bytes_fp16", False),
    "license": ("license", False),
}


SPECIAL_SORTS = ("rank", "model", *FACT_SORTS)


OVERALL = "overall"


def _use_interval(cell: Cell, interval: tuple[float, float] | None) -> None:
    if interval is not None and not cell.missing:
        cell.ci_low, cell.ci_high = interval


@dataclass
class OverviewRow:
    run: RunInfo
    cells: dict[str, Cell]
    overall: Cell
    rank: tuple[int, int] | None = None
    coverage: Coverage | None = None
    block: str = RANKED
    # The language codes the row's rank is over; empty for a row without a rank.
    ranked_over: tuple[str, ...] = ()
    block_label: str = ""

    @property
    def rank_label(self) -> str:
        return rank_label(self.rank)

    def ordered_cells(self, columns: Sequence[Column]) -> list[Cell]:
        return [self.cells[column.key] for column in columns]


@dataclass
class OverviewTable:
    columns: list[Column]
    rows: list[OverviewRow]
    overall_keys: list[str]
    sort: str
    intervals_missing: bool
    notes: list[str] = field(default_factory=list)
    expected: dict[str, int] = field(default_factory=dict)
    # Whether the rank intervals are paired (leaderboard.ranking.pairing).
    rank_pairing: str = ""
    # Whether they hold per model or all at once (leaderboard.ranking.PER_MODEL or SIMULTANEOUS).
    rank_kind: str = ""
    # Per (run id, column key), a re-run's bootstrap replicates of that column's average (paired across
    # re-runs), from which the run page ranks a run within one column.
    column_replicates: dict[tuple[int, str], object] = field(default_factory=dict)

    @cached_property
    def several_blocks(self) -> bool:
        """Whether the rows fall in more than one block (then each block gets a heading row).

        Computed once: the template asks once a row."""
        return len({row.block for row in self.rows}) > 1

    @property
    def ranked_heading(self) -> str:
        """The heading of the ranked block, said once above the table."""
        return next((row.block_label for row in self.rows if row.block == RANKED), "")

    @property
    def visible_columns(self) -> list[Column]:
        """Columns with any result for the selection; an all-empty column is explained in a note instead."""
        return [
            column
            for column in self.columns
            if self.expected.get(column.key, 0) > 0 and column.key not in self._valueless_columns
        ]

    @cached_property
    def _valueless_columns(self) -> dict[str, list[str]]:
        """Columns in which no shown row has a value (column key → the cells' reasons); none without rows.

        Computed once a table: the template asks for the visible columns once a row, and recomputing
        this scan of every row each time made the overview quadratic in its models (3.6 s of a
        profiled 8.4 s rebuild at 1,000 models). The rows and columns are not changed once built."""
        found = {}
        for column in self.columns:
            cells = [row.cells[column.key] for row in self.rows]
            if cells and all(cell.missing for cell in cells):
                found[column.key] = sorted({cell.note for cell in cells if cell.note})
        return found

    @property
    def empty_column_notes(self) -> list[str]:
        """One sentence per column hidden because no shown model has a value in it on this version."""
        labels = {column.key: column.label for column in self.columns}
        return [
            f"{labels[key]} is hidden: no model shown has a value on this version"
            + (f" ({'; '.join(reasons)})." if reasons else ".")
            for key, reasons in self._valueless_columns.items()
            if self.expected.get(key, 0) > 0
        ]


def parse_sort(sort: str | None, columns: Sequence[Column]) -> tuple[str, bool]:
    """(key, descending) from `?sort=`; unknown keys fall back to the rank."""
    sort = (sort or "rank").strip()
    descending = sort.startswith("-")
    key = sort.lstrip("-")
    if key not in SPECIAL_SORTS and key not in {column.key for column in columns}:
        return "rank", False
    return key, descending


def next_sort(current: str, key: str, columns: Sequence[Column]) -> str:
    """The `?sort=` value a header link should carry: best first, then the other way round."""
    by_key = {column.key: column for column in columns}
    column = by_key.get(key)
    best_first = key if key in ("rank", "model") or (column and not column.higher_is_better) else f"-{key}"
    if key in FACT_SORTS:
        best_first = f"-{key}" if FACT_SORTS[key][1] else key
    if current == best_first:
        return best_first[1:] if best_first.startswith("-") else f"-{best_first}"
    return best_first


def _sort_rows(rows: list[OverviewRow], key: str, descending: bool) -> list[OverviewRow]:
    def value_of(row: OverviewRow) -> float | str | None:
        if key == "rank":
            # The rank follows the overall score; sorting by it is sorting by that score, best first.
            return None if row.overall.value is None else -row.overall.value
        if key == "model":
            return row.run.label.lower()
        if key in FACT_SORTS:
            fact = getattr(row.run, FACT_SORTS[key][0])
            # An unknown fact (None, or an empty licence) goes last, like a missing score.
            if isinstance(fact, str):
                return fact.lower() or None
            return fact
        return row.cells[key].value

    present = [row for row in rows if value_of(row) is not None]
    absent = [row for row in rows if value_of(row) is None]
    present.sort(key=lambda row: row.run.label.lower())
    present.sort(key=value_of, reverse=descending)  # type: ignore[arg-type]
    absent.sort(key=lambda row: row.run.label.lower())
    # Missing values go last whichever way the column is sorted.
    return present + absent


def build_overview(
    runs: Sequence[RunInfo],
    aggregates: Iterable[dict],
    expected: dict[str, int],
    *,
    sort: str | None = None,
    columns: Sequence[Column] | None = None,
    expected_by_run: Mapping[int, Mapping[str, int]] | None = None,
    intervals: Mapping[tuple[int, str], tuple[float, float]] | None = None,
    coverage_by_run: Mapping[int, Coverage] | None = None,
    ranked_over: Sequence[str] | None = None,
    common: bool = False,
    replicates: Mapping[int, object] | None = None,
    simultaneous: bool = False,
) -> OverviewTable:
    """One row per run with a cell per column, overall score, rank interval and sort order.

    `aggregates` has one dict per (run_id, task, metric) with mean, n, ci_low, ci_high, n_ci over the
    languages each run is averaged over; `expected` is, per column key, how many of the selected
    languages (or pairs) this benchmark version has results for at all, and `expected_by_run` the
    same within each run's averaged languages. `intervals` replaces the interval of a cell, keyed by
    (run id, column key or OVERALL), with a better one (the engine's joint bootstrap interval).
    `ranked_over` is the languages the ranks are over (the selection, or the common languages); a run
    averaged over other languages, or scored by an older engine, is shown unranked in its own block
    (block_of). Without it every current-engine run is ranked. `replicates` holds, per run id, the
    bootstrap replicates of its overall score (paired across re-runs); the rank intervals come from
    every model's rank in every replicate (leaderboard.ranking).
    """
    columns = overview_columns() if columns is None else columns
    by_key = {(row["run_id"], row["task"], row["metric"]): row for row in aggregates}
    overall = [key for key in overall_keys() if expected.get(key, 0) > 0]
    intervals = intervals or {}
    rows = []
    for run in runs:
        cells = {}
        # A model averaged over fewer languages than the selection expects fewer of them.
        run_expected = (expected_by_run or {}).get(run.id, expected)
        for column in columns:
            cell = cell_from_aggregate(
                by_key.get((run.id, column.task, column.metric)),
                run_expected.get(column.key, 0) if expected.get(column.key, 0) else 0,
            )
            if cell.missing and cell.note == "not covered" and run.is_published and column.metric == "ece":
                cell.note = "reference ECE not comparable"
            if cell.missing and cell.note == "no results for this selection" and expected.get(column.key, 0):
                cell.note = "no declared language selected"
            _use_interval(cell, intervals.get((run.id, column.key)))
            cells[column.key] = cell
        total = mean_cell([cells[key] for key in overall]) if overall else Cell(note="no results")
        _use_interval(total, intervals.get((run.id, OVERALL)))
        found = (coverage_by_run or {}).get(run.id)
        averaged = found.averaged if found is not None and ranked_over is not None else None
        block = block_of(run, averaged, ranked_over or ())
        # A run without results for some of its languages is averaged over fewer than it is shown for.
        if block == RANKED and any(cells[key].partial for key in overall):
            block = FEWER_LANGUAGES
        rows.append(
            OverviewRow(
                run=run,
                cells=cells,
                overall=total,
                coverage=found,
                block=block,
                block_label=block_label(block, ranked_over or (), common=common),
            )
        )

    ranked = [row for row in rows if not row.overall.missing and row.block == RANKED]
    estimates = [row.overall.estimate((replicates or {}).get(row.run.id)) for row in ranked]
    for row, interval in zip(ranked, rank_intervals(estimates, simultaneous=simultaneous), strict=True):
        row.rank = interval
        row.ranked_over = tuple(ranked_over or (row.coverage.averaged if row.coverage else ()))
    # "Best" is a comparison too: it is marked among the ranked rows only (the same languages).
    for column in columns:
        mark_best((row.cells[column.key] for row in ranked), higher_is_better=column.higher_is_better)
    mark_best(row.overall for row in ranked)

    key, descending = parse_sort(sort, columns)
    sort_value = f"-{key}" if descending else key
    notes = []
    empty = [column.label for column in columns if expected.get(column.key, 0) == 0]
    if empty:
        notes.append(
            f"No results for this language selection in {', '.join(empty)}: "
            "those columns are hidden and left out of the overall score."
        )
    # Blocks stay in their order whatever the sort: the sort orders the rows within each block.
    ordered = [row for block in BLOCKS for row in _sort_rows([r for r in rows if r.block == block], key, descending)]
    return OverviewTable(
        columns=list(columns),
        rows=ordered,
        overall_keys=overall,
        sort=sort_value,
        intervals_missing=any(not row.overall.has_ci for row in ranked),
        rank_pairing=pairing(estimates) if estimates else "",
        rank_kind=SIMULTANEOUS if simultaneous else PER_MODEL,
        notes=notes,
        expected=dict(expected),
    )
