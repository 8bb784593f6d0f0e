"""The compare page: two to four models side by side, and the tested differences between them."""

from __future__ import annotations

from django.http import QueryDict

from evaluation.engine.languages import BY_CODE
from evaluation.engine.registry import METRICS, TASKS
from evaluation.models import Run, Score
from evaluation.published_intervals import WILSON_METRICS
from leaderboard import plots
from leaderboard.columns import Column, compare_axes
from leaderboard.export_vocabulary import score_column
from leaderboard.pages.selection import (
    LANGUAGE_ORDER,
    ExportColumn,
    ExportTable,
    Page,
    Selection,
    export_table,
    filters_context,
    per_source_means_by_run,
    resolve_selection,
    retrieval_tasks,
    run_info,
)
from leaderboard.run_intervals import (
    bootstrap_settings,
    per_query_values,
)
from leaderboard.significance import Difference, holm, paired_items, unpaired_proportions
from leaderboard.tables.cells import cell_from_aggregate, mark_best
from leaderboard.tables.per_language import build_language_table
from leaderboard.tables.selection import expected_units

DIFFERENCE_HEADERS = [
    "task",
    "metric",
    "languages",
    "run_a",
    "run_b",
    "model_a",
    "model_b",
    "a",
    "b",
    "delta",
    "ci_low",
    "ci_high",
    "p_value",
    "p_value_uncorrected",
    "method",
    "verdict",
]


NOT_TESTED = "not tested (no per-query data, not a proportion)"


def differences(
    selection: Selection,
    chosen: list[Run],
    axes: list[tuple[str, str, str]],
    pair: tuple[str, str] | None = None,
) -> list[dict]:
    """Δ = A − B for every pair of chosen runs (in the order chosen) and every axis, over the languages both
    cover; on the cross-lingual axes over one query → document `pair` instead, when one is chosen.

    Re-runs with rank files: the paired bootstrap over the shared items for the interval, an item-level
    test for the p-value (exact McNemar where each item is one cell, the sign-flip test otherwise;
    leaderboard.significance.paired_items). Otherwise, published proportions: the unpaired, conservative
    interval and the p-value that inverts it. Several comparisons at once are Holm-corrected."""
    by_run = selection.languages_by_run
    values: dict[tuple[int, str, str, str, str | None], float] = {}
    for row in Score.objects.filter(
        run__in=[run.pk for run in chosen], task__in=[task for task, _, _ in axes], metric__in=[m for _, m, _ in axes]
    ).values_list("run_id", "task", "metric", "source_id", "target_id", "value"):
        values[row[:5]] = row[5]
    rows: list[dict] = []
    found: list[Difference] = []
    # Published figures are counts over the queries read off their values (Dataset.published_query_count).
    pool = (selection.dataset.published_query_count or selection.pool_size) if selection.dataset else 0
    for index, run_a in enumerate(chosen):
        for run_b in chosen[index + 1 :]:
            shared = [code for code in by_run.get(run_a.pk, []) if code in set(by_run.get(run_b.pk, []))]
            for task, metric, _ in axes:
                units = [pair] if pair is not None and TASKS[task].cross_lingual else selection.units_of(task, shared)
                higher = METRICS[metric].higher_is_better
                pairs_a = [values.get((run_a.pk, task, metric, s, t)) for s, t in units]
                pairs_b = [values.get((run_b.pk, task, metric, s, t)) for s, t in units]
                if not units or any(v is None for v in pairs_a + pairs_b):
                    continue
                difference = None
                if not run_a.is_published and not run_b.is_published and TASKS[task].kind == "retrieval":
                    per_a = per_query_values(run_a, task, metric, units)
                    per_b = per_query_values(run_b, task, metric, units)
                    if per_a is not None and per_b is not None and per_a.shape == per_b.shape:
                        seed, resamples = bootstrap_settings(run_a)
                        difference, _ = paired_items(
                            per_a, per_b, n_resamples=resamples, seed=seed, higher_is_better=higher
                        )
                if difference is None and metric in WILSON_METRICS and pool:
                    difference = unpaired_proportions(pairs_a, pairs_b, pool, higher_is_better=higher)  # type: ignore[arg-type]
                if difference is None:
                    mean_a, mean_b = sum(pairs_a) / len(pairs_a), sum(pairs_b) / len(pairs_b)  # type: ignore[arg-type]
                    # Neither paired data nor a published proportion: no test, and the verdict says so.
                    difference = Difference(
                        mean_a, mean_b, mean_a - mean_b, None, None, None, NOT_TESTED, NOT_TESTED, False
                    )
                found.append(difference)
                rows.append(
                    {
                        "task": task,
                        "metric": metric,
                        "languages": " ".join(pair if pair is not None and TASKS[task].cross_lingual else shared),
                        "run_a": run_a.pk,
                        "run_b": run_b.pk,
                        "model_a": run_a.model.label,
                        "model_b": run_b.model.label,
                    }
                )
    corrected = holm(found)
    for row, difference in zip(rows, corrected, strict=True):
        row.update(
            a=difference.a,
            b=difference.b,
            delta=difference.delta,
            ci_low=difference.ci_low,
            ci_high=difference.ci_high,
            p_value=difference.p_value,
            p_value_uncorrected=difference.p_uncorrected,
            method=difference.method,
            verdict=difference.verdict,
        )
    return rows


