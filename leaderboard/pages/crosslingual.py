"""The cross-lingual page: one model's pair heatmap and its asymmetry, script and family groups,
and the pair view (every model ranked on one language pair).
"""

from __future__ import annotations

from django.http import QueryDict

from evaluation.engine.languages import BY_CODE
from evaluation.engine.registry import METRICS, TASKS
from evaluation.models import Run, Score
from evaluation.published_intervals import WILSON_METRICS
from leaderboard import plots
from leaderboard.asymmetry import (
    PAIRED,
    UNPAIRED,
    UNTESTED,
    AsymmetryTest,
    asymmetry_tests,
    counts,
    paired_asymmetry,
    unpaired_asymmetry,
    untested,
)
from leaderboard.columns import nav_label
from leaderboard.pages.selection import (
    FILTER_PARAMS,
    ExportColumn,
    Page,
    Selection,
    cross_lingual_tasks,
    encode_query,
    export_table,
    filters_context,
    query_params,
    resolve_selection,
)
from leaderboard.run_intervals import (
    bootstrap_settings,
    pair_samples,
    per_query_values,
)
from leaderboard.script_gap import METHOD as SCRIPT_GAP_METHOD
from leaderboard.script_gap import net_gap
from leaderboard.tables.cells import percent
from leaderboard.tables.pairs import (
    SPLIT_SORT_KEYS,
    PairRow,
    SplitRow,
    asymmetry,
    build_pair_table,
    group_pairs,
    next_split_sort,
    pair_matrix,
    parse_split_sort,
    sort_split_rows,
)

SPLIT_LABELS = ("Model", "Same script", "Cross-script", "Gap (pts)", "Same family", "Cross-family")
# Every parameter this page reads: the filters, its own choices and the sort.
PAGE_STATE = (*FILTER_PARAMS, "run", "task", "metric", "query_language", "document_language", "sort")


