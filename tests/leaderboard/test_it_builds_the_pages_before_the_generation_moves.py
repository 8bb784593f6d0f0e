"""When a run finishes, its pages are built for the next generation before it moves: no visitor waits."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.http import QueryDict
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from evaluation.models import Run
from leaderboard import standing
from leaderboard.api import views as api_views
from leaderboard.api.views import leaderboard_body, leaderboard_key
from leaderboard.cache import current_generation
from leaderboard.pages import overview, run, tasks
from leaderboard.responses import page_keys, page_payload
from leaderboard.standing import RUN_TEMPLATE, run_page_with_standing, version_query
from tests.factories import make_run
from tests.validation import create_validation_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture
def page_builds(monkeypatch) -> list[str]:
    """Every build of an overview, task or run page, whoever asks for it (the views look the builders up)."""
    builds: list[str] = []
    every_builder = (
        (overview, "overview_page"),
        (tasks, "task_page"),
        (tasks, "classification_page"),
        (run, "run_page"),
        # A run page's standing and the API's board read it through their own references to the builder.
        (standing, "overview_page"),
        (api_views, "overview_page"),
    )
    for module, name in every_builder:
        original = getattr(module, name)

        def counted(*args, original=original, name=name, **kwargs):
            builds.append(name)
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)
    return builds


def test_a_finished_runs_overview_is_in_the_cache_before_any_request(
    client, page_builds, django_capture_on_commit_callbacks
):
    cache.clear()
    dataset = create_validation_dataset(("Hindi", "Tamil"), limit=20)
    earlier = make_run(dataset, "org/earlier", display_name="Earlier model", languages=("hin", "tam"))
    assert b"Earlier model" in client.get(reverse("leaderboard:overview")).content
    before = current_generation()
    page_builds.clear()

    with django_capture_on_commit_callbacks(execute=True):
        call_command("evaluate", "--model", "bm25", "--dataset", dataset.slug, "--tasks", "t1")

    finished = Run.objects.get(model__name="bm25")
    assert finished.status == Run.Status.DONE
    assert current_generation() == before + 1
    # Built under the new generation by the process that finished the run, before any request.
    label = str(finished.model).encode()
    stored = cache.get(page_keys("overview", "html", "")[0])
    assert stored is not None and label.decode() in stored["body"]
    # The default version's pages are built once, where its visitors and its links go: not again with
    # its version in the address.
    assert cache.get(page_keys("overview", "html", version_query(dataset.pk))[0]) is None
    assert cache.get(page_keys("task-t1", "html", "")[0]) is not None
    assert label in cache.get(leaderboard_key(""))
    # The API's board comes from the overview built for the page (one build, not two), as a request builds it.
    assert page_builds.count("overview_page") == 1
    assert cache.get(leaderboard_key("")) == leaderboard_body(QueryDict())
    # And the finished run's own page, where its submitter is sent, with its place on the board.
    run_page = cache.get(page_keys(f"run-{finished.pk}", "html", "")[0])
    assert run_page is not None and 'id="standing"' in run_page["body"]
    # Its standing was read off the board built just before it: the page is the one a visitor would build.
    fresh = page_payload(lambda: run_page_with_standing(finished.pk), "run", RUN_TEMPLATE, "html", QueryDict())
    assert fresh["body"] == run_page["body"]

    page_builds.clear()
    with CaptureQueriesContext(connection) as queries:
        overview = client.get(reverse("leaderboard:overview"))
        api = client.get("/api/leaderboard/")
        task = client.get(reverse("leaderboard:task", args=["t1"]))
    own = client.get(finished.get_absolute_url())
    # The first visitors after DONE see the new row, and nobody built a page for them.
    assert label in overview.content and b"Earlier model" in overview.content
    assert label in api.content and label in task.content
    assert own.status_code == 200 and b'id="standing"' in own.content
    assert page_builds == []
    # What is left per request is the page's frame (the footer's last-updated date): a handful of queries.
    assert len(queries) <= 6, [query["sql"] for query in queries]
    # Another run's page, never visited: it is built for its first visitor, but its place on the board
    # comes from the places stored with the board, not from another build of the overview.
    other = client.get(earlier.get_absolute_url())
    assert other.status_code == 200 and b'id="standing"' in other.content
    assert "overview_page" not in page_builds
    # The version's own address is built by its first request, with the same board.
    assert label in client.get(f"{reverse('leaderboard:overview')}?{version_query(dataset.pk)}").content


def test_a_run_on_another_version_has_that_versions_pages_built_under_its_address(
    client, django_capture_on_commit_callbacks
):
    cache.clear()
    older = create_validation_dataset(("Hindi",), version="older", limit=10)
    newer = create_validation_dataset(("Hindi",), version="newer", limit=10)
    make_run(newer, "org/on-the-default", display_name="Default version model", languages=("hin",))
    make_run(older, "org/on-the-older", display_name="Older version model", languages=("hin",))
    assert b"Default version model" in client.get(reverse("leaderboard:overview")).content

    with django_capture_on_commit_callbacks(execute=True):
        call_command("evaluate", "--model", "bm25", "--dataset", older.slug, "--tasks", "t1")

    label = str(Run.objects.get(model__name="bm25").model)
    query = version_query(older.pk)
    for name in ("overview", "task-t1"):
        stored = cache.get(page_keys(name, "html", query)[0])
        assert stored is not None and label in stored["body"], name
    # The default version's board is built too (its version list counts the finished run's version).
    default = cache.get(page_keys("overview", "html", "")[0])
    assert default is not None and "Default version model" in default["body"] and label not in default["body"]


def test_a_failed_build_still_moves_the_generation(monkeypatch, client, django_capture_on_commit_callbacks):
    cache.clear()
    dataset = create_validation_dataset(("Hindi",), limit=20)
    before = current_generation()

    def broken(*args, **kwargs):
        raise RuntimeError("a page that cannot be built")

    monkeypatch.setattr("leaderboard.refresh.build_most_visited", broken)
    with django_capture_on_commit_callbacks(execute=True):
        call_command("evaluate", "--model", "bm25", "--dataset", dataset.slug, "--tasks", "t1")

    # The visitors then build the page themselves, and see the run.
    assert current_generation() == before + 1
    assert str(Run.objects.get().model).encode() in client.get(reverse("leaderboard:overview")).content
