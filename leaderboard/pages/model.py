"""A model's own page: every finished run of it on every benchmark version (published and re-run, engine
version, revision), its declared languages, its figures per task and per language with intervals, where it
stands on each version, and links to its error analysis and to compare it with its neighbours on the board.

The figures are read off each version's overview table (leaderboard.pages.overview), so the model page
shows the very cells, intervals and ranks the board shows; nothing is averaged or ranked here by a rule
of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.http import Http404, QueryDict
from django.urls import reverse

from evaluation.engine.languages import BY_CODE
from evaluation.engine.registry import METRICS
from evaluation.models import Dataset, EmbeddingModel, Run, Score
from leaderboard import errors
from leaderboard.pages.overview import overview_page
from leaderboard.pages.selection import ExportColumn, Page, export_table, retrieval_tasks
from leaderboard.slugs import model_slug
from leaderboard.tables.cells import Cell
from leaderboard.tables.overview import OverviewRow

# How many models above and below this one on the board the compare link brings in.
NEIGHBOURS = 1


def model_url(model: EmbeddingModel) -> str:
    return reverse("leaderboard:model_detail", args=[model_slug(model.public_name)])


def model_of_slug(slug: str) -> EmbeddingModel:
    """The model with a public finished run whose slug this is; 404 otherwise (nothing else is public)."""
    public = EmbeddingModel.objects.filter(runs__in=Run.objects.public()).distinct().order_by("pk")
    found = next((model for model in public if model_slug(model.public_name) == slug), None)
    if found is None:
        raise Http404("No model with results has this address")
    return found


@dataclass
class VersionStanding:
    """The model on one benchmark version: its runs there and, for the one the board shows, its row."""

    dataset: Dataset
    runs: list[Run]
    row: OverviewRow | None
    columns: list
    ranked_count: int
    board_url: str
    compare_url: str = ""
    neighbours: list[str] = field(default_factory=list)

    @property
    def rank(self) -> str:
        return self.row.rank_label if self.row is not None and self.row.rank is not None else ""

    @property
    def cells(self) -> list[tuple[str, Cell]]:
        return [(column.label, self.row.cells[column.key]) for column in self.columns] if self.row else []


def _standing(model: EmbeddingModel, dataset: Dataset, runs: list[Run]) -> VersionStanding:
    query = QueryDict(mutable=True)
    query["dataset"] = str(dataset.pk)
    table = overview_page(query).context["table"]
    rows = list(table.rows)
    position = next((index for index, row in enumerate(rows) if row.run.id in {run.pk for run in runs}), None)
    row = rows[position] if position is not None else None
    ranked = [other for other in rows if other.rank is not None]
    board_url = f"{reverse('leaderboard:overview')}?{query.urlencode()}" + (f"#run-{row.run.id}" if row else "")
    standing = VersionStanding(dataset, runs, row, list(table.visible_columns), len(ranked), board_url)
    if row is not None and row.rank is not None:
        # The nearest models on the board: the ranked rows just above and below this one.
        mine = next(index for index, other in enumerate(ranked) if other.run.id == row.run.id)
        near = ranked[max(0, mine - NEIGHBOURS) : mine] + ranked[mine + 1 : mine + 1 + NEIGHBOURS]
        if near:
            compare = QueryDict(mutable=True)
            compare["dataset"] = str(dataset.pk)
            compare.setlist("runs", [str(row.run.id), *[str(other.run.id) for other in near]])
            standing.compare_url = f"{reverse('leaderboard:compare')}?{compare.urlencode()}"
            standing.neighbours = [other.run.label for other in near]
    return standing


@dataclass
class LanguageRow:
    code: str
    name: str
    cells: list[Cell]


def per_language(run: Run) -> tuple[list[str], list[LanguageRow]]:
    """The run's main metric per language for each retrieval task, with intervals: a pair task by query
    language, averaged over the document languages (as the task pages show it)."""
    tasks = [spec for spec in retrieval_tasks()]
    scores = Score.objects.filter(run=run)
    codes = sorted({code for code in scores.values_list("source_id", flat=True).order_by().distinct()})
    values: dict[tuple[str, str], dict] = {}
    for spec in tasks:
        metric = spec.main_metric
        rows = (
            scores.per_source_means(spec.id, [metric], codes)
            if spec.cross_lingual
            else scores.per_language(spec.id, [metric], codes)
        )
        for row in rows:
            values[(spec.id, row["source"])] = row
    shown = [spec for spec in tasks if any(key[0] == spec.id for key in values)]
    languages = [code for code in codes if any((spec.id, code) in values for spec in shown)]
    table = []
    for code in languages:
        cells = []
        for spec in shown:
            found = values.get((spec.id, code))
            cells.append(
                Cell(
                    value=found["value"] if found else None,
                    ci_low=found.get("ci_low") if found else None,
                    ci_high=found.get("ci_high") if found else None,
                    covered=1 if found else 0,
                    expected=1,
                )
            )
        table.append(LanguageRow(code, BY_CODE[code].name if code in BY_CODE else code, cells))
    headers = [f"{spec.short_title} {METRICS[spec.main_metric].short_label}" for spec in shown]
    return headers, table


def model_page(slug: str) -> Page:
    model = model_of_slug(slug)
    runs = list(
        Run.objects.public()
        .filter(model=model)
        .select_related("dataset", "model")
        .order_by("dataset__is_demo", "-dataset__created_at", "origin", "-finished_at", "-pk")
    )
    by_version: dict[int, list[Run]] = {}
    for run in runs:
        by_version.setdefault(run.dataset_id, []).append(run)
    standings = [_standing(model, version_runs[0].dataset, version_runs) for version_runs in by_version.values()]
    # The run its figures per language are read from: the one the board shows on the first version listed.
    headline = next((standing.row for standing in standings if standing.row is not None), None)
    headline_run = next((run for run in runs if headline is not None and run.pk == headline.run.id), None)
    headline_run = headline_run or (runs[0] if runs else None)
    language_headers, language_rows = per_language(headline_run) if headline_run else ([], [])
    declared = [BY_CODE[code].name if code in BY_CODE else code for code in model.declared_languages or []]
    context = {
        "model": model,
        "slug": slug,
        "runs": runs,
        "error_runs": {run.pk for run in runs if errors.error_units(run)},
        "declared": declared,
        "standings": standings,
        "headline_run": headline_run,
        "language_headers": language_headers,
        "language_rows": language_rows,
        "memory_gb": model.memory_bytes_fp16 / 1e9 if model.memory_bytes_fp16 else None,
        # The page has no filters: its download is its one list of runs.
        "state": "",
        "query": "",
    }
    export = [
        ExportColumn("run_id", lambda run: run.pk),
        ExportColumn("model", lambda run: run.model.label),
        ExportColumn("model_id", lambda run: run.model.public_name),
        ExportColumn("benchmark", lambda run: str(run.dataset)),
        ExportColumn("origin", lambda run: run.origin),
        ExportColumn("engine_version", lambda run: run.engine_version),
        ExportColumn("revision", lambda run: run.resolved_commit or run.revision),
        ExportColumn("older_engine", lambda run: run.is_older_engine),
    ]
    return Page(model.label, context, {"runs": export_table(export, runs)})