def crosslingual_page(params: QueryDict) -> Page:
    choices = {spec.id: spec for spec in cross_lingual_tasks()}
    spec = choices.get(params.get("task", "")) or next(iter(choices.values()))
    task = spec.id
    metric = params.get("metric") if params.get("metric") in spec.metrics else spec.main_metric
    selection = resolve_selection(params, [(task, metric)])
    runs = selection.runs
    chosen = None
    if params.get("run", "").isdigit():
        chosen = next((run for run in runs if run.pk == int(params["run"])), None)
    split = Score.objects.for_runs(selection.run_ids).script_split(task, metric, selection.languages)
    split_by_run = {row["run_id"]: row for row in split}
    if chosen is None and split:
        # Default to the model with the best cross-lingual mean, so the first view is the most informative.
        best = max(split, key=lambda row: (row["same_script"] or 0) + (row["cross_script"] or 0))
        chosen = next((run for run in runs if run.pk == best["run_id"]), None)
    chosen = chosen or (runs[0] if runs else None)
    diagonal_task = spec.monolingual_twin
    languages = selection.languages
    if "eng" in selection.available and "eng" not in languages and not params.getlist("languages"):
        # The matrix shows English (13 × 13) whenever this version has English pairs; the averages
        # elsewhere leave the source language out unless it is chosen.
        languages = ["eng", *languages]
    matrix = asym = script_gap = None
    tests: list[list[AsymmetryTest | None]] = []
    same_script = cross_script = same_family = cross_family = None
    script_groups: list = []
    family_groups: list = []
    pair_values: list[dict] = []
    if chosen:
        pair_values = [row for row in Score.objects.filter(run=chosen).pairs(task, metric)]
        diagonal = Score.objects.filter(run=chosen).per_language(diagonal_task, [metric], languages)
        matrix = pair_matrix(pair_values, languages, diagonal)
        asym = asymmetry(matrix)
        tests = asymmetry_tests(matrix, asymmetry_test(chosen, selection, task, metric, languages, matrix))
        same_script, cross_script, script_groups = group_pairs(pair_values, BY_CODE, languages, "script")
        same_family, cross_family, family_groups = group_pairs(pair_values, BY_CODE, languages, "family")
        # The same-script gap net of which languages form the pairs (query and document language effects).
        selected = set(selection.languages)
        script_gap = net_gap(
            [
                (row["source"], row["target"], row["value"])
                for row in pair_values
                if row["source"] in selected and row.get("target") in selected
            ],
            lambda code: BY_CODE[code].script,
        )
    names = [BY_CODE[code].name for code in languages]
    metric_label = METRICS[metric].label
    heat = (
        plots.heatmap(
            matrix,
            names,
            title=f"{chosen.model.label}: {metric_label}, {task.upper()} (diagonal: {diagonal_task.upper()})",
            metric=metric,
            # Each off-diagonal cell opens the pair view (every model ranked on that pair): figures.js
            # sets query_language and document_language on this page's address from "pair:<q>:<d>".
            links=[
                ["" if source == target else f"pair:{source}:{target}" for target in languages] for source in languages
            ],
        )
        if chosen and matrix
        else None
    )
    asym_figure = (
        plots.heatmap(
            asym,
            names,
            title="Asymmetry: row→column minus column→row",
            diverging=True,
            colorbar_title="Δ pts",
            metric=metric,
            within_noise=[[None if test is None else test.within_noise for test in row] for row in tests],
            notes=[[asymmetry_note(test) for test in row] for row in tests],
        )
        if chosen and asym
        else None
    )
    split_rows = []
    for info in selection.infos:
        row = split_by_run.get(info.id, {})
        same, cross = row.get("same_script"), row.get("cross_script")
        split_rows.append(SplitRow(info, row, same - cross if same is not None and cross is not None else None))
    sort, descending = parse_split_sort(params.get("sort"))
    split_rows = sort_split_rows(split_rows, sort, descending)
    pair_rows = (
        [row for row in pair_values if row["source"] in languages and row["target"] in languages] if chosen else []
    )
    pair_view, pair_error = pair_view_rows(params, selection, task, metric)
    shared = filters_context(selection, ("run", "task", "metric", "query_language", "document_language"))
    context = {
        **shared,
        "query_without_run": encode_query(
            shared["hidden_for_choice"] + query_params(selection.query, ("task", "metric"))
        ),
        "metric_choices": [(name, METRICS[name].label) for name in spec.metrics],
        "task": task,
        "task_choices": [
            (choice.id, f"{choice.title.partition(' · ')[0]} {choice.query_field} → {choice.document_field}")
            for choice in choices.values()
        ],
        "task_lead": f"{spec.query_field}s retrieving {spec.document_field}s ({nav_label(spec)})",
        "metric": metric,
        "metric_label": metric_label,
        "chosen": chosen,
        "runs": runs,
        "diagonal_task": diagonal_task,
        "heatmap": heat,
        # The same matrix as a list per query language, which a phone shows instead of the heatmap.
        "matrix_rows": [(names[i], list(zip(names, row, strict=True))) for i, row in enumerate(matrix or [])],
        "asymmetry": asym_figure,
        # The asymmetry as a list per query language (what a phone and a screen reader get), with each
        # pair's interval and verdict.
        "asymmetry_rows": [
            (names[i], [(names[j], test) for j, test in enumerate(row) if test is not None])
            for i, row in enumerate(tests)
            if any(test is not None for test in row)
        ],
        "asymmetry_counts": counts(tests),
        # What the intervals resample, said once for the methods this model's cells use.
        "asymmetry_methods": [
            method
            for method in (PAIRED, UNPAIRED, UNTESTED)
            if any(test is not None and test.method.startswith(method) for row in tests for test in row)
        ],
        "same_script": same_script,
        "script_gap": script_gap,
        "script_gap_method": SCRIPT_GAP_METHOD,
        "cross_script": cross_script,
        "same_family": same_family,
        "cross_family": cross_family,
        "script_groups": script_groups,
        "family_groups": family_groups,
        "split_rows": split_rows,
        "split_sort": f"-{sort}" if descending else sort,
        "split_headers": list(zip(SPLIT_SORT_KEYS, SPLIT_LABELS, strict=True)),
        "split_sort_links": {key: next_split_sort(sort, descending, key) for key in SPLIT_SORT_KEYS},
        "query_without_sort": encode_query(
            [pair for pair in query_params(shared["state"], PAGE_STATE) if pair[0] != "sort"]
        ),
        "pair_view": pair_view,
        "pair_error": pair_error,
        "pair_languages": [(code, BY_CODE[code].name) for code in languages if code in BY_CODE],
        "query_language": params.get("query_language", ""),
        "document_language": params.get("document_language", ""),
    }
    by_pair = {(languages[i], languages[j]): test for i, row in enumerate(tests) for j, test in enumerate(row) if test}
    tables = {
        "pairs": export_table(heatmap_columns(chosen, task, metric, by_pair), pair_rows),
        "models": export_table(split_columns(task, metric), split_rows),
        "pair_view": export_table(pair_view_columns(task, metric, params), pair_view),
    }
    return Page("Cross-lingual retrieval", context, tables)


