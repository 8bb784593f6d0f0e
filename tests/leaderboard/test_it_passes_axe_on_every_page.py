"""axe-core finds nothing serious or critical on any page, at 1366 px and at 390 px.

Every page of the navigation (tests/leaderboard/site_pages.py lists them), a run page, error pages,
every dataset page and the annotation pages are checked with the axe-core build vendored under
tests/assets/axe-core/ (from the npm registry; nothing is fetched while the test runs).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.layout import LAPTOP, PHONE
from tests.leaderboard.site_pages import open_context, open_page, visit_every_page

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
    found: dict[str, list[str]] = {}
    # The site's Content-Security-Policy forbids inline scripts, axe's among them; the audit is let through.
    with open_context(browser, viewport, bypass_csp=True) as page:

        def audit(name: str, path: str) -> None:
            open_page(page, live_server.url, name, path)
            if violations := serious_violations(page):
                found[name] = violations

        visit_every_page(page, live_server.url, site, audit)
        # The walk ends signed in as the annotator, whose annotation page differs from a researcher's.
        audit("annotate-annotator", "/annotate/")
    assert found == {}, "\n".join(f"{name}: {line}" for name, lines in found.items() for line in lines)


def test_the_audit_catches_a_serious_violation(browser, live_server, db):
    # The check itself must be able to fail: a button with no name is a critical finding.
    with open_context(browser, LAPTOP, bypass_csp=True) as page:
        page.goto(live_server.url + "/datasets/")
        page.evaluate("() => document.querySelector('main').append(document.createElement('button'))")
        assert any(line.startswith("button-name") for line in serious_violations(page))
