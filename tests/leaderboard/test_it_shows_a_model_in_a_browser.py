"""A model's page in Chromium: reached from the board, fits a phone, and leads on to a comparison."""

from __future__ import annotations

import pytest

from tests.browser import save_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_it_leads_from_the_board_to_a_model_and_on_to_its_neighbours(browser, live_server, published):
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True)
    phone = context.new_page()
    try:
        phone.goto(live_server.url + "/")
        phone.locator("#overview-table td.model a", has_text="BGE-M3").first.click()
        phone.wait_for_url("**/models/baai--bge-m3/", timeout=60_000)
        assert phone.locator("#model-runs-table tbody tr").count() >= 1
        assert phone.locator(".version-standing").count() >= 1
        # Nothing scrolls sideways on a phone: long ids wrap, wide tables scroll in their own box.
        assert phone.evaluate("() => document.documentElement.scrollWidth") <= 390
        save_screenshot(phone, "leaderboard-phone-model")
        phone.locator("a.compare-neighbours").first.click()
        phone.wait_for_url("**/compare/?**", timeout=60_000)
        assert phone.locator("#compare-table tbody tr[data-run]").count() >= 2
    finally:
        context.close()
