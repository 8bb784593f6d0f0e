"""axe-core finds nothing serious or critical on any page, at 1366 px and at 390 px.

Every page of the navigation (tests/leaderboard/site_pages.py lists them), a run page, error pages,
every dataset page and the annotation pages are checked with the axe-core build vendored under
tests/assets/axe-core/ (from the npm registry; nothing is fetched while the test runs).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.layout import LAPTOP, PHONE
from tests.leaderboard.site_pages import (
    RESEARCHER,
    SIGNED_IN_PAGES,
    log_in,
    log_out,
    open_page,
    open_rating_page,
    public_pages,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).resolve().parent.parent / "assets" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


def serious_violations(page) -> list[str]:
    """axe-core's serious and critical findings on the page as it is now, one line per element."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    violations = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations")
    return [
        f"{violation['id']} ({violation['impact']}): {node['target']} {node['failureSummary'][:160]!r}"
        for violation in violations
        if violation["impact"] in SERIOUS
        for node in violation["nodes"]
    ]


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1366", "390"])
def test_it_has_no_serious_accessibility_violations(browser, live_server, site, viewport):
    phone = viewport is PHONE
    # The site's Content-Security-Policy forbids inline scripts, axe's among them; the audit is let through.
    context = browser.new_context(
        viewport=viewport, is_mobile=phone, has_touch=phone, device_scale_factor=1, bypass_csp=True
    )
    page = context.new_page()
    found: dict[str, list[str]] = {}

    def audit(name: str, path: str) -> None:
        open_page(page, live_server.url, name, path)
        if violations := serious_violations(page):
            found[name] = violations

    try:
        for name, path in public_pages(site):
            audit(name, path)
        log_in(page, live_server.url, RESEARCHER)
        for name, path in SIGNED_IN_PAGES:
            audit(name, path)
        log_out(page, live_server.url)
        audit("rate", open_rating_page(page, live_server.url))
        audit("annotate-annotator", "/annotate/")
    finally:
        context.close()
    assert found == {}, "\n".join(f"{name}: {line}" for name, lines in found.items() for line in lines)


def test_the_audit_catches_a_serious_violation(browser, live_server, db):
    # The check itself must be able to fail: a button with no name is a critical finding.
    context = browser.new_context(bypass_csp=True)
    page = context.new_page()
    try:
        page.goto(live_server.url + "/datasets/")
        page.evaluate("() => document.querySelector('main').append(document.createElement('button'))")
        assert any(line.startswith("button-name") for line in serious_violations(page))
    finally:
        context.close()
