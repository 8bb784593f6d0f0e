"""The leaderboard's tables, computed from plain rows. Pure Python, no Django.

How averages are computed (also stated on the pages):
- A task's score for a model is the mean of its per-language (or per-pair) values over the languages
  it is averaged over (leaderboard.coverage): by default the selected languages that the model
  declares (all selected languages when it declares none), as the paper does; with "common languages
  only", the selected languages every shown model declares. Languages a model was not evaluated on
  are left out, never counted as zero; the table shows how many languages each mean covers. Cells
  outside a model's declared languages are shown, marked, and never averaged.
- For the cross-lingual tasks (T2, T3 cross) a pair counts when both its languages are selected
  ("both", the default) or when its query language is selected ("source").
- The interval of a re-run's mean is the engine's joint bootstrap interval (the same resamples of the
  shared items for every language). Published results carry a Wilson 95% interval per Recall@k (from
  the published value and the pool size); the interval of their mean, and of any mean whose joint
  interval cannot be had, is the mean of the per-language bounds, an upper bound on its width
  whatever the correlation between languages. Rank bands follow the overall score's interval.
- The overall score is the mean of the retrieval columns (T1, T2, T3 mono, T3 cross Recall@1) that
  have any result for the selection; a model missing one of them gets no overall score.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from evaluation.engine import ENGINE_VERSION
from evaluation.engine.registry import METRICS, TASKS, is_cross_lingual
from leaderboard.coverage import OUTSIDE_NOTE, Coverage, is_outside
from leaderboard.ranking import Estimate, pairing, rank_intervals, rank_label

PAIR_MODES = ("both", "source")


@dataclass(frozen=True)
class Column:
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
    """The overview's columns, task by task in registry order, read from the registry on each call."""
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
        for column in spec.overview_columns
    )


def overall_keys() -> tuple[str, ...]:
    """The columns averaged into the overall score: the main metric of each task counted in it."""
    return tuple(
        column.key
        for spec in TASKS.values()
        if spec.in_overall
        for column in spec.overview_columns
        if column.metric == spec.main_metric
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


def mark_best(cells: Iterable[Cell], *, higher_is_better: bool = True) -> None:
    present = [cell for cell in cells if not cell.missing]
    if not present:
        return
    best = (max if higher_is_better else min)(cell.value for cell in present)  # type: ignore[type-var]
    for cell in present:
        cell.best = math.isclose(cell.value, best, rel_tol=0, abs_tol=1e-12)  # type: ignore[arg-type]


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

    @property
    def several_blocks(self) -> bool:
        """Whether the rows fall in more than one block (then each block gets a heading row)."""
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
            if self.expected.get(column.key, 0) > 0 and column.key not in self._valueless_columns()
        ]

    def _valueless_columns(self) -> dict[str, list[str]]:
        """Columns in which no shown row has a value (column key → the cells' reasons); none without rows."""
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
            for key, reasons in self._valueless_columns().items()
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
    for row, interval in zip(ranked, rank_intervals(estimates), strict=True):
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
        notes=notes,
        expected=dict(expected),
    )


def select_languages(
    available: Sequence[str],
    *,
    codes: Sequence[str] = (),
    scripts: Sequence[str] = (),
    families: Sequence[str] = (),
    info: dict | None = None,
    source_codes: Sequence[str] = ("eng",),
) -> list[str]:
    """The languages a view averages over, in `available` order.

    No explicit languages means all translated languages (English, the source, only when chosen);
    script and family filters narrow that further. `info` maps a code to an object with `script`
    and `family` attributes (evaluation.engine.languages.BY_CODE).
    """
    chosen = [code for code in available if code in codes] if codes else [c for c in available if c not in source_codes]
    if scripts:
        chosen = [code for code in chosen if info and code in info and info[code].script in scripts]
    if families:
        chosen = [code for code in chosen if info and code in info and info[code].family in families]
    return chosen


def pair_selected(source: str, target: str | None, languages: set[str], mode: str) -> bool:
    if target is None:
        return source in languages
    if mode == "source":
        return source in languages
    return source in languages and target in languages