def asymmetry_test(
    run: Run,
    selection: Selection,
    task: str,
    metric: str,
    languages: list[str],
    matrix: list[list[float | None]],
):
    """The test of one unordered pair (i, j) of the matrix for `run` (leaderboard.asymmetry says which).

    Re-runs with rank files: paired over the items both directions share. Published proportions: the
    two directions as independent proportions over the published pool. Otherwise untested."""
    pool = (selection.dataset.published_query_count or selection.pool_size) if selection.dataset else None
    paired = not run.is_published and TASKS[task].kind == "retrieval"
    seed, resamples = bootstrap_settings(run)

    def test(i: int, j: int) -> AsymmetryTest:
        forward, backward = matrix[i][j], matrix[j][i]
        assert forward is not None and backward is not None
        if paired:
            # Both directions are read together: per_query_values returns None unless their rank files
            # list the same items in the same order, which is what makes the comparison paired.
            values = per_query_values(run, task, metric, [(languages[i], languages[j]), (languages[j], languages[i])])
            if values is not None:
                return paired_asymmetry(values[:1], values[1:], n_resamples=resamples, seed=seed)
        if run.is_published and metric in WILSON_METRICS and pool:
            return unpaired_asymmetry(forward, backward, pool)
        return untested(forward, backward)

    return test


def asymmetry_note(test: AsymmetryTest | None) -> str:
    """The hover line of one asymmetry cell: its 95% interval in points and the verdict."""
    if test is None:
        return ""
    if test.ci_low is None or test.ci_high is None:
        return f"{test.verdict} (no interval)"
    return f"95% interval [{percent(test.ci_low)}, {percent(test.ci_high)}] pts: {test.verdict}"


def pair_view_rows(params: QueryDict, selection: Selection, task: str, metric: str) -> tuple[list[PairRow], str]:
    """The pair view: every model's `metric` for one (query language, document language), ranked.

    Returns (rows, error); both empty when no pair was asked for. Re-runs' rank intervals use the
    bootstrap replicates of the pair from their rank files (paired); published rows carry their
    Wilson interval and enter each replicate as an independent draw."""
    source, target = params.get("query_language", ""), params.get("document_language", "")
    if not source and not target:
        return [], ""
    pairs = [(code, other) for unit_task, code, other in selection.units if unit_task == task and other]
    codes = {code for pair in pairs for code in pair}
    if source not in codes or target not in codes or source == target:
        return [], "Choose two different languages of this benchmark version for the pair view."
    values = {
        row["run_id"]: row
        for row in Score.objects.for_runs(selection.run_ids)
        .filter(task=task, metric=metric, source_id=source, target_id=target)
        .values("run_id", "value", "ci_low", "ci_high")
    }
    replicates = {}
    for run in selection.runs:
        if run.pk in values and not run.is_published and TASKS[task].kind == "retrieval":
            samples = pair_samples(run, task, metric, source, target)
            if samples is not None:
                replicates[run.pk] = samples
    rows = build_pair_table(
        selection.infos,
        values,
        source,
        target,
        higher_is_better=METRICS[metric].higher_is_better,
        replicates=replicates,
    )
    return rows, ""


