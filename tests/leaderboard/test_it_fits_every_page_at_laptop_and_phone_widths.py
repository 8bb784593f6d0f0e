"""Every page at 1366 px (a laptop) and 390 px (a phone), in Chromium, with a screenshot of each.

At 1366 px no table is wider than its box; on a phone the page never scrolls sideways (a wide table
scrolls inside its own box, its model column staying in view). Each model keeps one colour in every
chart of T1, T2 and compare. The screenshots land in test-artifacts/screenshots/ for people to look at.
"""

from __future__ import annotations

import pytest

from tests.browser import save_screenshot, settled
from tests.layout import LAPTOP, PHONE, elements_past_the_edge, overflowing_tables, page_width
from tests.leaderboard.figures import assert_figures_drawn
from tests.leaderboard.site_pages import open_context, open_page, visit_every_page

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def check(page, base: str, name: str, path: str, width: int) -> None:
    open_page(page, base, name, path)
    if width == LAPTOP["width"]:
        assert overflowing_tables(page) == [], f"{name}: tables wider than their box"
    else:
        assert page_width(page) <= width, f"{name} scrolls sideways: {elements_past_the_edge(page, width)}"
    save_screenshot(page, f"page-{name}-{width}")


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1366", "390"])
def test_it_fits_every_page(browser, live_server, site, viewport):
    phone = viewport is PHONE
    errors: list[str] = []
    with open_context(browser, viewport) as page:
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda exception: errors.append(str(exception)))
        visit_every_page(
            page, live_server.url, site, lambda name, path: check(page, live_server.url, name, path, viewport["width"])
        )
        # The walk ends on the rating page.
        guidelines_open = page.evaluate("() => document.getElementById('guidelines').open")
        hints_shown = page.locator(".keys-hint").first.is_visible()
        # On a phone the pair to rate comes first (guidelines folded) and keyboard hints are not shown.
        assert guidelines_open is (not phone) and hints_shown is (not phone)
    assert not errors, errors


def colours(page, figure: str) -> dict[str, str]:
    return page.evaluate(
        """id => Object.fromEntries(document.querySelector(`[data-figure="${id}"]`).data
            .map(trace => [trace.name, trace.marker.color]))""",
        figure,
    )


def test_it_gives_each_model_one_colour_in_every_chart(page, live_server, site):
    seen: dict[str, set[str]] = {}
    for path, figures in (
        ("/tasks/t1/", ["figure-languages"]),
        ("/tasks/t2/", ["figure-languages"]),
        (f"/compare/?{site['three']}", ["figure-bars", "figure-axes"]),
    ):
        page.goto(live_server.url + path)
        assert_figures_drawn(page)
        for figure in figures:
            for model, colour in colours(page, figure).items():
                seen.setdefault(model, set()).add(colour)
    assert len(seen) == 8
    assert all(len(found) == 1 for found in seen.values()), seen
    # Eight models, eight colours.
    assert len({next(iter(found)) for found in seen.values()}) == 8


def test_the_overview_keeps_model_and_overall_in_view_on_a_phone(browser, live_server, site):
    with open_context(browser, PHONE) as page:
        with settled(page):
            page.goto(live_server.url + "/")
        for scrolled in (False, True):
            if scrolled:
                # Scrolled to the last column, the numbers move under the model's cell.
                page.evaluate("() => { const box = document.querySelector('.table-wrap'); box.scrollLeft = 10000; }")
                assert page.evaluate("() => document.querySelector('.table-wrap').scrollLeft") > 0
            cells = page.evaluate(
                """() => [...document.querySelectorAll('#overview-table tbody td.model')].map(cell => {
                    const box = cell.getBoundingClientRect();
                    const shown = pseudo => getComputedStyle(cell, pseudo).content;
                    return [box.left, box.right, shown('::before'), shown('::after'), cell.dataset.overall];
                })"""
            )
            assert len(cells) >= 8
            for left, right, before, after, overall in cells:
                assert 0 <= left < right <= PHONE["width"], (scrolled, cells)
                assert before.startswith('"Rank ') and after == f'"Overall {overall}"'
        first = page.evaluate("() => document.querySelector('#overview-table tbody td.model').dataset.overall")
        # The first model row (a ranked board may open with a block's heading row, which has no cells).
        assert first == page.locator("#overview-table tbody tr[data-run] td:nth-child(5)").first.inner_text().split()[0]
        page.locator("#overview-table").scroll_into_view_if_needed()
        save_screenshot(page, "overview-phone-scrolled", full_page=False)


def test_a_chart_of_many_bars_starts_with_the_top_three_models_on_a_phone(browser, live_server, site):
    visible = """() => document.querySelector('[data-figure="figure-languages"]').data
        .filter(trace => trace.visible !== 'legendonly').length"""
    with open_context(browser, PHONE) as page:
        page.goto(live_server.url + "/tasks/t2/")
        assert_figures_drawn(page, expected_traces={"figure-languages": 8})
        assert page.evaluate(visible) == 3
        button = page.get_by_role("button", name="Show all 8 models")
        button.click()
        page.wait_for_function(visible.replace("() =>", "() => 8 ===", 1))
        assert not button.count()
    with open_context(browser, LAPTOP) as page:
        page.goto(live_server.url + "/tasks/t2/")
        assert_figures_drawn(page)
        assert page.evaluate(visible) == 8 and not page.get_by_role("button", name="Show all 8 models").count()
