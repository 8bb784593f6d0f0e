"""Headless Chromium driven by Playwright, for tests that open real pages.

Use the `page` fixture (defined in tests/conftest.py) together with pytest-django's `live_server`.
Every console error and failed page script fails the test; `save_screenshot()` keeps a PNG under
test-artifacts/screenshots/ for people to look at.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOT_DIR = ROOT / "test-artifacts" / "screenshots"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


# How long a page must have made no request before it counts as settled. Playwright's "networkidle"
# waits 500 ms; on a walk of the site's 36 pages that was 19 s of the walk's 34 s, for requests that
# start within a few milliseconds of the load event (the favicon, late fonts, the API docs' schema).
QUIET_SECONDS = 0.1


@contextmanager
def settled(page, *, quiet: float = QUIET_SECONDS, timeout: float = 60.0) -> Iterator[None]:
    """Run the block (a `goto`, a click that navigates or posts), then wait until the page has settled:
    every request it made answered, none started for `quiet` seconds, its document loaded and its web
    fonts ready (they change the layout that tests measure)."""
    from playwright.sync_api import Error as PlaywrightError

    in_flight: set = set()
    last_change = [time.monotonic()]

    def started(request) -> None:
        in_flight.add(request)
        last_change[0] = time.monotonic()

    def ended(request) -> None:
        in_flight.discard(request)
        last_change[0] = time.monotonic()

    listeners = {"request": started, "requestfinished": ended, "requestfailed": ended}
    for event, listener in listeners.items():
        page.on(event, listener)
    try:
        yield
        deadline = time.monotonic() + timeout
        while True:
            # Playwright hands events over while the page is waited on, so the loop waits in small steps.
            while in_flight or time.monotonic() - last_change[0] < quiet:
                if time.monotonic() > deadline:
                    unanswered = sorted(request.url for request in in_flight)
                    raise AssertionError(f"{page.url} had not settled after {timeout:.0f} s; unanswered: {unanswered}")
                page.wait_for_timeout(20)
            try:
                page.wait_for_load_state("load")
                page.evaluate("() => document.fonts.ready.then(() => true)")
                return
            except PlaywrightError as error:
                # A navigation the block set off (a form sent by a script) can begin after the quiet
                # spell on a loaded machine and replace the document under this check: the page has
                # not settled, so wait again for the new one.
                if "context was destroyed" not in str(error) or time.monotonic() > deadline:
                    raise
                last_change[0] = time.monotonic()
    finally:
        for event, listener in listeners.items():
            page.remove_listener(event, listener)


# Chromium aborts the requests it has in flight whenever any network interface of the machine changes,
# and reports each as a console error. The multi-host tests (tests/hosts.py) add and remove veth links
# while other test processes drive their browsers: a page that loaded its images just then failed its
# test with "net::ERR_NETWORK_CHANGED" for something the page had not done.
NETWORK_CHANGED = "net::ERR_NETWORK_CHANGED"


def watch_errors(page, *, page_errors: bool = True) -> list[str]:
    """The list that the page's console errors (and, with `page_errors`, its uncaught exceptions) are
    appended to while the test runs; requests cut by a change of the machine's network are not the page's."""
    errors: list[str] = []

    def console(message) -> None:
        if message.type == "error" and NETWORK_CHANGED not in message.text:
            errors.append(message.text)

    page.on("console", console)
    if page_errors:
        page.on("pageerror", lambda exception: errors.append(str(exception)))
    return errors


def chromium_path() -> str:
    path = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        raise RuntimeError("Debian's chromium is needed for browser tests: apt-get install chromium chromium-driver")
    return path


def save_screenshot(page, name: str, *, full_page: bool = True) -> Path:
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOT_DIR / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path
