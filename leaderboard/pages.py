"""What each public page shows, assembled from QuerySets and the pure table/plot modules.

Every builder takes the request's query parameters and returns a `Page`: the template context plus
the page's tables in a plain form for the CSV/JSON downloads. Builders issue a fixed number of
queries whatever the number of models, and hold no rules of their own: averages, ranks and figures
come from leaderboard.tables, leaderboard.ranking and leaderboard.plots.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import PurePosixPath

from django.db.models import Count
from django.http import Http404, QueryDict

from annotation.reports import AC1_NOTE, KAPPA_CI_NOTE, agreement_by_language
from evaluation.engine.bootstrap import percentile_interval
from evaluation.engine.languages import BY_CODE, LANGUAGES
from evaluation.engine.registry import BIASED_ESTIMATE_INTERVAL, METRICS, TASKS, TaskSpec
from evaluation.engine.results import ClassificationDetails, Details
from evaluation.models import Dataset, Item, Run, Score
from evaluation.published_intervals import WILSON_METRICS
from evaluation.redaction import public_log
from leaderboard import errors, plots
from leaderboard.columns import Column, compare_axes, nav_label, overall_keys, overview_columns
from leaderboard.coverage import Coverage, averaging_languages, common_languages, coverage
from leaderboard.filters import LanguageSelectionForm, LeaderboardFilter
from leaderboard.reproduce import in_paper_unit, load_paper_tables, t4_block_value
from leaderboard.run_intervals import (
    bootstrap_settings,
    joint_average_interval,
    joint_overall_samples,
    pair_samples,
    per_query_values,
)
from leaderboard.significance import Difference, holm, paired_bootstrap, paired_recall_at_1, unpaired_proportions
from leaderboard.tables.cells import RunInfo, cell_from_aggregate, mark_best
from leaderboard.tables.overview import OVERALL, build_overview, next_sort
from leaderboard.tables.pairs import asymmetry, build_pair_table, group_pairs, pair_matrix
from leaderboard.tables.per_language import build_language_table
from leaderboard.tables.runs import manifest_facts, score_sections
from leaderboard.tables.selection import expected_units, pair_selected, select_languages
from leaderboard.translation_split import INTERVAL_NOTE

LANGUAGE_ORDER = {lang.code: position for position, lang in enumerate(LANGUAGES)}
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


# The registry is read on every call, not copied at import, so a task added to it shows everywhere.
def retrieval_tasks() -> list[TaskSpec]:
    return [spec for spec in TASKS.values() if spec.kind == "retrieval"]


def cross_lingual_tasks() -> list[TaskSpec]:
    return [spec for spec in retrieval_tasks() if spec.cross_lingual]


def page_task(task: str, kind: str) -> TaskSpec:
    spec = TASKS.get(task)
    if spec is None or spec.kind != kind:
        raise Http404("Unknown task")
    return spec


@dataclass
class ExportTable:
    """A page's table as downloaded. Values are stored numbers (fractions for fraction metrics).

    `metrics` names, for columns of a wide table, the metric whose values they hold, so that the CSV
    can add them in the page's units; a long table says it with a `metric` column instead.
    """

    headers: list[str]
    rows: list[list]
    metrics: dict[str, str] = field(default_factory=dict)


@dataclass
class Page:
    title: str
    context: dict
    tables: dict[str, ExportTable] = field(default_factory=dict)


def ordered_codes(codes) -> list[str]:
    return sorted(set(codes), key=lambda code: LANGUAGE_ORDER.get(code, 99))


def run_info(run: Run) -> RunInfo:
    return RunInfo(
        id=run.pk,
        label=run.model.label,
        model_name=run.model.public_name,
        origin=run.origin,
        kind=run.model.kind,
        parameter_count=run.model.parameter_count,
        dataset=str(run.dataset),
        declared_languages=tuple(run.model.declared_languages or ()),
        embedding_dimension=run.model.embedding_dimension,
        max_tokens=run.model.max_tokens,
        memory_bytes_fp16=run.model.memory_bytes_fp16,
        license=run.model.license,
        engine_version=run.engine_version,
    )


def _ci(cell) -> list:
    return [cell.value, cell.ci_low, cell.ci_high]


@dataclass
class Selection:
    """The benchmark version, runs and languages a page shows, resolved from the filter form."""

    form: object
    errors: list[str]
    versions: list[Dataset]
    dataset: Dataset | None
    runs: list[Run]
    available: list[str]
    languages: list[str]
    pair_mode: str
    query: str
    units: list[tuple[str, str, str | None]]
    common: bool = False
    # Per model id, its published run left off this board because the model has a re-run on it.
    published_twins: dict[int, Run] = field(default_factory=dict)

    @cached_property
    def pool_size(self) -> int | None:
        """The version's pool size (one query, read once per page)."""
        return (self.dataset.pool_size or None) if self.dataset is not None else None

    @property
    def mixed_origins(self) -> str:
        """The sentence shown beside a table that mixes published figures and re-runs; empty otherwise."""
        published = any(run.is_published for run in self.runs) or bool(self.published_twins)
        if not published or not any(not run.is_published for run in self.runs) or self.dataset is None:
            return ""
        queries = self.dataset.published_query_count or self.pool_size or 0
        return (
            f"This board mixes published figures (the reference implementation's, each a count over {queries:,} "
            "queries, with Wilson intervals and no per-query data, so compared unpaired) and re-runs evaluated "
            f"here on this version (pool of {self.pool_size or 0:,} per language, paired bootstrap). A model "
            "with both shows its re-run, with a link to its published figures."
        )

    @property
    def languages_by_run(self) -> dict[int, list[str]]:
        """The languages each run is averaged over (leaderboard.coverage: declared, or common)."""
        declared = {run.pk: list(run.model.declared_languages or []) for run in self.runs}
        return averaging_languages(declared, self.languages, common=self.common)  # type: ignore[return-value]

    def coverage_by_run(self) -> dict[int, Coverage]:
        by_run = {run.pk: run for run in self.runs}
        return {
            run_id: coverage(by_run[run_id].model.declared_languages, self.languages, chosen)
            for run_id, chosen in self.languages_by_run.items()
        }

    def units_of(self, task: str, languages: list[str]) -> list[tuple[str, str | None]]:
        """The (source, target) units of `task` this version has results for, within `languages`."""
        chosen = set(languages)
        return [
            (source, target)
            for unit_task, source, target in self.units
            if unit_task == task and pair_selected(source, target, chosen, self.pair_mode)
        ]

    @property
    def ranked_over(self) -> list[str]:
        """The languages ranks are over: every selected language, or with "common" those all shown models declare."""
        if not self.common:
            return list(self.languages)
        declared = {run.pk: list(run.model.declared_languages or []) for run in self.runs}
        return common_languages(declared, self.languages)

    @property
    def infos(self) -> list[RunInfo]:
        return [run_info(run) for run in self.runs]

    @property
    def run_ids(self) -> list[int]:
        return [run.pk for run in self.runs]

    def found_elsewhere(self) -> list[Dataset]:
        """When a search matches no run on this version: the versions where it does, newest first."""
        search = (self.form.cleaned_data.get("q") or "").strip()  # type: ignore[attr-defined]
        if not search or self.runs:
            return []
        return list(Dataset.objects.where_found(search, excluding=self.dataset))

    @property
    def language_names(self) -> str:
        if self.languages and self.languages == [code for code in self.available if code != "eng"]:
            return f"all {len(self.languages)} translated languages"
        return ", ".join(BY_CODE[code].name for code in self.languages if code in BY_CODE) or "none"


