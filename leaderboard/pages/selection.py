"""What every page builder shares: the selection of benchmark version, runs and languages a page
shows (resolved from the filter form), the page and export types, and the links that keep the filters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Generic, TypeVar

from django.http import QueryDict

from evaluation.engine.languages import BY_CODE, LANGUAGES
from evaluation.engine.registry import TASKS, TaskSpec
from evaluation.models import Dataset, Run, in_page_order
from leaderboard.coverage import Coverage, averaging_languages, common_languages, coverage
from leaderboard.filters import LanguageSelectionForm, LeaderboardFilter
from leaderboard.tables.cells import RunInfo
from leaderboard.tables.selection import pair_selected, select_languages

# A row of a page's table, as its download reads it (an OverviewRow, a PairRow, ...).
Row = TypeVar("Row")
LANGUAGE_ORDER = {lang.code: position for position, lang in enumerate(LANGUAGES)}


# The registry is read on every call, not copied at import, so a task added to it shows everywhere.
def retrieval_tasks() -> list[TaskSpec]:
    return [spec for spec in TASKS.values() if spec.kind == "retrieval"]


def cross_lingual_tasks() -> list[TaskSpec]:
    return [spec for spec in retrieval_tasks() if spec.cross_lingual]


@dataclass
class ExportTable:
    """A page's table as downloaded. Values are stored numbers (fractions for fraction metrics).

    `metrics` names, for columns of a wide table, the metric whose values they hold, so that the CSV
    can add them in the page's units; a long table says it with a `metric` column instead.
    """

    headers: list[str]
    rows: list[list]
    metrics: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ExportColumn(Generic[Row]):
    """One column of a download: its header, how its value is read off one row of the page's own table,
    and the metric its values are in (empty for other columns).

    A page lists its download's columns once, next to the table they read, so that the headers, the
    values and the metrics cannot drift apart, and the download shows exactly the table's rows.
    """

    header: str
    value: Callable[[Row], object]
    metric: str = ""


def export_table(columns: Sequence[ExportColumn[Row]], rows: Iterable[Row]) -> ExportTable:
    """The download of a table: one line per row of the table, one value per column."""
    return ExportTable(
        [column.header for column in columns],
        [[column.value(row) for column in columns] for row in rows],
        {column.header: column.metric for column in columns if column.metric},
    )


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


def form_errors(form) -> list[str]:
    """The filter form's refusals, one line a field ("Languages: Select a valid choice. …")."""
    form.is_valid()
    return [f"{form.fields[name].label}: {' '.join(messages)}" for name, messages in form.errors.items()]


def refused_filters(params: QueryDict) -> list[str]:
    """What the filter form says of these parameters, without choosing runs or building a board."""
    return form_errors(LeaderboardFilter(params, queryset=Run.objects.none()).form)


def resolve_selection(
    params: QueryDict, unit_columns: list[tuple[str, str]], *, blocks: tuple[str, ...] = ()
) -> Selection:
    """Validate the filters, choose the benchmark version and the runs and languages to average over.

    Invalid values are reported and ignored (the default applies), never guessed. The runs come without
    their details and manifest, with what a board reads of them instead (RunQuerySet.with_stored_summaries)
    and the details' blocks of the tasks in `blocks`; a page that reads more of a run (its rank files, its
    manifest) has that run's fetched when it asks (Run.results).
    """
    runs = Run.objects.with_stored_summaries(blocks)
    filterset = LeaderboardFilter(params, queryset=runs)
    form = filterset.form
    errors = form_errors(form)
    versions = list(form.fields["dataset"].queryset)
    dataset = form.cleaned_data.get("dataset") or Dataset.choose_default(versions)
    chosen_runs, twins = prefer_reruns(list(filterset.qs.on_benchmark(dataset)) if dataset else [])
    units = Run.objects.filter(dataset=dataset, status=Run.Status.DONE).covered_units(unit_columns) if dataset else []
    available = ordered_codes([source for _, source, _ in units] + [target for _, _, target in units if target])
    languages = select_languages(
        available,
        codes=form.cleaned_data.get("languages") or [],
        scripts=form.cleaned_data.get("script") or [],
        families=form.cleaned_data.get("family") or [],
        info=BY_CODE,
    )
    form.offer_only(available)
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


def query_params(query: str, names) -> list[tuple[str, str]]:
    params = QueryDict(query)
    return [(name, value) for name in params if name in names for value in params.getlist(name)]


def filters_context(selection: Selection, page_params: tuple[str, ...] = ()) -> dict:
    """Context for the filter form and for links that keep the filters.

    `query` carries only the filters, so links to other views keep the selection but not this
    page's own choices (`page_params`, e.g. which model a heatmap shows); the forms for those
    choices carry the filters as hidden fields, and the filter form carries the choices.
    """
    filters = query_params(selection.query, FILTER_PARAMS)
    return {
        "form": selection.form,
        "errors": selection.errors,
        "versions": selection.versions,
        "dataset": selection.dataset,
        "languages": selection.languages,
        "language_names": selection.language_names,
        "pair_mode": selection.pair_mode,
        "query": encode_query(filters),
        "extra_hidden": query_params(selection.query, page_params),
        "hidden_for_choice": filters + query_params(selection.query, ("sort",)),
        # The whole state of the view (filters, its own choices, sort): its downloads are built from
        # it, so a download holds what the page shows.
        "state": view_state(selection.query),
        "open_filters": bool(selection.errors),
        # The folded filter bar of a phone says what is chosen beyond the version, languages and search.
        "more_filters_chosen": len({name for name, _ in filters if name not in ("dataset", "q", "languages")}),
        "found_elsewhere": selection.found_elsewhere(),
    }


def view_state(query: str) -> str:
    """The page's query without what asks for a download (`format`, `table`)."""
    params = QueryDict(query)
    return encode_query(
        [(name, value) for name in params if name not in ("format", "table") for value in params.getlist(name)]
    )


def encode_query(pairs: list[tuple[str, str]]) -> str:
    query = QueryDict("", mutable=True)
    for name, value in pairs:
        query.appendlist(name, value)
    return query.urlencode()


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
    with_outside = False
    for chosen, run_ids in groups.items():
        group = scores.filter(run_id__any_of=run_ids)
        inside = [code for code in languages if code in chosen]
        values += group.per_source_means(task, metrics, inside, pair_mode) if inside else []
        if len(inside) < len(languages):
            outside = set(languages) - set(inside)
            rows = group.per_source_means(task, metrics, languages, pair_mode)
            values += [row for row in rows if row["source"] in outside]
            with_outside = True
    # Each query gives its rows by run, language and metric; rows outside a run's languages, added after
    # the others, are put back among them (sorted only then: a sort costs ~60 ms at 1,000 models).
    return in_page_order(values, languages, metrics) if with_outside else values
