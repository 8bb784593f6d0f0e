"""Where a finished run stands on its version's leaderboard: its rank overall and in each task's column.

The overview's own table decides the overall rank (leaderboard.tables, whatever rule it follows),
and a column's rank comes from the one ranking function, leaderboard.ranking.rank_intervals, over
the very cells the overview shows; nothing here ranks by a rule of its own. Every link keeps the
run's version, so that following it shows the board the rank was counted on.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.http import QueryDict
from django.urls import reverse

from evaluation.engine.registry import TASKS
from evaluation.models import Dataset, Run
from leaderboard.cache import generation_key, get_or_rebuild, latest_key, store_rebuilt
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


@dataclass(frozen=True)
class BoardPlaces:
    """Every run's places on one version's board, read off the board once.

    `ranked` maps a ranked run to its places as (column label, rank label, models compared, task of
    the column's page or None for the overview); `unranked` maps a run shown outside the ranked block
    to its block's label. A column's rank intervals are computed once for all its models (the same
    call a single run's standing made, whose interval for that run it returns), so that the standing of
    any of 1,000 runs is a lookup in one cached value rather than a rebuild of the board."""

    ranked: dict[int, list[tuple[str, str, int, str | None]]]
    unranked: dict[int, str]


def board_places(table: OverviewTable) -> BoardPlaces:
    """The places of every run on `table` (a version's overview table)."""
    unranked = {row.run.id: row.block_label for row in table.rows if row.rank is None}
    # Only the ranked block is compared: its models are measured on the same languages (ranked_over).
    ranked_rows = [row for row in table.rows if row.rank is not None]
    ranked: dict[int, list[tuple[str, str, int, str | None]]] = {
        row.run.id: [("Overall", rank_label(row.rank), len(ranked_rows), None)] for row in ranked_rows
    }
    for column in table.visible_columns:
        present = [row for row in ranked_rows if not row.cells[column.key].missing]
        if not present:
            continue
        # Re-runs bring the column's paired bootstrap replicates (the same item draws for every re-run);
        # published scores, which carry no per-query data, enter as independent draws from their intervals.
        estimates = [
            row.cells[column.key].estimate(table.column_replicates.get((row.run.id, column.key))) for row in present
        ]
        intervals = rank_intervals(estimates, higher_is_better=column.higher_is_better)
        task = column.task if TASKS[column.task].has_page else None
        for row, interval in zip(present, intervals, strict=True):
            ranked[row.run.id].append((column.label, rank_label(interval), len(present), task))
    return BoardPlaces(ranked=ranked, unranked=unranked)


def _places_key(dataset_id: int) -> tuple[str, str]:
    return generation_key("board-places", dataset_id), latest_key("board-places", dataset_id)


def store_board_places(dataset_id: int, board: OverviewTable) -> BoardPlaces:
    """Compute the places on a version's board just built (leaderboard.refresh) and keep them."""
    places = board_places(board)
    store_rebuilt(*_places_key(dataset_id), places, settings.PUBLIC_PAGE_CACHE_SECONDS)
    return places


def version_places(dataset_id: int) -> BoardPlaces:
    """The places on a version's board, kept until the results change (built by leaderboard.refresh for a
    finished run; otherwise by the first visitor, while later ones get the latest copy)."""
    return get_or_rebuild(
        *_places_key(dataset_id),
        lambda: board_places(overview_page(QueryDict(version_query(dataset_id))).context["table"]),
        settings.PUBLIC_PAGE_CACHE_SECONDS,
    ).value


def _column_url(task: str, query: str, anchor: str) -> str:
    return f"{reverse('leaderboard:task', args=[task])}?{query}{anchor}"


def run_standing(run: Run) -> Standing | None:
    """The run's ranks on its version (None while it is not finished or not on the board), read from the
    places stored with the version's board (version_places)."""
    if run.status != Run.Status.DONE:
        return None
    query = version_query(run.dataset_id)
    places = version_places(run.dataset_id)
    if run.pk not in places.ranked and run.pk not in places.unranked:
        return None
    anchor = f"#run-{run.pk}"
    overview_url = f"{reverse('leaderboard:overview')}?{query}{anchor}"
    revisions = list(run.model.runs_on_board())
    if run.pk in places.unranked:
        # Not ranked by the board's one rule (fewer declared languages, or an older engine): the run is
        # shown in its own block and no rank is invented for it, in any column.
        return Standing(
            dataset=run.dataset,
            places=[],
            version_query=query,
            revisions=revisions,
            unranked=places.unranked[run.pk],
        )
    return Standing(
        dataset=run.dataset,
        places=[
            Place(label, rank, count, _column_url(task, query, anchor) if task else overview_url)
            for label, rank, count, task in places.ranked[run.pk]
        ],
        version_query=query,
        revisions=revisions,
    )


RUN_TEMPLATE = "leaderboard/run_detail.html"


def run_page_name(run_id: int) -> str:
    """The name a run's page is cached under (leaderboard.responses.page_keys)."""
    return f"run-{run_id}"


def run_page_with_standing(run_id: int) -> Page:
    """The run's page with where it stands on its version; its links keep that version."""
    page = run_pages.run_page(run_id)
    run = page.context["run"]
    page.context["standing"] = run_standing(run)
    page.context["version_query"] = version_query(run.dataset_id) if run.status == Run.Status.DONE else ""
    return page
