"""The task pages: a retrieval task's per-language tables, and a classification task's summary,
per-language tables, reliability diagrams and the published T4 files beside the paper.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import Http404, QueryDict

from evaluation.engine.languages import BY_CODE
from evaluation.engine.registry import BIASED_ESTIMATE_INTERVAL, METRICS, TASKS, TaskSpec
from evaluation.engine.results import ClassificationDetails, Details
from evaluation.models import Run, Score
from leaderboard import errors, plots
from leaderboard.calibration_reference import (
    DEBIASED_METHOD,
    CalibratedReference,
    DebiasedEce,
    calibrated_reference,
    debiased_ece,
)
from leaderboard.calibration_reference import METHOD as REFERENCE_METHOD
from leaderboard.export_vocabulary import score_column
from leaderboard.pages.selection import (
    ExportColumn,
    Page,
    export_table,
    filters_context,
    per_source_means_by_run,
    resolve_selection,
)
from leaderboard.reproduce import in_paper_unit, load_paper_tables, t4_block_value
from leaderboard.tables.cells import cell_from_aggregate, mark_best
from leaderboard.tables.per_language import build_language_table

# The columns of the paper's Table 7, per split: AUROC and AUPRC uncalibrated, accuracy and ECE calibrated.
T7_COLUMNS = (
    ("auroc", "AUROC"),
    ("auprc", "AUPRC"),
    ("accuracy_calibrated", "Acc. (cal.)"),
    ("ece_calibrated", "Ref. ECE cal. ⚠"),
)


def paper_table(number: str) -> dict:
    return next(table for table in load_paper_tables()["tables"] if table["table"] == number)


CALIBRATORS = {"hist": "histogram binning", "temp": "temperature scaling", "temperature": "temperature scaling"}


def page_task(task: str, kind: str) -> TaskSpec:
    spec = TASKS.get(task)
    if spec is None or spec.kind != kind:
        raise Http404("Unknown task")
    return spec


def task_page(params: QueryDict, task: str) -> Page:
    spec = page_task(task, "retrieval")
    pair = spec.cross_lingual
    main = spec.main_metric
    reported = list(spec.reported_metrics)
    # A retrieval task's table reads each run's averages, rank-file fingerprint and bootstrap settings, no more.
    selection = resolve_selection(params, [(task, main)])
    infos = selection.infos
    scores = Score.objects.for_runs(selection.run_ids)
    languages_by_run = selection.languages_by_run
    # "Common languages only" shows just the languages every model is averaged over.
    languages = next(iter(languages_by_run.values()), selection.languages) if selection.common else selection.languages
    if pair:
        values = per_source_means_by_run(scores, task, reported, languages, selection.pair_mode, languages_by_run)
    else:
        values = scores.per_language(task, reported, languages)
    # Rows follow the mean of the main metric, best first, in every table of the page (like the paper's tables).
    first = build_language_table(infos, values, languages, main)
    ranked = [row[0] for row in sorted(first.rows, key=lambda row: -(row[2].value if row[2].value is not None else -1))]
    # The one ranking rule: rows are grouped in blocks (same languages, current engine first).
    blocks = {"averaged_by_run": languages_by_run, "ranked_over": selection.ranked_over, "common": selection.common}
    tables = [
        (
            METRICS[metric].short_label,
            build_language_table(
                ranked, values, languages, metric, higher_is_better=METRICS[metric].higher_is_better, **blocks
            ),
        )
        for metric in spec.shown_metrics
    ]
    pool_size = selection.pool_size
    # The bar chart shows the eight best models; the tables below have all of them.
    leaders = tables[0][1].rows[:8]
    figure = (
        plots.language_bars(
            [BY_CODE[code].name for code in languages],
            {run.label: [(cell.value, cell.ci_low, cell.ci_high) for cell in cells] for run, cells, _ in leaders},
            title=f"{METRICS[main].label} per {'query ' if pair else ''}language (best {len(leaders)} models)",
            chance=spec.chance_level(main, pool_size),
        )
        if leaders and languages
        else None
    )
    block_by_run = tables[0][1].block_by_run if tables else {}
    labels = {info.id: info for info in infos}
    # The download lists the rows as the page does: runs in the tables' order (ranking blocks, best first),
    # each run's values in the order of the table's language columns, then the task's metric order, as
    # the queries give them (the sort by run is stable).
    row_at = {run.id: position for position, (run, _, _) in enumerate(tables[0][1].rows)} if tables else {}
    download_rows = sorted(values, key=lambda row: row_at.get(row["run_id"], len(row_at)))
    # One line per value the tables show, with the row's block under the ranking rule and whether an
    # older engine scored it.
    # One name in every export (leaderboard.export_vocabulary); a pair task's row is the mean over
    # the document languages, as the table shows it.
    language = "query_language"
    export = [
        ExportColumn("run_id", lambda row: row["run_id"]),
        ExportColumn("model", lambda row: labels[row["run_id"]].label if row["run_id"] in labels else ""),
        ExportColumn("origin", lambda row: labels[row["run_id"]].origin if row["run_id"] in labels else ""),
        ExportColumn("metric", lambda row: row["metric"]),
        ExportColumn(language, lambda row: row["source"]),
        ExportColumn("value", lambda row: row["value"]),
        ExportColumn("ci_low", lambda row: row.get("ci_low")),
        ExportColumn("ci_high", lambda row: row.get("ci_high")),
        ExportColumn("block", lambda row: block_by_run.get(row["run_id"], "")),
        ExportColumn("older_engine", lambda row: row["run_id"] in labels and labels[row["run_id"]].is_older_engine),
    ]
    context = {
        **filters_context(selection),
        "task": task,
        "pair": pair,
        "task_title": spec.title,
        "main_label": METRICS[main].label,
        "tables": tables,
        "figure": figure,
        "infos": infos,
        # Every model shown lacks this task on this version: one sentence says so instead of empty tables.
        "no_values": bool(first.rows) and all(mean.missing for _, _, mean in first.rows),
        "published_only": bool(infos) and all(info.is_published for info in infos),
        "task_short": spec.short_title,
        # Re-runs with per-query rank files: their cells link to the language's queries (leaderboard/errors.py).
        "per_query_runs": errors.runs_with_rank_files(selection.run_ids),
        "chance_levels": chance_levels(spec, spec.shown_metrics, pool_size),
        "mixed_origins": selection.mixed_origins,
        "mining_reason": spec.mining_reason,
    }
    return Page(spec.title, context, {task: export_table(export, download_rows)})


# Metrics whose chance level is the class balance of the test set the figure was computed on.
BALANCE_CHANCES = ("positive_rate", "majority_rate")


def chance_levels(
    spec: TaskSpec, metrics, pool_size: int | None, *, positive_rate: float | None = None, measured: bool = False
) -> list[tuple[str, str]]:
    """(metric label, chance level in percent) of the task's metrics that define one, for the pages.

    With `measured`, the levels that depend on the class balance (AUPRC's positive share, accuracy's
    majority rate) come from `positive_rate`, the balance of the test set the figures were computed on,
    and are left out where it is unknown, rather than taken from the engine's own construction."""
    found = []
    for metric in metrics:
        if measured and METRICS[metric].chance in BALANCE_CHANCES:
            level = METRICS[metric].chance_level(positive_rate=positive_rate)
        else:
            level = spec.chance_level(metric, pool_size)
        if level is not None:
            found.append((METRICS[metric].short_label, f"{100 * level:.3g}%"))
    return found


