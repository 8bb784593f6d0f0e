"""Stale-while-revalidate: after a change of results, a page is rebuilt once while its visitors get its latest copy.

In production the rebuild runs on the web process's revalidation thread and no visitor waits for it;
the test settings rebuild inline (a test's rows are seen by its own connection only), which the first
tests here use, and the background path is tested with the setting switched."""

from __future__ import annotations

import threading

import pytest
from django.core.cache import cache
from django.test import override_settings
from django.urls import reverse

from leaderboard.cache import bump_generation, get_or_rebuild, latest_key, wait_for_revalidations
from leaderboard.responses import page_keys
from tests.factories import make_dataset, make_run

pytestmark = pytest.mark.django_db


def test_a_second_visitor_gets_the_latest_copy_while_the_first_rebuilds():
    cache.clear()
    get_or_rebuild("page:g1", latest_key("page"), lambda: "old page", 300)
    started, release = threading.Event(), threading.Event()
    builds: list[str] = []

    def slow_build() -> str:
        builds.append("rebuild")
        started.set()
        release.wait(5)
        return "new page"

    first: list[str] = []

    def visit() -> None:
        first.append(get_or_rebuild("page:g2", latest_key("page"), slow_build, 300).value)

    worker = threading.Thread(target=visit)
    worker.start()
    assert started.wait(5)
    # The generation moved (key g2) and a rebuild is running: the second visitor does not wait for it.
    second = get_or_rebuild("page:g2", latest_key("page"), lambda: builds.append("second") or "second", 300).value
    release.set()
    worker.join(5)
    assert second == "old page" and first == ["new page"] and builds == ["rebuild"]
    # Once rebuilt, everyone gets the new page from the cache.
    assert get_or_rebuild("page:g2", latest_key("page"), lambda: "unused", 300).value == "new page"


def test_without_the_cache_every_request_builds_and_nothing_stale_is_served():
    cache.clear()
    get_or_rebuild("k", latest_key("x"), lambda: "old", 300)
    cache.add(latest_key("x") + ":rebuilding", 1)
    assert get_or_rebuild("k2", latest_key("x"), lambda: "fresh", 0).value == "fresh"


@override_settings(PUBLIC_PAGE_REVALIDATE_INLINE=False)
def test_no_visitor_waits_the_page_is_rebuilt_once_off_the_request():
    cache.clear()
    get_or_rebuild("page:g1", latest_key("page"), lambda: "old page", 300)
    release = threading.Event()
    builds: list[str] = []

    def slow_build() -> str:
        builds.append("rebuild")
        assert release.wait(30)
        return "new page"

    # The first visitor after the move gets the latest copy at once, although the rebuild it started
    # cannot finish until released below; so does the next one, without starting another.
    first = get_or_rebuild("page:g2", latest_key("page"), slow_build, 300)
    second = get_or_rebuild("page:g2", latest_key("page"), slow_build, 300)
    assert (first.value, first.fresh) == ("old page", False)
    assert (second.value, second.fresh) == ("old page", False)
    release.set()
    assert wait_for_revalidations(30)
    assert builds == ["rebuild"]
    fresh = get_or_rebuild("page:g2", latest_key("page"), lambda: "unused", 300)
    assert (fresh.value, fresh.fresh) == ("new page", True)


@override_settings(PUBLIC_PAGE_REVALIDATE_INLINE=False)
def test_a_failed_background_rebuild_leaves_the_latest_copy_and_is_tried_again():
    cache.clear()
    get_or_rebuild("page:g1", latest_key("page"), lambda: "old page", 300)

    def failing() -> str:
        raise RuntimeError("the database went away")

    assert get_or_rebuild("page:g2", latest_key("page"), failing, 300).value == "old page"
    assert wait_for_revalidations(30)
    # The lock went with the failure: the next visitor still gets the copy and starts a new rebuild.
    assert get_or_rebuild("page:g2", latest_key("page"), lambda: "new page", 300).value == "old page"
    assert wait_for_revalidations(30)
    assert get_or_rebuild("page:g2", latest_key("page"), lambda: "unused", 300).value == "new page"


def test_a_latest_copy_served_during_a_rebuild_is_never_kept_as_the_new_generations_page(client):
    url = reverse("leaderboard:overview")
    dataset = make_dataset()
    make_run(dataset, "org/alpha", display_name="Alpha")
    assert b"Alpha" in client.get(url).content
    make_run(dataset, "org/beta", display_name="Beta")
    bump_generation()
    # Another request is rebuilding the overview: this visitor gets the latest copy, without Beta.
    _, latest = page_keys("overview", "html", "")
    cache.add(f"{latest}:rebuilding", 1)
    assert b"Beta" not in client.get(url).content
    cache.delete(f"{latest}:rebuilding")
    # That copy was not stored as the new generation's whole page: the next visitor gets the new board.
    assert b"Beta" in client.get(url).content
