"""Each model keeps one colour in every chart of T1, T2 and compare, and a phone keeps it in view: the
overview's model cell (with its rank and overall score) stays on screen while the row scrolls, and a
chart of many models opens on the top three.

That every page fits at 1366 and 390 px is tested page by page in test_it_fits_and_passes_axe_on_every_page.py.
"""

from __future__ import annotations

import pytest

from tests.browser import save_screenshot, settled
from tests.layout import LAPTOP, PHONE
from tests.leaderboard.figures import assert_figures_drawn
from tests.leaderboard.site_pages import open_context

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


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
