"""Every page at 1366 px (a laptop) and 390 px (a phone), in Chromium: it fits, and axe-core finds
nothing serious or critical on it. A screenshot of each lands in test-artifacts/screenshots/.

Every page of the navigation (tests/leaderboard/site_pages.py lists them), a run page, error pages,
every dataset page and the annotation pages are walked once per width, and each page is checked for
both on the one visit: at 1366 px no table is wider than its box; on a phone the page never scrolls
sideways (a wide table scrolls inside its own box, its model column staying in view); axe-core
(tests/leaderboard/accessibility.py) reports no serious or critical violation. One walk for both
checks, rather than one each, saves a walk of 36 pages and a build of the site per width: on a 2-core
AVX2 EPYC the two walks apart took 37 + 27 s at 1366 px and 37 + 23 s at 390 px, the one walk 58 and 52 s.
"""

from __future__ import annotations

import pytest

from tests.browser import save_screenshot, watch_errors
from tests.layout import LAPTOP, PHONE, elements_past_the_edge, overflowing_tables, page_width
from tests.leaderboard.accessibility import serious_violations
from tests.leaderboard.site_pages import open_context, open_page, visit_every_page

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def layout_faults(page, name: str, width: int) -> list[str]:
    """What keeps the open page from fitting `width`, one line per fault."""
    if width == LAPTOP["width"]:
        return [f"{name}: a table wider than its box: {table}" for table in overflowing_tables(page)]
    if page_width(page) > width:
        return [f"{name} scrolls sideways: {elements_past_the_edge(page, width)}"]
    return []


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1366", "390"])
def test_every_page_fits_and_passes_axe(browser, live_server, site, viewport):
    width = viewport["width"]
    phone = viewport is PHONE
    misfits: list[str] = []
    violations: dict[str, list[str]] = {}
    with open_context(browser, viewport) as page:
        errors = watch_errors(page)

        def check(name: str, path: str) -> None:
            open_page(page, live_server.url, name, path)
            misfits.extend(layout_faults(page, name, width))
            save_screenshot(page, f"page-{name}-{width}")
            # After the screenshot: the audit leaves the page as it was, but people look at the page as served.
            if found := serious_violations(page):
                violations[name] = found

        visit_every_page(page, live_server.url, site, check)
        # The walk ends on the rating page.
        guidelines_open = page.evaluate("() => document.getElementById('guidelines').open")
        hints_shown = page.locator(".keys-hint").first.is_visible()
        # The walk ends signed in as the annotator, whose annotation page differs from a researcher's.
        check("annotate-annotator", "/annotate/")
    # On a phone the pair to rate comes first (guidelines folded) and keyboard hints are not shown.
    assert guidelines_open is (not phone) and hints_shown is (not phone)
    assert misfits == [], "\n".join(misfits)
    assert violations == {}, "\n".join(f"{name}: {line}" for name, lines in violations.items() for line in lines)
    assert not errors, errors


def test_the_audit_catches_a_serious_violation(browser, live_server, db):
    # The check itself must be able to fail: a button with no name is a critical finding.
    with open_context(browser, LAPTOP) as page:
        page.goto(live_server.url + "/datasets/")
        page.evaluate("() => document.querySelector('main').append(document.createElement('button'))")
        assert any(line.startswith("button-name") for line in serious_violations(page))


def test_the_layout_check_catches_a_page_that_scrolls_sideways(browser, live_server, db):
    # The check itself must be able to fail: an element wider than the phone makes the page scroll.
    with open_context(browser, PHONE) as page:
        page.goto(live_server.url + "/datasets/")
        assert layout_faults(page, "datasets", PHONE["width"]) == []
        page.evaluate("() => { const wide = document.createElement('div'); wide.style.width = '900px';"
                      " wide.textContent = 'wide'; document.querySelector('main').append(wide); }")  # fmt: skip
        assert layout_faults(page, "datasets", PHONE["width"]) != []