def resolve_selection(params: QueryDict, unit_columns: list[tuple[str, str]]) -> Selection:
    """Validate the filters, choose the benchmark version and the runs and languages to average over.

    Invalid values are reported and ignored (the default applies), never guessed.
    """
    filterset = LeaderboardFilter(params, queryset=Run.objects.all())
    form = filterset.form
    form.is_valid()
    errors = [f"{form.fields[name].label}: {' '.join(messages)}" for name, messages in form.errors.items()]
    versions = list(form.fields["dataset"].queryset)
    dataset = form.cleaned_data.get("dataset") or Dataset.choose_default(versions)
    chosen_runs, twins = prefer_reruns(list(filterset.qs.on_benchmark(dataset)) if dataset else [])
    units = (
        Score.objects.filter(run__dataset=dataset, run__status=Run.Status.DONE).units(unit_columns) if dataset else []
    )
    available = ordered_codes([source for _, source, _ in units] + [target for _, _, target in units if target])
    languages = select_languages(
        available,
        codes=form.cleaned_data.get("languages") or [],
        scripts=form.cleaned_data.get("script") or [],
        families=form.cleaned_data.get("family") or [],
        info=BY_CODE,
    )
    if dataset and available and not languages:
        errors.append("No benchmark language matches these filters; choose other languages, scripts or families.")
    selection = Selection(
        form=form,
        errors=errors,
        versions=versions,
        dataset=dataset,
        runs=chosen_runs,
        available=available,
        languages=languages,
        pair_mode=form.cleaned_data.get("pairs") or "both",
        query=params.urlencode() if hasattr(params, "urlencode") else "",
        units=units,
        common=bool(form.cleaned_data.get("common")),
        published_twins=twins,
    )
    return selection