def expected_units(
    units: Iterable[tuple[str, str, str | None]], columns: Sequence[Column], languages: set[str], mode: str
) -> dict[str, int]:
    """Per column, how many selected languages/pairs have any result in this version.

    `units` are distinct (task, source, target) triples present among the version's scores.
    """
    counts: dict[str, int] = {}
    for column in columns:
        counts[column.key] = sum(
            1
            for task, source, target in units
            if task == column.task
            and (target is not None) == column.pair
            and pair_selected(source, target, languages, mode)
        )
    return counts


@dataclass
class LanguageTable:
    """Rows = runs, columns = languages (plus the mean), for one metric of one task."""

    metric: str
    languages: list[str]
    rows: list[tuple[RunInfo, list[Cell], Cell]]
    # Per run id, its block under the one ranking rule (block_of) and each block's heading.
    block_by_run: dict[int, str] = field(default_factory=dict)
    block_labels: dict[str, str] = field(default_factory=dict)

    @property
    def several_blocks(self) -> bool:
        """Whether the rows fall in more than one block (then each block gets a heading row)."""
        return len(set(self.block_by_run.values())) > 1


def build_language_table(
    runs: Sequence[RunInfo],
    values: Iterable[dict],
    languages: Sequence[str],
    metric: str,
    *,
    higher_is_better: bool = True,
    averaged_by_run: Mapping[int, Sequence[str]] | None = None,
    ranked_over: Sequence[str] | None = None,
    common: bool = False,
) -> LanguageTable:
    """Per-language cells from rows {run_id, source, metric, value, ci_low, ci_high}.

    For pair tasks the caller passes per-source means (value = mean over target languages). With
    `averaged_by_run` and `ranked_over`, rows are put in the blocks of the ranking rule (block_of):
    the best values are marked among the first block only, and the blocks keep their order.
    """
    lookup = {(row["run_id"], row["source"]): row for row in values if row["metric"] == metric}
    rows = []
    for run in runs:
        cells = []
        for code in languages:
            row = lookup.get((run.id, code))
            if row is None or row.get("value") is None:
                cells.append(Cell(expected=1, note="not covered"))
            else:
                cells.append(
                    Cell(
                        value=row["value"], ci_low=row.get("ci_low"), ci_high=row.get("ci_high"), covered=1, expected=1
                    )
                )
            if is_outside(run.declared_languages, code):
                cells[-1].outside = True
                cells[-1].note = cells[-1].note or OUTSIDE_NOTE
        averaged = [cell for cell in cells if not cell.outside]
        present = [cell for cell in averaged if not cell.missing]
        mean = (
            Cell(value=sum(c.value for c in present) / len(present), covered=len(present), expected=len(averaged))  # type: ignore[misc]
            if present
            else Cell(expected=len(averaged), note="not covered")
        )
        rows.append((run, cells, mean))
    blocks = {
        run.id: block_of(
            run, None if averaged_by_run is None else averaged_by_run.get(run.id, ranked_over), ranked_over or ()
        )
        for run in runs
    }
    rows = [row for block in BLOCKS for row in rows if blocks[row[0].id] == block]
    compared = [row for row in rows if blocks[row[0].id] == RANKED]
    for index in range(len(languages)):
        mark_best((row[1][index] for row in compared if not row[1][index].outside), higher_is_better=higher_is_better)
    mark_best((row[2] for row in compared), higher_is_better=higher_is_better)
    labels = {block: block_label(block, ranked_over or languages, common=common) for block in BLOCKS}
    return LanguageTable(metric=metric, languages=list(languages), rows=rows, block_by_run=blocks, block_labels=labels)


def pair_matrix(
    values: Iterable[dict], languages: Sequence[str], diagonal: Iterable[dict] = ()
) -> list[list[float | None]]:
    """A square matrix [source][target] of pair values, with per-language values on the diagonal."""
    index = {code: position for position, code in enumerate(languages)}
    matrix: list[list[float | None]] = [[None] * len(languages) for _ in languages]
    for row in values:
        if row["source"] in index and row["target"] in index:
            matrix[index[row["source"]]][index[row["target"]]] = row["value"]
    for row in diagonal:
        if row["source"] in index:
            matrix[index[row["source"]]][index[row["source"]]] = row["value"]
    return matrix