def pair_view_columns(task: str, metric: str, params: QueryDict) -> list[ExportColumn[PairRow]]:
    """The pair view's download, read off the rows the page shows, in the long form of every export."""
    source, target = params.get("query_language", ""), params.get("document_language", "")
    return [
        ExportColumn("rank_best", lambda row: row.rank[0] if row.rank else None),
        ExportColumn("rank_worst", lambda row: row.rank[1] if row.rank else None),
        ExportColumn("run_id", lambda row: row.run.id),
        ExportColumn("model", lambda row: row.run.label),
        ExportColumn("origin", lambda row: row.run.origin),
        ExportColumn("block", lambda row: row.block),
        ExportColumn("task", lambda row: task),
        ExportColumn("query_language", lambda row: source),
        ExportColumn("document_language", lambda row: target),
        ExportColumn("metric", lambda row: metric),
        ExportColumn("value", lambda row: row.cell.value),
        ExportColumn("ci_low", lambda row: row.cell.ci_low),
        ExportColumn("ci_high", lambda row: row.cell.ci_high),
        ExportColumn("older_engine", lambda row: row.run.is_older_engine),
    ]


def heatmap_columns(
    chosen, task: str, metric: str, tests: dict[tuple[str, str], AsymmetryTest]
) -> list[ExportColumn[dict]]:
    """The heatmap's download: one line per pair cell of the chosen model (the diagonal is another task),
    with the pair's asymmetry (this direction minus the other), its interval and verdict."""

    def test_of(row: dict) -> AsymmetryTest | None:
        return tests.get((row["source"], row["target"]))

    def field(name: str):
        return lambda row: getattr(test_of(row), name, None)

    return [
        ExportColumn("run_id", lambda row: chosen.pk),
        ExportColumn("model", lambda row: chosen.model.label),
        ExportColumn("task", lambda row: task),
        ExportColumn("query_language", lambda row: row["source"]),
        ExportColumn("document_language", lambda row: row["target"]),
        ExportColumn("metric", lambda row: metric),
        ExportColumn("value", lambda row: row["value"]),
        ExportColumn("ci_low", lambda row: row["ci_low"]),
        ExportColumn("ci_high", lambda row: row["ci_high"]),
        ExportColumn("asymmetry", field("delta")),
        ExportColumn("asymmetry_ci_low", field("ci_low")),
        ExportColumn("asymmetry_ci_high", field("ci_high")),
        ExportColumn("asymmetry_p_value", field("p_value")),
        ExportColumn("asymmetry_verdict", field("verdict")),
        ExportColumn("asymmetry_method", field("method")),
        ExportColumn("older_engine", lambda row: chosen.is_older_engine),
    ]


def split_columns(task: str, metric: str) -> list[ExportColumn[SplitRow]]:
    """The all-models table's download, in the order the page sorts it; the means are in `metric`."""
    return [
        ExportColumn("run_id", lambda row: row.info.id),
        ExportColumn("model", lambda row: row.info.label),
        ExportColumn("origin", lambda row: row.info.origin),
        ExportColumn("task", lambda row: task),
        ExportColumn("metric", lambda row: metric),
        *[ExportColumn(key, lambda row, key=key: row.value(key), metric) for key in SPLIT_SORT_KEYS[1:]],
        ExportColumn("older_engine", lambda row: row.info.is_older_engine),
    ]