def prefer_reruns(runs: list[Run]) -> tuple[list[Run], dict[int, Run]]:
    """One row per model on a board: a model with a current-engine re-run shows it, not its published run.

    Returns the runs to show and, per model id, the published run left out (linked from the re-run's row)."""
    rerun_models = {run.model_id for run in runs if not run.is_published and not run.is_older_engine}
    twins = {run.model_id: run for run in runs if run.is_published and run.model_id in rerun_models}
    return [run for run in runs if not (run.is_published and run.model_id in twins)], twins


# Every field of the filter form (the language selection and the run filters) but the sort order.
FILTER_PARAMS = tuple(
    name for name in (*LanguageSelectionForm.base_fields, *LeaderboardFilter.base_filters) if name != "sort"
)


def _params(query: str, names) -> list[tuple[str, str]]:
    params = QueryDict(query)
    return [(name, value) for name in params if name in names for value in params.getlist(name)]


def _filters_context(selection: Selection, page_params: tuple[str, ...] = ()) -> dict:
    """Context for the filter form and for links that keep the filters.

    `query` carries only the filters, so links to other views keep the selection but not this
    page's own choices (`page_params`, e.g. which model a heatmap shows); the forms for those
    choices carry the filters as hidden fields, and the filter form carries the choices.
    """
    filters = _params(selection.query, FILTER_PARAMS)
    return {
        "form": selection.form,
        "errors": selection.errors,
        "versions": selection.versions,
        "dataset": selection.dataset,
        "languages": selection.languages,
        "language_names": selection.language_names,
        "pair_mode": selection.pair_mode,
        "query": _encode(filters),
        "extra_hidden": _params(selection.query, page_params),
        "hidden_for_choice": filters + _params(selection.query, ("sort",)),
        "open_filters": bool(selection.errors),
        "found_elsewhere": selection.found_elsewhere(),
    }


def _encode(pairs: list[tuple[str, str]]) -> str:
    query = QueryDict("", mutable=True)
    for name, value in pairs:
        query.appendlist(name, value)
    return query.urlencode()


# ---------------------------------------------------------------------------------------------- overview


def joint_intervals(
    selection: Selection,
    columns,
    aggregates: list[dict],
    languages_by_run: dict[int, list[str]],
    replicates: dict[int, object] | None = None,
) -> dict[tuple[int, str], tuple[float, float]]:
    """The engine's joint bootstrap interval of every re-run's retrieval averages and overall score.

    Published runs have no resamples (their intervals stay the mean of the Wilson bounds); a
    re-run's average whose units the run does not all have keeps the mean of its bounds too."""
    counts = {(row["run_id"], row["task"], row["metric"]): row["n"] for row in aggregates}
    overall = set(overall_keys())
    found: dict[tuple[int, str], tuple[float, float]] = {}
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
        groups = []
        for column in columns:
            if TASKS[column.task].kind != "retrieval":
                continue
            units = units_of(column.task, languages_by_run.get(run.pk, selection.languages))
            if not units or counts.get((run.pk, column.task, column.metric)) != len(units):
                continue
            interval = joint_average_interval(run, column.task, column.metric, units)
            if interval is not None:
                found[(run.pk, column.key)] = interval
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
                found[(run.pk, OVERALL)] = percentile_interval(samples)
                # The overall score's replicates give the rank intervals (paired across re-runs).
                if replicates is not None:
                    replicates[run.pk] = samples
    return found