def asymmetry(matrix: Sequence[Sequence[float | None]]) -> list[list[float | None]]:
    """L1→L2 minus L2→L1 for every pair; None where either direction is missing or on the diagonal."""
    size = len(matrix)
    result: list[list[float | None]] = [[None] * size for _ in range(size)]
    for i in range(size):
        for j in range(size):
            if i != j and matrix[i][j] is not None and matrix[j][i] is not None:
                result[i][j] = matrix[i][j] - matrix[j][i]  # type: ignore[operator]
    return result


@dataclass
class GroupSummary:
    label: str
    mean: float | None
    pairs: int


def group_pairs(
    values: Iterable[dict], info: dict, languages: Sequence[str], attribute: str
) -> tuple[GroupSummary, GroupSummary, list[tuple[str, float | None, int]]]:
    """Same-group vs cross-group pair means (attribute 'script' or 'family') and per-group detail.

    Returns (same, cross, groups) where groups lists each group that has at least one same-group pair
    with its mean, e.g. ('Devanagari', 0.31, 2) for Hindi→Marathi and Marathi→Hindi.
    """
    selected = set(languages)
    same: list[float] = []
    cross: list[float] = []
    by_group: dict[str, list[float]] = {}
    for row in values:
        source, target = row["source"], row.get("target")
        if target is None or source not in selected or target not in selected or row.get("value") is None:
            continue
        group_source = getattr(info[source], attribute)
        if group_source == getattr(info[target], attribute):
            same.append(row["value"])
            label = info[source].script_name if attribute == "script" else group_source
            by_group.setdefault(label, []).append(row["value"])
        else:
            cross.append(row["value"])

    def summary(label: str, numbers: list[float]) -> GroupSummary:
        return GroupSummary(label, sum(numbers) / len(numbers) if numbers else None, len(numbers))

    noun = "script" if attribute == "script" else "family"
    groups = [(label, sum(v) / len(v), len(v)) for label, v in sorted(by_group.items())]
    return summary(f"same {noun}", same), summary(f"cross-{noun}", cross), groups


def format_metric(metric: str, value: float | None) -> str:
    """A value as the pages print it, in the metric's scale; an unknown metric is taken as a fraction."""
    if value is None:
        return ""
    spec = METRICS.get(metric)
    return spec.format(value) if spec is not None else percent(value)


@dataclass
class ScoreSection:
    """Every score of one task of one run: rows of (source, target, [(value text, interval text)])."""

    task: str
    metrics: list[str]
    rows: list[tuple[str, str | None, list[tuple[str, str] | None]]]

    @property
    def pairs(self) -> bool:
        return any(target for _, target, _ in self.rows)


def score_sections(scores: Iterable[dict], language_order: dict[str, int]) -> list[ScoreSection]:
    """Group a run's scores ({task, source, target, metric, value, ci_low, ci_high}) by task, in a
    fixed task, language and metric order, with values formatted for display."""
    grouped: dict[str, dict[tuple[str, str | None], dict[str, dict]]] = {}
    for score in scores:
        grouped.setdefault(score["task"], {}).setdefault((score["source"], score["target"]), {})[score["metric"]] = (
            score
        )

    def rank(order: Sequence[str], key: str) -> tuple[int, str]:
        return (order.index(key) if key in order else len(order), key)

    sections = []
    task_order, metric_order = tuple(TASKS), tuple(METRICS)
    for task in sorted(grouped, key=lambda key: rank(task_order, key)):
        metrics = sorted(
            {metric for values in grouped[task].values() for metric in values}, key=lambda m: rank(metric_order, m)
        )
        rows = []
        for (source, target), values in sorted(
            grouped[task].items(),
            key=lambda item: (language_order.get(item[0][0], 99), language_order.get(item[0][1] or "", -1)),
        ):
            cells: list[tuple[str, str] | None] = []
            for metric in metrics:
                score = values.get(metric)
                if score is None:
                    cells.append(None)
                    continue
                interval = ""
                if score.get("ci_low") is not None and score.get("ci_high") is not None:
                    interval = f"[{format_metric(metric, score['ci_low'])}, {format_metric(metric, score['ci_high'])}]"
                cells.append((format_metric(metric, score["value"]), interval))
            rows.append((source, target, cells))
        sections.append(ScoreSection(task=task, metrics=metrics, rows=rows))
    return sections