def positive_share(details: Details, task: str) -> float | None:
    """The share of positive pairs in the test set a re-run's classification figures were computed on,
    from its reliability bins (each bin's count of test pairs and share of positives among them)."""
    block = details.tasks.get(task)
    if not isinstance(block, ClassificationDetails):
        return None
    # The pooled "all" group where the engine kept one, else every language's own (disjoint) test pairs.
    groups = ["all"] if "all" in block.reliability else list(block.reliability)
    bins = [b for group in groups for b in block.reliability[group].before if b.count and b.mean_y is not None]
    total = sum(b.count for b in bins)
    return sum(b.count * b.mean_y for b in bins) / total if total else None  # type: ignore[operator]


def reliability_curves(details: Details, task: str) -> dict[str, dict[str, list[dict]]]:
    """Reliability bins of a classification task's results as {language: {"before": bins, "after": bins}}.

    `details` are the run's typed results (Run.results.details, evaluation/stored_results.py: one spelling, schema 1);
    each bin is {"count", "mean_p", "mean_y"}, and empty bins (no test pair) are left out.
    """
    block = details.tasks.get(task)
    if not isinstance(block, ClassificationDetails):
        return {}
    curves = {}
    for group, reliability in block.reliability.items():
        pair = {
            name: [
                {"count": b.count, "mean_p": b.mean_p, "mean_y": b.mean_y}
                for b in bins
                if b.mean_p is not None and b.mean_y is not None
            ]
            for name, bins in (("before", reliability.before), ("after", reliability.after))
        }
        pair = {name: bins for name, bins in pair.items() if bins}
        if pair:
            curves[group] = pair
    return curves