def language_pair_choices(selection: Selection) -> list[tuple[str, str]]:
    """Every query → document pair the version's cross-lingual tasks have results for: ("tam-hin", "Tamil → Hindi")."""
    cross = {spec.id for spec in retrieval_tasks() if spec.cross_lingual}
    pairs = {(source, target) for task, source, target in selection.units if task in cross and target}
    ordered = sorted(pairs, key=lambda pair: (LANGUAGE_ORDER.get(pair[0], 99), LANGUAGE_ORDER.get(pair[1], 99)))
    return [
        (f"{source}-{target}", f"{BY_CODE[source].name} → {BY_CODE[target].name}")
        for source, target in ordered
        if source in BY_CODE and target in BY_CODE
    ]


def chosen_language_pair(params: QueryDict, choices: list[tuple[str, str]]) -> tuple[tuple[str, str] | None, str]:
    """The (query, document) pair the cross-lingual tasks are compared on, or None for the mean; and an error."""
    value = params.get("language_pair", "")
    if not value:
        return None, ""
    if value not in dict(choices):
        return None, "This benchmark version has no cross-lingual results for that pair; the mean is shown instead."
    source, _, target = value.partition("-")
    return (source, target), ""


def pair_values(chosen: list[Run], tasks: list[str], metrics: list[str], pair: tuple[str, str]) -> dict:
    """Per (run id, task, metric): the one pair's score as an aggregate of one value (cell_from_aggregate reads it)."""
    rows = Score.objects.filter(
        run__in=[run.pk for run in chosen], task__in=tasks, metric__in=metrics, source_id=pair[0], target_id=pair[1]
    ).values_list("run_id", "task", "metric", "value", "ci_low", "ci_high")
    return {
        (run_id, task, metric): {
            "mean": value,
            "n": 1,
            "n_ci": int(low is not None and high is not None),
            "ci_low": low,
            "ci_high": high,
        }
        for run_id, task, metric, value, low, high in rows
    }


def compared_over(selection: Selection, pair: tuple[str, str] | None = None) -> str:
    """In words, what every figure on the page is a mean over (the page used to say it only on an axis)."""
    if pair is not None:
        tasks = ", ".join(spec.id.upper() for spec in retrieval_tasks() if spec.cross_lingual)
        query, document = BY_CODE[pair[0]].name, BY_CODE[pair[1]].name
        return (
            f"The cross-lingual tasks ({tasks}) are compared on one pair: {query} queries retrieving {document} "
            f"documents. Every other score and difference below is a mean over {selection.language_names}. "
            "A model that does not support some of them is compared over the languages both models support."
        )
    pairs = (
        "a cross-lingual pair counts when its query language is one of them"
        if selection.pair_mode == "source"
        else "a cross-lingual pair counts when both its languages are among them"
    )
    return (
        f"Every score and difference below is a mean over {selection.language_names}; {pairs}. "
        "A model that does not support some of them is compared over the languages both models support."
    )


