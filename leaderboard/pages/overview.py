"""The overview page: every model's task columns, overall score and rank interval, and its export."""

from __future__ import annotations

import numpy as np
from django.http import QueryDict

from evaluation.engine.bootstrap import percentile_intervals
from evaluation.engine.registry import TASKS
from evaluation.models import Score
from leaderboard import plots
from leaderboard.columns import Column, overall_keys, overview_columns
from leaderboard.export_vocabulary import score_column
from leaderboard.intervals import stored_joint_interval
from leaderboard.pages.selection import (
    ExportColumn,
    Page,
    Selection,
    export_table,
    filters_context,
    resolve_selection,
)
from leaderboard.run_intervals import (
    average_samples,
    joint_overall_samples,
)
from leaderboard.tables.overview import OVERALL, OverviewRow, OverviewTable, build_overview, next_sort
from leaderboard.tables.selection import expected_units


def joint_intervals(
    selection: Selection,
    columns,
    aggregates: list[dict],
    languages_by_run: dict[int, list[str]],
    replicates: dict[int, object] | None = None,
    column_replicates: dict[tuple[int, str], object] | None = None,
) -> dict[tuple[int, str], tuple[float, float]]:
    """The engine's joint bootstrap interval of every re-run's averages and overall score.

    Published runs have no resamples (their intervals stay the mean of the Wilson bounds); a
    re-run's average whose units the run does not all have keeps the mean of its bounds too."""
    counts = {(row["run_id"], row["task"], row["metric"]): row["n"] for row in aggregates}
    overall = set(overall_keys())
    found: dict[tuple[int, str], tuple[float, float]] = {}
    overall_samples: dict[int, np.ndarray] = {}
    unstored: dict[tuple[int, str], np.ndarray] = {}
    # Most runs share their languages: each task's units are listed once per language set, not per run.
    cached_units: dict[tuple[str, tuple[str, ...]], list] = {}

    def units_of(task: str, languages: list[str]) -> list:
        key = (task, tuple(languages))
        if key not in cached_units:
            cached_units[key] = selection.units_of(task, languages)
        return cached_units[key]

    for run in selection.runs:
        if run.is_published:
            continue
        # Every replicate the run's columns may ask for, read in one opening of its replicate file
        # (evaluation/stored_results.py) rather than one per column.
        run.results.read_replicates(
            (column.task, column.metric, units)
            for column in columns
            if TASKS[column.task].kind == "retrieval"
            and (units := units_of(column.task, languages_by_run.get(run.pk, selection.languages)))
            and counts.get((run.pk, column.task, column.metric)) == len(units)
        )
        groups = []
        for column in columns:
            if TASKS[column.task].kind == "classification":
                # The engine bootstraps a classification task's average jointly (its stored interval); an
                # average over only some of the run's languages keeps the mean of per-language bounds,
                # which the page and the API say is not joint.
                count = counts.get((run.pk, column.task, column.metric))
                interval = stored_joint_interval(run.results.averages, column.task, column.metric, count or 0)
                if interval is not None:
                    found[(run.pk, column.key)] = interval
                continue
            if TASKS[column.task].kind != "retrieval":
                continue
            units = units_of(column.task, languages_by_run.get(run.pk, selection.languages))
            if not units or counts.get((run.pk, column.task, column.metric)) != len(units):
                continue
            # The engine's stored interval when the average spans all the run's units (as
            # run_intervals.joint_average_interval gives it), else the replicates' percentile interval,
            # taken below for every such average at once.
            stored = stored_joint_interval(run.results.averages, column.task, column.metric, len(units))
            samples = (
                average_samples(run, column.task, column.metric, units)
                if stored is None or column_replicates is not None
                else None
            )
            if stored is not None:
                found[(run.pk, column.key)] = stored
            elif samples is not None:
                unstored[(run.pk, column.key)] = samples
            # Each column's replicates give the run page's rank in that column (paired across re-runs).
            if column_replicates is not None and samples is not None:
                column_replicates[(run.pk, column.key)] = samples
            if column.key in overall:
                groups.append((column.task, column.metric, units))
        # The overall score averages the overall columns that have results for the selection.
        wanted = [
            column
            for column in columns
            if column.key in overall and units_of(column.task, languages_by_run.get(run.pk, selection.languages))
        ]
        if groups and len(groups) == len(wanted):
            samples = joint_overall_samples(run, groups)
            if samples is not None:
                overall_samples[run.pk] = samples
                # The overall score's replicates give the rank intervals (paired across re-runs).
                if replicates is not None:
                    replicates[run.pk] = samples
    # Every such average's interval and every run's overall interval at once (each equal to its own
    # percentile_interval).
    for key, interval in zip(unstored, percentile_intervals(list(unstored.values())), strict=True):
        found[key] = interval
    for run_id, interval in zip(overall_samples, percentile_intervals(list(overall_samples.values())), strict=True):
        found[(run_id, OVERALL)] = interval
    return found


