"""Where a finished run stands on its version's leaderboard: its rank overall and in each task's column.

The overview's own table decides the overall rank (leaderboard.tables, whatever rule it follows),
and a column's rank comes from the one ranking function, leaderboard.ranking.rank_intervals, over
the very cells the overview shows; nothing here ranks by a rule of its own. Every link keeps the
run's version, so that following it shows the board the rank was counted on.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import QueryDict
from django.urls import reverse

from evaluation.engine.registry import TASKS
from evaluation.models import Dataset, Run
from leaderboard.cache import generation_key
from leaderboard.pages import run as run_pages
from leaderboard.pages.overview import overview_page
from leaderboard.pages.selection import Page
from leaderboard.ranking import rank_intervals, rank_label
from leaderboard.tables.overview import OverviewTable


@dataclass(frozen=True)
class Place:
    """'rank 2–3 of 9' in one column of the board, with the page that shows it."""

    label: str
    rank: str
    count: int
    url: str


@dataclass(frozen=True)
class Standing:
    dataset: Dataset
    places: list[Place]
    version_query: str
    # Every ranked run of the same model, on this and other versions: the revision that stands for it on each.
    revisions: list[Run]
    # Why the run has no rank on this board (its block's label), when it has none.
    unranked: str = ""

    @property
    def overall(self) -> Place | None:
        return next((place for place in self.places if place.label == "Overall"), None)


def version_query(dataset_id: int) -> str:
    """The query string that pins a leaderboard page to one version."""
    query = QueryDict(mutable=True)
    query["dataset"] = str(dataset_id)
    return query.urlencode()


def run_standing(run: Run, board: OverviewTable | None = None) -> Standing | None:
    """The run's ranks on its version (None while it is not finished or not on the board).

    `board` is the version's overview table when the caller has just built it (leaderboard.refresh),
    so that it is not built twice."""
    if run.status != Run.Status.DONE:
        return None
    query = version_query(run.dataset_id)
    table = board if board is not None else overview_page(QueryDict(query)).context["table"]
    position = next((index for index, row in enumerate(table.rows) if row.run.id == run.pk), None)
    if position is None:
        return None
    row = table.rows[position]
    anchor = f"#run-{run.pk}"
    overview_url = f"{reverse('leaderboard:overview')}?{query}{anchor}"
    revisions = list(run.model.runs_on_board())
    if row.rank is None:
        # Not ranked by the board's one rule (fewer declared languages, or an older engine): the run is
        # shown in its own block and no rank is invented for it, in any column.
        return Standing(
            dataset=run.dataset, places=[], version_query=query, revisions=revisions, unranked=row.block_label
        )
    # Only the ranked block is compared: its models are measured on the same languages (ranked_over).
    ranked = [other for other in table.rows if other.rank is not None]
    places = [Place("Overall", rank_label(row.rank), len(ranked), overview_url)]
    for column in table.visible_columns:
        present = [other for other in ranked if not other.cells[column.key].missing]
        mine = next((index for index, other in enumerate(present) if other.run.id == run.pk), None)
        if mine is None:
            continue
        # Re-runs bring the column's paired bootstrap replicates (the same item draws for every re-run);
        # published scores, which carry no per-query data, enter as independent draws from their intervals.
        estimates = [
            other.cells[column.key].estimate(table.column_replicates.get((other.run.id, column.key)))
            for other in present
        ]
        interval = rank_intervals(estimates, higher_is_better=column.higher_is_better)[mine]
        url = (
            f"{reverse('leaderboard:task', args=[column.task])}?{query}{anchor}"
            if TASKS[column.task].has_page
            else overview_url
        )
        places.append(Place(column.label, rank_label(interval), len(present), url))
    return Standing(dataset=run.dataset, places=places, version_query=query, revisions=revisions)


def cached_run_standing(run: Run) -> Standing | None:
    """run_standing, kept until the results change (the live run page is not cached as a whole)."""
    if run.status != Run.Status.DONE:
        return None
    key = generation_key("standing", run.pk)
    standing = cache.get(key)
    if standing is None:
        standing = run_standing(run)
        cache.set(key, standing, settings.PUBLIC_PAGE_CACHE_SECONDS)
    return standing


RUN_TEMPLATE = "leaderboard/run_detail.html"


def run_page_name(run_id: int) -> str:
    """The name a run's page is cached under (leaderboard.responses.page_keys)."""
    return f"run-{run_id}"


def run_page_with_standing(run_id: int, board: OverviewTable | None = None) -> Page:
    """The run's page with where it stands on its version (`board`: see run_standing); its links keep
    that version."""
    page = run_pages.run_page(run_id)
    run = page.context["run"]
    page.context["standing"] = run_standing(run, board)
    page.context["version_query"] = version_query(run.dataset_id) if run.status == Run.Status.DONE else ""
    return page