def overview_page(params: QueryDict) -> Page:
    columns = list(overview_columns())
    column_keys = [(column.task, column.metric) for column in columns]
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
    intervals = joint_intervals(selection, columns, aggregates, languages_by_run, replicates)
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
    )
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
    headers = [
        ("rank", "Rank"),
        ("model", "Model"),
        *[(column.key, column.label) for column in columns],
        ("params", "Params"),
        ("dim", "Dim."),
        ("max_tokens", "Max tok."),
        ("memory", "Mem. GB"),
        ("license", "Licence"),
    ]
    sort_links = {key: next_sort(table.sort, key, columns) for key, _ in headers}
    export_headers = [
        "run_id",
        "model",
        "model_id",
        "origin",
        "kind",
        "parameter_count",
        "benchmark",
        "rank_best",
        "rank_worst",
        "overall",
        "overall_ci_low",
        "overall_ci_high",
        "averaged_languages",
        "coverage",
        "ranked_over",
        "engine_version",
        "older_engine",
    ]
    # The overall score is a mean of the overall columns' values, all on the main metric's scale.
    overall_metric = next((column.metric for column in columns if column.key in table.overall_keys), None)
    export_metrics = dict.fromkeys(("overall", "overall_ci_low", "overall_ci_high"), overall_metric or "")
    for column in columns:
        export_headers += [
            f"{column.key}_{column.metric}",
            f"{column.key}_ci_low",
            f"{column.key}_ci_high",
            f"{column.key}_covered",
            f"{column.key}_expected",
        ]
        export_metrics |= dict.fromkeys(
            (f"{column.key}_{column.metric}", f"{column.key}_ci_low", f"{column.key}_ci_high"), column.metric
        )
    export_rows = []
    for row in table.rows:
        line = [
            row.run.id,
            row.run.label,
            row.run.model_name,
            row.run.origin,
            row.run.kind,
            row.run.parameter_count,
            row.run.dataset,
            row.rank[0] if row.rank else None,
            row.rank[1] if row.rank else None,
            *_ci(row.overall),
            " ".join(row.coverage.averaged) if row.coverage else "",
            row.coverage.label if row.coverage else "",
            " ".join(row.ranked_over),
            row.run.engine_version,
            row.run.is_older_engine,
        ]
        for column in columns:
            cell = row.cells[column.key]
            line += [*_ci(cell), cell.covered, cell.expected]
        export_rows.append(line)
    context = {
        **_filters_context(selection),
        "table": table,
        "headers": headers,
        "sort_links": sort_links,
        "overall_labels": [column.label for column in columns if column.key in table.overall_keys],
        "figure": figure,
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
    export = ExportTable(export_headers, export_rows, {key: name for key, name in export_metrics.items() if name})
    return Page("Leaderboard", context, {"overview": export})


# ---------------------------------------------------------------------------------------------- task pages


def per_source_means_by_run(
    scores, task: str, metrics: list[str], languages: list[str], pair_mode: str, languages_by_run: dict[int, list[str]]
) -> list[dict]:
    """Per query language, the mean over the document languages each run is averaged over.

    A query language outside a run's declared languages is still shown (marked, never averaged), as
    the mean over all selected document languages."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for run_id, chosen in languages_by_run.items():
        groups.setdefault(tuple(chosen), []).append(run_id)
    values: list[dict] = []
    for chosen, run_ids in groups.items():
        group = scores.filter(run_id__in=run_ids)
        inside = [code for code in languages if code in chosen]
        values += group.per_source_means(task, metrics, inside, pair_mode) if inside else []
        if len(inside) < len(languages):
            outside = set(languages) - set(inside)
            rows = group.per_source_means(task, metrics, languages, pair_mode)
            values += [row for row in rows if row["source"] in outside]
    return values


def task_page(params: QueryDict, task: str) -> Page:
    spec = page_task(task, "retrieval")
    pair = spec.cross_lingual
    main = spec.main_metric
    reported = list(spec.reported_metrics)
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
    headers = ["run_id", "model", "origin", "metric", "language", "value", "ci_low", "ci_high", "block", "older_engine"]
    block_by_run = tables[0][1].block_by_run if tables else {}
    rows = [
        [row["run_id"], None, None, row["metric"], row["source"], row["value"], row.get("ci_low"), row.get("ci_high")]
        for row in values
    ]
    labels = {info.id: info for info in infos}
    for row in rows:
        info = labels.get(row[0])
        row[1], row[2] = (info.label, info.origin) if info else ("", "")
        # The row's block under the ranking rule, and whether an older engine scored it.
        row += [block_by_run.get(row[0], ""), bool(info and info.is_older_engine)]
    if pair:
        headers[4] = "query_language (mean over document languages)"
    context = {
        **_filters_context(selection),
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
    return Page(spec.title, context, {task: ExportTable(headers, rows)})


def chance_levels(spec: TaskSpec, metrics, pool_size: int | None) -> list[tuple[str, str]]:
    """(metric label, chance level in percent) of the task's metrics that define one, for the pages."""
    found = []
    for metric in metrics:
        level = spec.chance_level(metric, pool_size)
        if level is not None:
            found.append((METRICS[metric].short_label, f"{100 * level:.3g}%"))
    return found


# ---------------------------------------------------------------------------------------------- T4


def reliability_curves(details: dict, task: str) -> dict[str, dict[str, list[dict]]]:
    """Reliability bins of a classification task's results as {language: {"before": bins, "after": bins}}.

    Read with the engine's typed results (one spelling, schema 1); each bin is {"count", "mean_p",
    "mean_y"}, and empty bins (no test pair) are left out.
    """
    block = Details.from_dict(details).tasks.get(task)
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
    selection = resolve_selection(params, [(task, spec.main_metric)])
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
        summary.append((info, cells))
    for metric in shown:
        mark_best((cells[metric] for _, cells in summary), higher_is_better=METRICS[metric].higher_is_better)
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

    with_bins = [run for run in selection.runs if reliability_curves(run.details, task)]
    chosen = None
    run_param = params.get("run")
    if run_param and run_param.isdigit():
        chosen = next((run for run in with_bins if run.pk == int(run_param)), None)
    chosen = chosen or (with_bins[0] if with_bins else None)
    figures = []
    if chosen:
        curves = reliability_curves(chosen.details, task)
        block = Details.from_dict(chosen.details).tasks[task]
        for group in ["all", *[code for code in languages if code in curves]]:
            if group not in curves:
                continue
            name = "all languages" if group == "all" else BY_CODE[group].name if group in BY_CODE else group
            # The engine records which calibrator the dev split chose; the curve is named after it.
            calibrator = block.reliability[group].calibrator
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
    headers = ["run_id", "model", "origin", *shown, "older_engine"]
    rows = [
        [info.id, info.label, info.origin, *[cells[m].value for m in shown], info.is_older_engine]
        for info, cells in summary
    ]
    context = {
        **_filters_context(selection, ("run",)),
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
        "published_present": any(info.is_published for info in infos),
        "chance_levels": chance_levels(spec, shown_metrics, selection.pool_size),
        "ece_interval": BIASED_ESTIMATE_INTERVAL,
        "published_t4": published_t4_rows(selection.runs),
    }
    context["hidden_for_run"] = context["hidden_for_choice"]
    return Page(spec.title, context, {task: ExportTable(headers, rows, {metric: metric for metric in shown})})


def published_t4_rows(runs: list[Run]) -> list[dict]:
    """The reference's T4 file that the paper's Table 7 prints for each published model, beside the paper.

    Every block of every file is kept on the run (details["t4_published"]); this shows the one the
    paper reports (the Assamese file, or a model's pooled 'all' file) and what Table 7 printed."""
    paper = {row["model"]: row["values"] for row in paper_table("7")["rows"]}
    rows = []
    for run in runs:
        blocks = (run.details or {}).get("t4_published") or {}
        chosen = "all" if "all" in blocks else "asm" if "asm" in blocks else None
        if not run.is_published or chosen is None:
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


# ---------------------------------------------------------------------------------------------- cross-lingual


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
    matrix = asym = None
    same_script = cross_script = same_family = cross_family = None
    script_groups: list = []
    family_groups: list = []
    pair_values: list[dict] = []
    if chosen:
        pair_values = [row for row in Score.objects.filter(run=chosen).pairs(task, metric)]
        diagonal = Score.objects.filter(run=chosen).per_language(diagonal_task, [metric], languages)
        matrix = pair_matrix(pair_values, languages, diagonal)
        asym = asymmetry(matrix)
        same_script, cross_script, script_groups = group_pairs(pair_values, BY_CODE, languages, "script")
        same_family, cross_family, family_groups = group_pairs(pair_values, BY_CODE, languages, "family")
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
        )
        if chosen and asym
        else None
    )
    split_rows = []
    for info in selection.infos:
        row = split_by_run.get(info.id, {})
        same, cross = row.get("same_script"), row.get("cross_script")
        split_rows.append((info, row, same - cross if same is not None and cross is not None else None))
    headers = ["run_id", "model", "task", "metric", "query_language", "document_language", "value", "older_engine"]
    rows = []
    if chosen:
        rows = [
            [
                chosen.pk,
                chosen.model.label,
                task,
                metric,
                row["source"],
                row["target"],
                row["value"],
                chosen.is_older_engine,
            ]
            for row in pair_values
            if row["source"] in languages and row["target"] in languages
        ]
    pair_view, pair_error = pair_view_rows(params, selection, task, metric)
    filters_context = _filters_context(selection, ("run", "task", "metric", "query_language", "document_language"))
    context = {
        **filters_context,
        "query_without_run": _encode(
            filters_context["hidden_for_choice"] + _params(selection.query, ("task", "metric"))
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
        "same_script": same_script,
        "cross_script": cross_script,
        "same_family": same_family,
        "cross_family": cross_family,
        "script_groups": script_groups,
        "family_groups": family_groups,
        "split_rows": split_rows,
        "pair_view": pair_view,
        "pair_error": pair_error,
        "pair_languages": [(code, BY_CODE[code].name) for code in languages if code in BY_CODE],
        "query_language": params.get("query_language", ""),
        "document_language": params.get("document_language", ""),
    }
    tables = {"pairs": ExportTable(headers, rows)}
    if pair_view:
        tables["pair_view"] = ExportTable(
            ["rank_best", "rank_worst", "run_id", "model", "origin", "block", "value", "ci_low", "ci_high"],
            [
                [
                    row.rank[0] if row.rank else None,
                    row.rank[1] if row.rank else None,
                    row.run.id,
                    row.run.label,
                    row.run.origin,
                    row.block,
                    row.cell.value,
                    row.cell.ci_low,
                    row.cell.ci_high,
                ]
                for row in pair_view
            ],
            dict.fromkeys(("value", "ci_low", "ci_high"), metric),
        )
    return Page("Cross-lingual retrieval", context, tables)


def pair_view_rows(params: QueryDict, selection: Selection, task: str, metric: str) -> tuple[list, str]:
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


# ---------------------------------------------------------------------------------------------- compare

DIFFERENCE_HEADERS = [
    "task",
    "metric",
    "language",
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
    "method",
    "verdict",
]
NOT_TESTED = "not tested (no per-query data, not a proportion)"


def differences(selection: Selection, chosen: list[Run], axes: list[tuple[str, str, str]]) -> list[dict]:
    """Δ = A − B for every pair of chosen runs (in the order chosen) and every axis, over the languages both cover.

    Re-runs with rank files: the paired bootstrap over the shared queries (leaderboard.significance);
    the p-value of Recall@1 is the exact McNemar test. Otherwise, published proportions: the unpaired,
    conservative interval. Several comparisons at once are Holm-corrected."""
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
                units = selection.units_of(task, shared)
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
                        if metric == "recall@1":
                            difference, _ = paired_recall_at_1(per_a, per_b, n_resamples=resamples, seed=seed)
                        else:
                            difference, _ = paired_bootstrap(
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
                        "language": " ".join(shared),
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
            method=difference.method,
            verdict=difference.verdict,
        )
    return rows


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
    task, main = spec.id, METRICS[spec.main_metric]
    infos = [run_info(run) for run in chosen]
    bars = radar = None
    summary: list = []
    languages = selection.languages
    if len(chosen) >= 2:
        scores = Score.objects.for_runs([run.pk for run in chosen])
        by_run = selection.languages_by_run
        languages_by_run = {run.pk: by_run.get(run.pk, languages) for run in chosen}
        if spec.cross_lingual:
            values = per_source_means_by_run(
                scores, task, [main.name], languages, selection.pair_mode, languages_by_run
            )
        else:
            values = scores.per_language(task, [main.name], languages)
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
            cells = [cell_from_aggregate(lookup.get((info.id, t, m)), units[f"{t}:{m}"]) for t, m, _ in axes]
            summary.append((info, cells))
        for index, (_, metric, _) in enumerate(axes):
            mark_best((cells[index] for _, cells in summary), higher_is_better=METRICS[metric].higher_is_better)
        radar = plots.per_metric_bars(
            [label for _, _, label in axes],
            {info.label: [cell.value for cell in cells] for info, cells in summary},
            title="Scores across tasks (%), each on its own axis",
        )
    headers = ["run_id", "model", *[f"{label} ({metric})" for _, metric, label in axes], "older_engine"]
    rows = [[info.id, info.label, *[cell.value for cell in cells], info.is_older_engine] for info, cells in summary]
    compared = differences(selection, chosen, axes) if len(chosen) >= 2 else []
    context = {
        **_filters_context(selection, ("runs", "task")),
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
        # How many tested comparisons Holm's correction spans (none below two).
        "holm": sum(1 for row in compared if row["p_value"] is not None),
    }
    metrics = {f"{label} ({metric})": metric for _, metric, label in axes}
    difference_table = ExportTable(DIFFERENCE_HEADERS, [[row[key] for key in DIFFERENCE_HEADERS] for row in compared])
    return Page(
        "Compare models",
        context,
        {"compare": ExportTable(headers, rows, metrics), "differences": difference_table},
    )


# ---------------------------------------------------------------------------------------------- run page


def reproduce_command(run: Run) -> str:
    """The command that re-runs this evaluation elsewhere: the Hub id at its pinned commit.

    A local model folder is named by its folder name only (the server's path means nothing to a
    reader); its files are identified by the fingerprint shown beside the command.
    """
    if run.model.is_local:
        parts = ["python", "manage.py", "evaluate", "--model", f"./{PurePosixPath(run.model.name).name}"]
    else:
        parts = ["python", "manage.py", "evaluate", "--model", run.model.name]
        revision = run.resolved_commit or run.revision
        if revision:
            parts += ["--revision", revision]
    parts += ["--dataset", run.dataset.slug]
    if run.tasks and run.origin != Run.Origin.PUBLISHED:
        parts += ["--tasks", ",".join(run.tasks)]
    if run.languages and run.origin != Run.Origin.PUBLISHED:
        parts += ["--languages", ",".join(run.languages)]
    return shlex.join(parts)


def artefacts(run: Run) -> dict[str, str]:
    """The per-query rank files the engine listed in the run's details, keyed by the name used in URLs
    ("ranks-t1-hin", "ranks-t2-hin-ben")."""
    found: dict[str, str] = {}
    for entry in Details.from_dict(run.details).ranks:
        name = "-".join(part for part in ("ranks", entry.task, entry.source, entry.target) if part)
        found[name.replace("/", "-").replace(" ", "-")] = entry.path
    return dict(sorted(found.items()))


def tokenizer_coverage(details: dict) -> tuple[list[str], list[tuple[str, list]]]:
    """Tokenizer coverage per script as (metric names, rows of (script, values))."""
    coverage = Details.from_dict(details).tokenizer_coverage
    if not coverage:
        return [], []
    # PostgreSQL's jsonb does not keep key order, so rows and columns are put in a fixed order here.
    coverage = {script: coverage[script] for script in sorted(coverage) if isinstance(coverage[script], dict)}
    found = {key for value in coverage.values() for key, number in value.items() if isinstance(number, int | float)}
    preferred = ["tokens_per_word", "unk_rate", "texts", "words", "tokens"]
    metrics = [key for key in preferred if key in found] + sorted(found - set(preferred))

    def shown(number: object) -> str:
        if isinstance(number, bool) or not isinstance(number, int | float):
            return "—"
        return f"{number:,}" if isinstance(number, int) else f"{number:.3g}"

    rows = [(str(script), [shown(value.get(metric)) for metric in metrics]) for script, value in coverage.items()]
    return metrics, rows


# What the brackets of a run's scores resample, per task kind (the engine's bootstrap, evaluation/engine/bootstrap.py).
RESAMPLED = {
    "retrieval": "brackets: 95% percentile bootstrap interval over the queries (the same item draws in every language)",
    "classification": (
        "brackets: 95% percentile bootstrap interval over the test items, with the classifier and calibrator held "
        f"fixed (the training and dev splits are not resampled); ECE brackets: the {BIASED_ESTIMATE_INTERVAL}"
    ),
    "diagnostics": "brackets: 95% percentile bootstrap interval over the queries",
}


def run_page(run_id: int) -> Page:
    run = Run.objects.select_related("model", "dataset").filter(pk=run_id).first()
    if run is None:
        raise Http404("No such run")
    scores = [
        {
            "task": row["task"],
            "source": row["source_id"],
            "target": row["target_id"],
            "metric": row["metric"],
            "value": row["value"],
            "ci_low": row["ci_low"],
            "ci_high": row["ci_high"],
        }
        for row in Score.objects.filter(run=run).values(
            "task", "metric", "value", "ci_low", "ci_high", "source_id", "target_id"
        )
    ]
    sections = [
        {
            "section": section,
            "title": TASKS[section.task].title if section.task in TASKS else section.task,
            # Retrieval units link to their queries, worst first (leaderboard/errors.py).
            "per_query": section.task in TASKS and errors.has_errors_page(TASKS[section.task]),
            "resampled": ""
            if run.is_published
            else RESAMPLED.get(TASKS[section.task].kind if section.task in TASKS else "", ""),
        }
        for section in score_sections(scores, LANGUAGE_ORDER)
    ]
    # One metric for every task's bars, so that they share an axis.
    bar_metric = METRICS["recall@1"]
    grouped: dict[str, dict[str, dict]] = {}
    for score in scores:
        if score["target"] is None and score["metric"] == bar_metric.name:
            grouped.setdefault(score["task"], {})[score["source"]] = score
    bars = None
    # The bars show every monolingual retrieval task, each in its own colour.
    mono = {spec.id: grouped.get(spec.id, {}) for spec in retrieval_tasks() if not spec.cross_lingual}
    bar_languages = ordered_codes(code for values in mono.values() for code in values)
    if bar_languages:
        series = {}
        for task in mono:
            if mono[task]:
                series[f"{task.upper()} {bar_metric.short_label}"] = [
                    (
                        (mono[task].get(code) or {}).get("value"),
                        (mono[task].get(code) or {}).get("ci_low"),
                        (mono[task].get(code) or {}).get("ci_high"),
                    )
                    for code in bar_languages
                ]
        bars = plots.language_bars(
            [BY_CODE[c].name for c in bar_languages], series, title=f"{bar_metric.label} per language"
        )
    coverage_metrics, coverage_rows = tokenizer_coverage(run.details)
    context = {
        "run": run,
        "sections": sections,
        "bars": bars,
        # One public view of the manifest for everyone: this page is cached whoever asks.
        "manifest": (manifest := run.public_manifest),
        "facts": manifest_facts(manifest),
        "coverage_metrics": coverage_metrics,
        "coverage_rows": coverage_rows,
        "command": reproduce_command(run),
        "artefacts": artefacts(run),
        "error_units": errors.error_units(run),
        "translation_rows": errors.translation_rows(run),
        "translation_note": INTERVAL_NOTE,
        "skipped_files": [public_log(str(reason)) for reason in (run.details or {}).get("skipped_files") or []],
        # The published T4 files kept whole (dev and test, base and calibrated), by language or "all".
        "t4_published_files": [
            (code, block.get("file", ""))
            for code, block in sorted(((run.details or {}).get("t4_published") or {}).items())
        ],
    }
    headers = ["run_id", "model", "task", "source", "target", "metric", "value", "ci_low", "ci_high"]
    rows = [
        [
            run.pk,
            run.model.public_name,
            s["task"],
            s["source"],
            s["target"],
            s["metric"],
            s["value"],
            s["ci_low"],
            s["ci_high"],
        ]
        for s in scores
    ]
    return Page(f"{run.model.label} on {run.dataset}", context, {"scores": ExportTable(headers, rows)})


# ---------------------------------------------------------------------------------------------- datasets


def dataset_page(dataset_id: int) -> Page:
    dataset = Dataset.objects.filter(pk=dataset_id).first()
    if dataset is None:
        raise Http404("No such dataset")
    counts = dataset.item_counts_by_language()
    first_id = Item.objects.filter(dataset=dataset).order_by("item_id").values_list("item_id", flat=True).first()
    samples = (
        {
            item.language_id: item
            for item in Item.objects.filter(dataset=dataset, item_id=first_id).select_related("language")
        }
        if first_id is not None
        else {}
    )
    # A version stored only as results (the full benchmark) still lists the languages its runs cover.
    covered = (
        set()
        if counts
        else set(Score.objects.filter(run__dataset=dataset).values_list("source_id", flat=True).distinct())
    )
    languages = []
    for lang in LANGUAGES:
        if lang.code in counts or lang.code in samples or lang.code in covered:
            languages.append({"info": lang, "count": counts.get(lang.code, 0), "sample": samples.get(lang.code)})
    agreement = agreement_by_language(dataset)
    finished = Run.objects.filter(dataset=dataset, status=Run.Status.DONE).count()
    headers = ["language", "name", "script", "family", "items"]
    rows = [
        [row["info"].code, row["info"].name, row["info"].script, row["info"].family, row["count"]] for row in languages
    ]
    tables = {"languages": ExportTable(headers, rows)}
    if agreement:
        keys = list(agreement[0].keys())
        tables["agreement"] = ExportTable(keys, [[row.get(key) for key in keys] for row in agreement])
    context = {
        "dataset": dataset,
        "languages": languages,
        "agreement": agreement,
        "agreement_notes": [KAPPA_CI_NOTE, AC1_NOTE],
        "finished_runs": finished,
        "pool_size": max([n for code, n in counts.items() if code != "eng"], default=0) or dataset.declared_pool_size,
        "items_here": sum(counts.values()),
    }
    return Page(str(dataset), context, tables)


def dataset_list_page() -> Page:
    datasets = list(Dataset.objects.with_item_counts().order_by("name", "-created_at"))
    finished = {
        row["dataset_id"]: row["n"]
        for row in Run.objects.finished().values("dataset_id").annotate(n=Count("id")).order_by()
    }
    headers = ["id", "name", "version", "license", "items", "declared_pool_size", "finished_runs", "demo"]
    rows = [
        [d.pk, d.name, d.version, d.license, d.item_count, d.declared_pool_size, finished.get(d.pk, 0), d.is_demo]
        for d in datasets
    ]
    return Page(
        "Datasets",
        {"datasets": [(d, finished.get(d.pk, 0)) for d in datasets]},
        {"datasets": ExportTable(headers, rows)},
    )
