"""Stale-while-revalidate: after a finished run, one request rebuilds a page and the others get its latest copy."""

from __future__ import annotations

import threading

import pytest
from django.core.cache import cache

from leaderboard.cache import get_or_rebuild, latest_key

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
        first.append(get_or_rebuild("page:g2", latest_key("page"), slow_build, 300))

    worker = threading.Thread(target=visit)
    worker.start()
    assert started.wait(5)
    # The generation moved (key g2) and a rebuild is running: the second visitor does not wait for it.
    second = get_or_rebuild("page:g2", latest_key("page"), lambda: builds.append("second") or "second", 300)
    release.set()
    worker.join(5)
    assert second == "old page" and first == ["new page"] and builds == ["rebuild"]
    # Once rebuilt, everyone gets the new page from the cache.
    assert get_or_rebuild("page:g2", latest_key("page"), lambda: "unused", 300) == "new page"


def test_without_the_cache_every_request_builds_and_nothing_stale_is_served():
    cache.clear()
    get_or_rebuild("k", latest_key("x"), lambda: "old", 300)
    cache.add(latest_key("x") + ":rebuilding", 1)
    assert get_or_rebuild("k2", latest_key("x"), lambda: "fresh", 0) == "fresh"