def compare_page(params: QueryDict) -> Page:
    axes = compare_axes()
    selection = resolve_selection(params, [(task, metric) for task, metric, _ in axes])
    wanted = [int(value) for value in params.getlist("runs") if value.isdigit()]
    by_id = {run.pk: run for run in selection.runs}
    chosen = [by_id[pk] for pk in dict.fromkeys(wanted) if pk in by_id]
    errors = list(selection.errors)
    if wanted and len(chosen) != len(set(wanted)):
        errors.append("Some chosen runs are not finished runs of this benchmark version; they are left out.")
    if chosen and not 2 <= len(chosen) <= 4:
        errors.append(f"Choose between 2 and 4 models to compare (you chose {len(chosen)}).")
        chosen = chosen[:4] if len(chosen) > 4 else []
    tasks = {spec.id: spec for spec in retrieval_tasks()}
    spec = tasks.get(params.get("task", "")) or next(iter(tasks.values()))
    pair_options = language_pair_choices(selection)
    pair, pair_error = chosen_language_pair(params, pair_options)
    if pair_error:
        errors.append(pair_error)
    task, main = spec.id, METRICS[spec.main_metric]
    infos = [run_info(run) for run in chosen]
    bars = radar = None
    summary: list = []
    # The axes where no best is marked: the models are not averaged over the same languages.
    unmarked: list[str] = []
    languages = selection.languages
    if len(chosen) >= 2:
        scores = Score.objects.for_runs([run.pk for run in chosen])
        by_run = selection.languages_by_run
        languages_by_run = {run.pk: by_run.get(run.pk, languages) for run in chosen}
        cross_axes = [(t, m) for t, m, _ in axes if TASKS[t].cross_lingual]
        one_pair = (
            pair_values(chosen, [t for t, _ in cross_axes] + [task], [m for _, m in cross_axes] + [main.name], pair)
            if pair is not None
            else {}
        )
        if spec.cross_lingual and pair is not None:
            name = f"{BY_CODE[pair[0]].name} → {BY_CODE[pair[1]].name}"
            on_pair = [cell_from_aggregate(one_pair.get((info.id, task, main.name)), 1) for info in infos]
            bars = plots.language_bars(
                [name],
                {
                    info.label: [(cell.value, cell.ci_low, cell.ci_high)]
                    for info, cell in zip(infos, on_pair, strict=True)
                },
                title=f"{task.upper()} {main.label} on {name}",
            )
        elif spec.cross_lingual:
            values = per_source_means_by_run(
                scores, task, [main.name], languages, selection.pair_mode, languages_by_run
            )
        else:
            values = scores.per_language(task, [main.name], languages)
        if bars is None:
            table = build_language_table(infos, values, languages, main.name, higher_is_better=main.higher_is_better)
            bars = plots.language_bars(
                [BY_CODE[code].name for code in languages],
                {run.label: [(c.value, c.ci_low, c.ci_high) for c in cells] for run, cells, _ in table.rows},
                title=f"{task.upper()} {main.label} per {'query ' if spec.cross_lingual else ''}language",
            )
        means = scores.column_means(
            [(t, m) for t, m, _ in axes], languages, selection.pair_mode, languages_by_run=languages_by_run
        )
        axis_columns = [Column(f"{t}:{m}", label, t, m) for t, m, label in axes]
        lookup = {(row["run_id"], row["task"], row["metric"]): row for row in means}
        for info in infos:
            units = expected_units(
                selection.units, axis_columns, set(languages_by_run.get(info.id, languages)), selection.pair_mode
            )
            cells = []
            for t, m, _ in axes:
                if (t, m) in cross_axes and pair is not None:
                    # One pair, the same for every model: its cells compare the same unit.
                    cell = cell_from_aggregate(one_pair.get((info.id, t, m)), 1)
                    cell.languages = pair
                else:
                    cell = cell_from_aggregate(lookup.get((info.id, t, m)), units[f"{t}:{m}"])
                    # Each model is averaged over its own languages: the ranking rule marks only equal sets.
                    cell.languages = tuple(languages_by_run.get(info.id, languages))
                cells.append(cell)
            summary.append((info, cells))
        for index, (_, metric, _) in enumerate(axes):
            if not mark_best((cells[index] for _, cells in summary), higher_is_better=METRICS[metric].higher_is_better):
                unmarked.append(axes[index][2])
        radar = plots.per_metric_bars(
            [label for _, _, label in axes],
            {info.label: [cell.value for cell in cells] for info, cells in summary},
            title="Scores across tasks (%), each on its own axis",
        )
    # The summary's rows, one column per axis in the axis's metric.
    export = [
        ExportColumn("run_id", lambda row: row[0].id),
        ExportColumn("model", lambda row: row[0].label),
        *[
            column
            for index, (task, metric, _) in enumerate(axes)
            for column in (
                ExportColumn(score_column(task, metric), lambda row, index=index: row[1][index].value, metric),
                ExportColumn(f"{score_column(task, metric)}_ci_low", lambda row, i=index: row[1][i].ci_low, metric),
                ExportColumn(f"{score_column(task, metric)}_ci_high", lambda row, i=index: row[1][i].ci_high, metric),
            )
        ],
        ExportColumn("older_engine", lambda row: row[0].is_older_engine),
    ]
    compared = differences(selection, chosen, axes, pair) if len(chosen) >= 2 else []
    filters = filters_context(selection, ("runs", "task"))
    context = {
        **filters,
        # The languages and the pair rule are chosen on this page's own form, the other filters kept hidden.
        "hidden_for_choice": [pair for pair in filters["hidden_for_choice"] if pair[0] not in ("languages", "pairs")],
        "language_choices": [(code, BY_CODE[code].name) for code in selection.available if code in BY_CODE],
        "pair_choices": [("both", "both languages selected"), ("source", "query language selected")],
        "compared_over": compared_over(selection, pair),
        "language_pair_choices": pair_options,
        "language_pair": f"{pair[0]}-{pair[1]}" if pair is not None else "",
        "task_choices": [(key, choice.title) for key, choice in tasks.items()],
        "errors": errors,
        "runs": selection.runs,
        "chosen_ids": [run.pk for run in chosen],
        "chosen": infos,
        "task": task,
        "axes": [label for _, _, label in axes],
        "summary": summary,
        "bars": bars,
        "radar": radar,
        "differences": compared,
        "unmarked": unmarked,
        # How many tested comparisons Holm's correction spans (none below two).
        "holm": sum(1 for row in compared if row["p_value"] is not None),
    }
    difference_table = ExportTable(DIFFERENCE_HEADERS, [[row[key] for key in DIFFERENCE_HEADERS] for row in compared])
    return Page(
        "Compare models",
        context,
        {"compare": export_table(export, summary), "differences": difference_table},
    )
