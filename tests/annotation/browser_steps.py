"""Small Playwright steps shared by the annotation browser tests."""

from __future__ import annotations

from tests.browser import settled
from tests.people import PASSWORD


def log_in(page, live_server, email: str, password: str = PASSWORD) -> None:
    # Straight back to the annotation pages, which (unlike the home page so far) declare no favicon.
    page.goto(f"{live_server.url}/accounts/login/?next=/annotate/")
    page.fill("input[name=login]", email)
    page.fill("input[name=password]", password)
    with settled(page):
        page.click("form.stack button[type=submit]")


def fonts_ready(page) -> None:
    """Wait until every web font the page asked for has loaded (or failed)."""
    page.evaluate("() => document.fonts.ready.then(() => true)")
