"""The pages most visitors open, built for the next cache generation before it moves.

When a run finishes, every cached page becomes stale at once (leaderboard.cache). Instead of leaving
the rebuild to the first visitors, the process that finished the run (the worker, or the `evaluate`
command) builds the overview of the run's benchmark version and of the default version, the task
pages of that version, `/api/leaderboard/` and the run's own page (where its submitter is sent) after
the run's transaction has committed (the results_changed signal is sent on commit), stores them under
the next generation's keys, and only then moves the generation: the first visitor after DONE finds the
new row already built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from django.conf import settings
from django.http import QueryDict

from evaluation.engine.registry import TASKS
from evaluation.models import Run
from leaderboard.api.views import leaderboard_body, leaderboard_key
from leaderboard.cache import build_then_bump, bump_generation, latest_of, store_rebuilt
from leaderboard.pages import overview as overview_pages
from leaderboard.pages import tasks as task_pages
from leaderboard.pages.selection import Page
from leaderboard.responses import canonical_params, page_keys, page_payload
from leaderboard.standing import (
    RUN_TEMPLATE,
    run_page_name,
    run_page_with_standing,
    store_board_places,
    version_query,
)

OVERVIEW_TEMPLATE = "leaderboard/overview.html"


def refresh_pages(sender: type, identifiers: Mapping[str, object]) -> int:
    """Move the page cache to a new generation for a change of results; the new generation.

    A finished run (sent with build_ahead by the process that finished it) has its version's most
    visited pages built first; any other change (a withdrawn or restored run, which happens in a web
    request, an import, a model's facts) only moves the generation, and its pages are rebuilt by the
    first visitor while the others get the latest copy (leaderboard.cache.get_or_rebuild).
    """
    dataset_id = changed_dataset(sender, identifiers) if identifiers.get("build_ahead") else None
    if dataset_id is None or not settings.PUBLIC_PAGE_CACHE_SECONDS:
        return bump_generation()
    return build_then_bump(lambda: build_most_visited(dataset_id, finished_run(identifiers)))


def finished_run(identifiers: Mapping[str, object]) -> int | None:
    """The id of the run whose finishing sent these identifiers, when one did."""
    run = identifiers.get("run")
    if isinstance(run, Run):
        return run.pk
    return run if isinstance(run, int) else None


def changed_dataset(sender: type, identifiers: Mapping[str, object]) -> int | None:
    """The benchmark version whose board a change of runs altered; None for any other change."""
    if sender is not Run:
        return None
    run = identifiers.get("run")
    if isinstance(run, Run):
        return run.dataset_id
    if isinstance(run, int):
        return Run.objects.filter(pk=run).values_list("dataset_id", flat=True).first()
    dataset = identifiers.get("dataset")
    return getattr(dataset, "pk", None)


def build_most_visited(dataset_id: int, run_id: int | None = None) -> list[str]:
    """Build and store the overview (of the default version and of this one), this version's task pages,
    the API leaderboard and the finished run's own page (`run_id`, the page its submitter is sent to)
    under the current keys (the next generation's, inside build_then_bump).

    When this version is the default one, its pages are built once, under the addresses without a
    version, which is where its visitors arrive and where its pages' links lead. The same pages asked
    for with `?dataset=` are left to the next request for one, which gets the latest copy while the page
    is rebuilt off the request, as after any other change (leaderboard.cache). Building them here as
    well built every page twice with the same figures: at 1,000 models that was 12 of the 27 s after
    which a finished run showed on the board, on a 2-core AMD EPYC with AVX2.

    Returns the pages built, as `name?query`.
    """
    default = _store_page("overview", OVERVIEW_TEMPLATE, overview_pages.overview_page, QueryDict())
    built = ["overview?"]
    default_dataset = default.context.get("dataset")
    if default_dataset is not None and default_dataset.pk == dataset_id:
        board = default.context["table"]
        task_query = QueryDict()
    else:
        task_query = QueryDict(version_query(dataset_id))
        board = _store_page("overview", OVERVIEW_TEMPLATE, overview_pages.overview_page, task_query).context["table"]
        built.append(f"overview?{task_query.urlencode()}")
    # Every run's place on this board, which each run page's standing reads (leaderboard.standing).
    store_board_places(dataset_id, board)
    for task, spec in TASKS.items():
        page = task_pages.task_page_of(spec)
        if page is None:
            continue
        name, template, build = page
        _store_page(name, template, lambda params, build=build, task=task: build(params, task), task_query)
        built.append(f"{name}?{task_query.urlencode()}")
    api_key = leaderboard_key("")
    # The API's board without parameters is the default overview built above (at 1,000 re-runs a second
    # build of it took 2 s of the time after which a finished run shows).
    api_body = leaderboard_body(QueryDict(), default)
    store_rebuilt(api_key, latest_of(api_key), api_body, settings.PUBLIC_PAGE_CACHE_SECONDS)
    built.append("api-leaderboard?")
    if run_id is not None:
        # The page a finished run's submitter is sent to (the e-mail and the submit page link it), so its
        # first visit is certain and early. Its standing reads the places stored with the board above.
        _store_page(run_page_name(run_id), RUN_TEMPLATE, lambda params: run_page_with_standing(run_id), QueryDict())
        built.append(f"{run_page_name(run_id)}?")
    return built


def _store_page(name: str, template: str, build: Callable[[QueryDict], Page], params: QueryDict) -> Page:
    """Build one page as a visitor's request with these parameters would, store it, and return it."""
    made: list[Page] = []

    def capture() -> Page:
        made.append(build(params))
        return made[0]

    payload = page_payload(capture, name, template, "html", params)
    store_rebuilt(*page_keys(name, "html", canonical_params(params)), payload, settings.PUBLIC_PAGE_CACHE_SECONDS)
    return made[0]