def classification_page(params: QueryDict, task: str) -> Page:
    spec = page_task(task, "classification")
    shown = spec.shown_metrics
    # Every run's block of this task is read (for its reliability bins), and nothing else of its details.
    selection = resolve_selection(params, [(task, spec.main_metric)], blocks=(task,))
    infos = selection.infos
    languages = selection.languages
    metric_columns = [(task, metric) for metric in shown]
    languages_by_run = selection.languages_by_run
    aggregates = (
        Score.objects.for_runs(selection.run_ids).column_means(
            metric_columns, languages, languages_by_run=languages_by_run
        )
        if infos
        else []
    )
    by_key = {(row["run_id"], row["metric"]): row for row in aggregates}
    summary = []
    for info in infos:
        expected = len(languages_by_run.get(info.id, languages))
        cells = {metric: cell_from_aggregate(by_key.get((info.id, metric)), expected) for metric in shown}
        # Each model is averaged over its own languages: the ranking rule marks only equal sets.
        for cell in cells.values():
            cell.languages = tuple(languages_by_run.get(info.id, languages))
        summary.append((info, cells))
    unmarked = [
        METRICS[metric].label
        for metric in shown
        if not mark_best((cells[metric] for _, cells in summary), higher_is_better=METRICS[metric].higher_is_better)
        and any(not cells[metric].missing for _, cells in summary)
    ]
    # Columns that no run has (e.g. the two calibrators' ECE when the engine reports one) are left out.
    shown_metrics = [metric for metric in shown if any(not cells[metric].missing for _, cells in summary)]
    # Per language: the main metric, and the calibration error that the reliability diagrams explain.
    main, calibration = METRICS[spec.main_metric], METRICS["ece"]
    per_language = Score.objects.for_runs(selection.run_ids).per_language(
        task, [main.name, calibration.name], languages
    )
    auroc_table = build_language_table(
        infos, per_language, languages, main.name, higher_is_better=main.higher_is_better
    )
    ece_table = build_language_table(
        infos, per_language, languages, calibration.name, higher_is_better=calibration.higher_is_better
    )

    with_bins = [run for run in selection.runs if reliability_curves(run.results.details_of([task]), task)]
    # Every re-run on a version is tested on the same pairs: the first one's bins give their balance.
    positive_rate = next(
        (rate for run in with_bins if (rate := positive_share(run.results.details_of([task]), task)) is not None),
        None,
    )
    chosen = None
    run_param = params.get("run")
    if run_param and run_param.isdigit():
        chosen = next((run for run in with_bins if run.pk == int(run_param)), None)
    chosen = chosen or (with_bins[0] if with_bins else None)
    figures = []
    references: list[tuple[str, CalibratedReference]] = []
    if chosen:
        details = chosen.results.details_of([task])
        curves = reliability_curves(details, task)
        block = details.tasks[task]
        for group in ["all", *[code for code in languages if code in curves]]:
            if group not in curves:
                continue
            name = "all languages" if group == "all" else BY_CODE[group].name if group in BY_CODE else group
            # The engine records which calibrator the dev split chose; the curve is named after it.
            calibrator = block.reliability[group].calibrator
            # Beside the model's ECE before calibration: what a perfectly calibrated classifier with its
            # predicted probabilities would score on the same test pairs (the binned ECE's bias).
            before = [(b.count, b.mean_p, b.mean_y) for b in block.reliability[group].before if b.count]
            reference = calibrated_reference(before)  # type: ignore[arg-type]
            if reference is not None:
                references.append((name, reference))
            after = "after calibration" + (f" ({CALIBRATORS.get(calibrator, calibrator)})" if calibrator else "")
            figures.append(
                (
                    f"reliability-{group}",
                    name,
                    plots.reliability_diagram(
                        {
                            "before calibration": curves[group].get("before", []),
                            after: curves[group].get("after", []),
                        },
                        title=f"{chosen.model.label}: reliability, {name} (test split)",
                    ),
                )
            )
    # Every binned ECE the page shows beside its debiased estimate with an interval that contains it
    # (leaderboard.calibration_reference.debiased_ece); the reference's flagged "ECE" is not one.
    debiased_metrics = [metric for metric in shown_metrics if metric.startswith("ece") and METRICS[metric].comparable]

    def debiased(cell) -> DebiasedEce | None:
        return debiased_ece(cell.value, cell.ci_low, cell.ci_high) if not cell.missing else None

    debiased_rows = [
        (info, [debiased(cells[metric]) for metric in debiased_metrics])
        for info, cells in summary
        if any(debiased(cells[metric]) for metric in debiased_metrics)
    ]
    # The summary table's rows, with every metric the task shows (those no run has included).
    export = [
        ExportColumn("run_id", lambda row: row[0].id),
        ExportColumn("model", lambda row: row[0].label),
        ExportColumn("origin", lambda row: row[0].origin),
        *[
            column
            for metric in shown
            for column in (
                ExportColumn(score_column(spec.id, metric), lambda row, m=metric: row[1][m].value, metric),
                ExportColumn(f"{score_column(spec.id, metric)}_ci_low", lambda row, m=metric: row[1][m].ci_low, metric),
                ExportColumn(
                    f"{score_column(spec.id, metric)}_ci_high", lambda row, m=metric: row[1][m].ci_high, metric
                ),
            )
        ],
        *[
            ExportColumn(
                f"{score_column(spec.id, metric)}_debiased{suffix}",
                lambda row, m=metric, f=field: getattr(debiased(row[1][m]), f, None),
            )
            for metric in debiased_metrics
            for suffix, field in (("", "value"), ("_ci_low", "ci_low"), ("_ci_high", "ci_high"))
        ],
        ExportColumn("older_engine", lambda row: row[0].is_older_engine),
    ]
    context = {
        **filters_context(selection, ("run",)),
        "summary": [(info, [(metric, cells[metric]) for metric in shown_metrics]) for info, cells in summary],
        "task": spec,
        "metrics": [(metric, METRICS[metric].label) for metric in shown_metrics],
        # Figures kept only to explain a published number are flagged, never compared.
        "incomparable": [metric for metric in shown_metrics if not METRICS[metric].comparable],
        "auroc_table": auroc_table,
        "ece_table": ece_table,
        "with_bins": with_bins,
        "chosen": chosen,
        "figures": figures,
        "ece_references": references,
        "ece_reference_method": REFERENCE_METHOD,
        "published_present": any(info.is_published for info in infos),
        "chance_levels": chance_levels(
            spec, shown_metrics, selection.pool_size, positive_rate=positive_rate, measured=True
        ),
        # The positive share of the test pairs, measured on a re-run's test set; None for published files,
        # which do not record their class balance.
        "positive_rate": positive_rate,
        "ece_interval": BIASED_ESTIMATE_INTERVAL,
        "debiased_labels": [METRICS[metric].label for metric in debiased_metrics],
        "debiased_rows": debiased_rows,
        "debiased_method": DEBIASED_METHOD,
        "published_t4": published_t4_rows(selection.runs),
        "unmarked": unmarked,
    }
    context["hidden_for_run"] = context["hidden_for_choice"]
    return Page(spec.title, context, {task: export_table(export, summary)})