def manifest_facts(manifest: dict) -> list[tuple[str, str]]:
    """The manifest entries a reader looks for first, as (label, text); missing ones are left out."""
    facts: list[tuple[str, str]] = []

    def get(*path: str):
        value: object = manifest
        for key in path:
            if not isinstance(value, dict) or key not in value:
                return None
            value = value[key]
        return value

    dataset = get("dataset") or {}
    if isinstance(dataset, dict) and dataset.get("name"):
        text = f"{dataset.get('name')} {dataset.get('version', '')}".strip()
        if dataset.get("pool_size"):
            text += f", pool {dataset['pool_size']:,} per language"
        if dataset.get("content_hash"):
            text += f", sha256 {str(dataset['content_hash'])[:12]}…"
        facts.append(("Dataset", text))
    model = get("model") or {}
    if isinstance(model, dict):
        revision = model.get("resolved_revision") or model.get("revision")
        if revision:
            facts.append(("Model revision", str(revision)))
        prompts = model.get("prompts")
        if isinstance(prompts, dict):
            shown = "; ".join(f"{role}: {text!r}" for role, text in prompts.items() if text) or "none"
            facts.append(("Prompts", shown))
    for label, path in (("Code version", ("code_version",)), ("Engine", ("engine_version",)), ("Seed", ("seed",))):
        value = get(*path)
        if value not in (None, ""):
            facts.append((label, str(value)))
    hardware = get("hardware")
    if hardware:
        facts.append(
            (
                "Hardware",
                ", ".join(f"{k}: {v}" for k, v in hardware.items()) if isinstance(hardware, dict) else str(hardware),
            )
        )
    elif get("device"):
        facts.append(("Device", str(get("device"))))
    timings = get("timings")
    if isinstance(timings, dict) and timings:
        facts.append(
            (
                "Timings",
                ", ".join(
                    f"{stage} {seconds:.1f} s" for stage, seconds in timings.items() if isinstance(seconds, int | float)
                ),
            )
        )
    total, encoded, cached = get("texts_total"), get("texts_encoded"), get("texts_from_cache")
    if total is not None:
        facts.append(
            ("Texts", f"{total:,} unique; {encoded or 0:,} encoded in this execution, {cached or 0:,} from the cache")
        )
    return facts


@dataclass
class PairRow:
    run: RunInfo
    cell: Cell
    block: str
    rank: tuple[int, int] | None = None

    @property
    def rank_label(self) -> str:
        return rank_label(self.rank)


def build_pair_table(
    runs: Sequence[RunInfo],
    values: Mapping[int, dict],
    source: str,
    target: str,
    *,
    higher_is_better: bool = True,
    replicates: Mapping[int, object] | None = None,
) -> list[PairRow]:
    """Every model's value for one ordered language pair, ranked with its 95% rank interval.

    `values` holds, per run id, {value, ci_low, ci_high} for the pair. A model is ranked when it
    declares both languages (or declares none) and was scored by the current engine (block_of);
    re-runs bring the bootstrap replicates of the pair's value (`replicates`), paired across re-runs."""
    pair = (source, target)
    rows = []
    for run in runs:
        found = values.get(run.id)
        if found is None or found.get("value") is None:
            continue
        covers = not run.declared_languages or (source in run.declared_languages and target in run.declared_languages)
        block = block_of(run, pair if covers else (), pair)
        cell = Cell(
            value=found["value"], ci_low=found.get("ci_low"), ci_high=found.get("ci_high"), covered=1, expected=1
        )
        rows.append(PairRow(run=run, cell=cell, block=block))
    ranked = [row for row in rows if row.block == RANKED]
    estimates = [row.cell.estimate((replicates or {}).get(row.run.id)) for row in ranked]
    for row, interval in zip(ranked, rank_intervals(estimates, higher_is_better=higher_is_better), strict=True):
        row.rank = interval
    mark_best((row.cell for row in ranked), higher_is_better=higher_is_better)
    sign = -1 if higher_is_better else 1

    def order(row: PairRow) -> tuple[float, str]:
        # Every row of the pair view has a value (rows without one are left out above).
        return (sign * (row.cell.value or 0.0), row.run.label.lower())

    return [row for block in BLOCKS for row in sorted((r for r in rows if r.block == block), key=order)]
