"""The browser checks can fail: a figure with broken JSON is reported on the console and by the helper."""

from __future__ import annotations

import pytest

from tests.browser import watch_errors
from tests.leaderboard.figures import assert_figures_drawn

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGE = """<!doctype html><html><body>
<script id="good" type="application/json">{"data": [{"type": "bar", "x": ["a"], "y": [1]}], "layout": {}}</script>
<div class="plot" data-figure="good"></div>
<script id="broken" type="application/json">{"data": [{"type": "bar", "x": ["a"</script>
<div class="plot" data-figure="broken"></div>
<script src="%(static)svendor/plotly/plotly-cartesian.min.js"></script>
<script src="%(static)sleaderboard/figures.js"></script>
</body></html>"""


def open_page(browser, live_server, html: str):
    context = browser.new_context()
    page = context.new_page()
    errors = watch_errors(page)
    # Serve the test page from the live server's origin so that the site's own scripts load as usual.
    page.route(f"{live_server.url}/figure-test", lambda route: route.fulfill(body=html, content_type="text/html"))
    page.goto(f"{live_server.url}/figure-test")
    return context, page, errors


def test_it_reports_broken_figure_json(browser, live_server):
    context, page, errors = open_page(browser, live_server, PAGE % {"static": f"{live_server.url}/static/"})
    try:
        with pytest.raises(AssertionError, match=r"figures not drawn: \['broken'\]"):
            assert_figures_drawn(page)
        assert any("Figure broken could not be drawn: invalid figure JSON" in error for error in errors)
        assert page.locator('[data-figure="broken"]').inner_text() == "This chart could not be drawn."
    finally:
        context.close()


def test_it_passes_when_every_figure_draws(browser, live_server):
    html = PAGE.replace(
        '{"data": [{"type": "bar", "x": ["a"</script>', '{"data": [{"type": "bar", "x": ["b"], "y": [2]}]}</script>'
    )
    context, page, errors = open_page(browser, live_server, html % {"static": f"{live_server.url}/static/"})
    try:
        assert assert_figures_drawn(page, expected_traces={"good": 1, "broken": 1}) == {"good": 1, "broken": 1}
        with pytest.raises(AssertionError, match="good: 1 traces, expected 2"):
            assert_figures_drawn(page, expected_traces={"good": 2})
        assert errors == []
    finally:
        context.close()


def test_it_leaves_out_only_requests_cut_by_a_change_of_the_machines_network(browser, live_server):
    # Chromium's own message for such a request is imitated; a request refused for any other reason
    # (here a reset connection) must still count against the page.
    html = """<!doctype html><html><body><img src="/missing.png" alt=""><script src="/static/leaderboard/figures.js">
    </script></body></html>"""
    context = browser.new_context()
    page = context.new_page()
    errors = watch_errors(page)
    page.route(f"{live_server.url}/missing.png", lambda route: route.abort("connectionreset"))
    page.route(f"{live_server.url}/cut", lambda route: route.fulfill(body=html, content_type="text/html"))
    try:
        page.goto(f"{live_server.url}/cut")
        page.evaluate("() => console.error('Failed to load resource: net::ERR_NETWORK_CHANGED')")
        page.evaluate("() => console.error('a fault of the page itself')")
        # Console messages reach the test asynchronously: wait (generously, for a loaded machine) until
        # the two that must count have arrived; the one that must not would have come before the second.
        for _ in range(100):
            if "a fault of the page itself" in errors and any("ERR_CONNECTION_RESET" in error for error in errors):
                break
            page.wait_for_timeout(100)
        assert "a fault of the page itself" in errors
        assert any("ERR_CONNECTION_RESET" in error for error in errors), errors
        assert not any("ERR_NETWORK_CHANGED" in error for error in errors), errors
    finally:
        context.close()
