"""A phone's first screen leads with results; a laptop shows the whole overview for any one language.

At 390 × 844 px the first model row of the overview is on the first screen (the filters fold behind
one button that says what is chosen), the cross-lingual card shows its list, a compare page shows its
verdicts, and T2's chart does not draw every model's bars. At 1366 px the overview with any single
language selected fits its box (Mem. GB and Licence in view).
"""

from __future__ import annotations

import pytest

from evaluation.models import Run
from tests.browser import save_screenshot, settled, watch_errors
from tests.layout import LAPTOP, PHONE, overflowing_tables, page_width
from tests.leaderboard.figures import assert_figures_drawn

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=1)
    page = context.new_page()
    errors = watch_errors(page)
    yield page
    context.close()
    assert not errors, errors


def settle(page, url: str) -> None:
    with settled(page):
        page.goto(url)
    if page.locator("[data-figure]").count():
        assert_figures_drawn(page)


def test_the_first_model_row_is_on_the_first_screen(phone, live_server, published):
    settle(phone, live_server.url + "/")
    save_screenshot(phone, "phone-first-screen", full_page=False)
    first = phone.locator("#overview-table tbody tr[data-run]").first.bounding_box()
    assert first is not None and first["y"] + first["height"] <= PHONE["height"], first
    # The folded filters say what is chosen; one tap opens them, and they stay open under a chip's tap.
    toggle = phone.locator("button.filters-toggle")
    assert "nirdesha 1.0" in toggle.inner_text() and "all 12 translated languages" in toggle.inner_text()
    assert not phone.get_by_label("Hindi").is_visible()
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    phone.get_by_label("Hindi").check()
    phone.wait_for_url("**languages=hin**")
    phone.wait_for_selector("#page-body:not([aria-busy])")
    assert phone.get_by_label("Hindi").is_visible()
    assert "Hindi" in phone.locator("button.filters-toggle").inner_text()
    save_screenshot(phone, "phone-filters-open", full_page=False)


def test_the_cross_lingual_card_shows_its_list_on_a_phone(phone, live_server, published):
    bge = Run.objects.get(model__name="BAAI/bge-m3")
    settle(phone, f"{live_server.url}/crosslingual/?run={bge.pk}")
    listing = phone.locator("#heatmap-list")
    assert listing.is_visible()
    assert listing.locator("details").count() == 12
    assert "Hindi" in listing.inner_text()
    assert page_width(phone) <= PHONE["width"]
    save_screenshot(phone, "phone-crosslingual")


def test_the_compare_verdicts_are_in_view_on_a_phone(phone, live_server, published):
    runs = Run.objects.filter(dataset=published).order_by("pk")[:2]
    settle(phone, f"{live_server.url}/compare/?runs={runs[0].pk}&runs={runs[1].pk}")
    save_screenshot(phone, "phone-compare")
    verdict = phone.locator("#difference-table td.verdict").first
    # Sideways positions do not depend on how far down the page is scrolled.
    box = verdict.bounding_box()
    # In view without scrolling the table sideways, and naming a model or saying it cannot tell.
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
    assert phone.evaluate("() => document.querySelector('#difference-table').closest('.table-wrap').scrollLeft") == 0
    text = verdict.inner_text()
    assert "A is better" not in text and "B is better" not in text
    assert page_width(phone) <= PHONE["width"]


def test_t2_draws_the_top_models_bars_only_on_a_phone(phone, live_server, published):
    settle(phone, live_server.url + "/tasks/t2/")
    # Bars plotly actually drew: three models' twelve languages, not 8 × 12 = 96.
    drawn = phone.evaluate("() => document.querySelectorAll('[data-figure=figure-languages] .bars .point').length")
    assert 0 < drawn <= 36, drawn


def test_the_overview_fits_a_laptop_with_any_one_language(browser, live_server, published):
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    try:
        settle(page, live_server.url + "/")
        codes = page.eval_on_selector_all(
            "fieldset.languages input[name=languages]", "boxes => boxes.map(box => box.value)"
        )
        assert len(codes) == 12
        wide: dict[str, list[str]] = {}
        for code in codes:
            with settled(page):
                page.goto(f"{live_server.url}/?languages={code}")
            save_screenshot(page, f"laptop-overview-{code}")
            if found := overflowing_tables(page):
                wide[code] = found
            # Every column of the table in view, the model facts at its right end included.
            for heading in ("Mem. GB", "Licence"):
                cell = page.locator("#overview-table thead th", has_text=heading).bounding_box()
                if cell is None or cell["x"] + cell["width"] > LAPTOP["width"]:
                    wide.setdefault(code, []).append(f"{heading} at {cell}")
    finally:
        context.close()
    assert wide == {}, wide