def overview_page(params: QueryDict) -> Page:
    columns = list(overview_columns())
    column_keys = [(column.task, column.metric) for column in columns]
    # The overview reads each run's averages, rank-file fingerprint and bootstrap settings, no more.
    selection = resolve_selection(params, column_keys)
    infos = selection.infos
    languages_by_run = selection.languages_by_run
    aggregates = (
        Score.objects.for_runs(selection.run_ids).column_means(
            column_keys, selection.languages, selection.pair_mode, languages_by_run=languages_by_run
        )
        if infos and selection.languages
        else []
    )
    expected = expected_units(selection.units, columns, set(selection.languages), selection.pair_mode)
    # Counted once per distinct language set (most runs share one), not once per run.
    by_languages: dict[tuple[str, ...], dict[str, int]] = {}
    for chosen in languages_by_run.values():
        if tuple(chosen) not in by_languages:
            by_languages[tuple(chosen)] = expected_units(selection.units, columns, set(chosen), selection.pair_mode)
    expected_by_run = {run_id: by_languages[tuple(chosen)] for run_id, chosen in languages_by_run.items()}
    replicates: dict[int, object] = {}
    column_replicates: dict[tuple[int, str], object] = {}
    intervals = joint_intervals(selection, columns, aggregates, languages_by_run, replicates, column_replicates)
    table = build_overview(
        infos,
        aggregates,
        expected,
        sort=params.get("sort"),
        columns=columns,
        expected_by_run=expected_by_run,
        intervals=intervals,
        coverage_by_run=selection.coverage_by_run(),
        ranked_over=selection.ranked_over,
        common=selection.common,
        replicates=replicates,
        # Simultaneous rank intervals are an option beside the per-model ones; the page says which it shows.
        simultaneous=params.get("ranks") == "simultaneous",
    )
    table.column_replicates = column_replicates
    # The chart compares, so it shows the ranked rows only (the same languages, the current engine).
    ranked = [row for row in table.rows if not row.overall.missing and row.rank is not None]
    ranked.sort(key=lambda row: -row.overall.value)
    figure = (
        plots.interval_chart(
            [row.run.label for row in ranked],
            [(row.overall.value, row.overall.ci_low, row.overall.ci_high) for row in ranked],
            title=f"Overall score with interval, ranked models over {len(selection.ranked_over)} languages",
        )
        if ranked
        else None
    )
    # Performance against size (as MTEB's board shows it): the ranked models whose parameter count is known.
    sized = [row for row in ranked if row.run.parameter_count]
    size_figure = (
        plots.size_chart(
            [
                (row.run.label, row.run.parameter_count, row.overall.value, row.overall.ci_low, row.overall.ci_high)
                for row in sized
            ],
            size_label="parameters",
        )
        if sized
        else None
    )
    headers = [
        ("rank", "Rank"),
        ("model", "Model"),
        *[(column.key, column.label) for column in table.columns],
        ("params", "Params"),
        ("dim", "Dim."),
        ("max_tokens", "Max tok."),
        ("memory", "Mem. GB"),
        ("license", "Licence"),
    ]
    sort_links = {key: next_sort(table.sort, key, columns) for key, _ in headers}
    context = {
        **filters_context(selection),
        "table": table,
        "headers": headers,
        "sort_links": sort_links,
        "overall_labels": [column.label for column in columns if column.key in table.overall_keys],
        "figure": figure,
        "size_figure": size_figure,
        "unsized": [row.run.label for row in ranked if not row.run.parameter_count],
        "common": selection.common,
        "mixed_origins": selection.mixed_origins,
        "published_twins": {
            run.pk: selection.published_twins[run.model_id]
            for run in selection.runs
            if run.model_id in selection.published_twins
        },
        "chance_levels": {
            column.key: TASKS[column.task].chance_level(column.metric, selection.pool_size) for column in columns
        },
        # The note on the ECE column links to the page of the task that the column belongs to.
        "ece_task": next((column.task for column in columns if column.metric == "ece"), None),
        # The model-facts columns; the runs come with their model already (no extra query).
        "facts": {run.pk: run.model for run in selection.runs},
    }
    return Page("Leaderboard", context, {"overview": export_table(export_columns(table), table.rows)})