def published_t4_rows(runs: list[Run]) -> list[dict]:
    """The reference's T4 file that the paper's Table 7 prints for each published model, beside the paper.

    Every block of every file is kept on the run (Run.results.published); this shows the one the
    paper reports (the Assamese file, or a model's pooled 'all' file) and what Table 7 printed."""
    paper = {row["model"]: row["values"] for row in paper_table("7")["rows"]}
    rows = []
    for run in runs:
        published = run.results.published
        blocks, chosen = published.t4_blocks, published.table_7_file()
        if chosen is None:
            continue
        printed = paper.get(run.model.name, {})
        figures = []
        for split in ("dev", "test"):
            for metric, label in T7_COLUMNS:
                key = f"{split}:{metric}"
                value = t4_block_value(blocks[chosen], key)
                figures.append(
                    {"split": split, "label": label, "file": in_paper_unit(key, value), "paper": printed.get(key)}
                )
        rows.append({"run": run, "file": blocks[chosen].get("file", chosen), "files": len(blocks), "figures": figures})
    return rows


# A task's page by the kind of task: the page's cache name (formatted with the task id), its template
# and the name of its builder here. The views and the pages built ahead (leaderboard.refresh) both
# read it, so that a page built ahead lies under the key a visitor's request makes.
TASK_PAGES: dict[str, tuple[str, str, str]] = {
    "retrieval": ("task-{}", "leaderboard/task.html", "task_page"),
    "classification": ("{}", "leaderboard/classification.html", "classification_page"),
}


def task_page_of(spec: TaskSpec) -> tuple[str, str, Callable[[QueryDict, str], Page]] | None:
    """The cache name, template and builder of a task's page; None for a task without a page."""
    if spec.kind not in TASK_PAGES:
        return None
    name, template, builder = TASK_PAGES[spec.kind]
    # Looked up when called: the builder is this module's function as it stands now.
    return name.format(spec.id), template, globals()[builder]