def export_columns(table: OverviewTable) -> list[ExportColumn[OverviewRow]]:
    """The overview's download, read off the table's own rows and columns (one block per table column).

    The overall score is a mean of the overall columns' values, all on the main metric's scale."""
    overall_metric = next((column.metric for column in table.columns if column.key in table.overall_keys), "")
    found: list[ExportColumn[OverviewRow]] = [
        ExportColumn("run_id", lambda row: row.run.id),
        ExportColumn("model", lambda row: row.run.label),
        ExportColumn("model_id", lambda row: row.run.model_name),
        ExportColumn("origin", lambda row: row.run.origin),
        ExportColumn("kind", lambda row: row.run.kind),
        ExportColumn("parameter_count", lambda row: row.run.parameter_count),
        ExportColumn("benchmark", lambda row: row.run.dataset),
        ExportColumn("rank_best", lambda row: row.rank[0] if row.rank else None),
        ExportColumn("rank_worst", lambda row: row.rank[1] if row.rank else None),
        ExportColumn("overall", lambda row: row.overall.value, overall_metric),
        ExportColumn("overall_ci_low", lambda row: row.overall.ci_low, overall_metric),
        ExportColumn("overall_ci_high", lambda row: row.overall.ci_high, overall_metric),
        ExportColumn("averaged_languages", lambda row: " ".join(row.coverage.averaged) if row.coverage else ""),
        ExportColumn("coverage", lambda row: row.coverage.label if row.coverage else ""),
        ExportColumn("ranked_over", lambda row: " ".join(row.ranked_over)),
        ExportColumn("engine_version", lambda row: row.run.engine_version),
        ExportColumn("older_engine", lambda row: row.run.is_older_engine),
    ]
    for column in table.columns:
        found += _cell_columns(column)
    return found


def _cell_columns(column: Column) -> list[ExportColumn[OverviewRow]]:
    """A table column's cell as five download columns: value and interval (in its metric), coverage."""
    key = column.key
    # Named `<task>_<metric>` with the vocabulary's suffixes (leaderboard.export_vocabulary), as every export.
    name = score_column(column.task, column.metric)
    return [
        ExportColumn(name, lambda row: row.cells[key].value, column.metric),
        ExportColumn(f"{name}_ci_low", lambda row: row.cells[key].ci_low, column.metric),
        ExportColumn(f"{name}_ci_high", lambda row: row.cells[key].ci_high, column.metric),
        ExportColumn(f"{name}_covered", lambda row: row.cells[key].covered),
        ExportColumn(f"{name}_expected", lambda row: row.cells[key].expected),
    ]
