"""The overview, with its chart, transfers at most 1.5 MB: a partial plotly bundle, served compressed.

Static files go through whitenoise here, as in production (the usual live server hands them out
itself, uncompressed): a server thread without that static handler, whitenoise reading the static
folders, Chromium asking for gzip and brotli as it always does. What counts is what crossed the wire:
each response's encoded body and headers, as Chromium reports them.
"""

from __future__ import annotations

import pytest
from django.test.testcases import LiveServerThread

from tests.browser import save_screenshot
from tests.leaderboard.figures import assert_figures_drawn

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LIMIT_BYTES = 1_500_000


@pytest.fixture
def whitenoise_server(settings, transactional_db):
    settings.WHITENOISE_USE_FINDERS = True
    settings.WHITENOISE_AUTOREFRESH = True
    # No static handler in front of Django: every request, static ones included, meets whitenoise.
    thread = LiveServerThread("localhost", lambda application: application, port=0)
    thread.daemon = True
    thread.start()
    thread.is_ready.wait()
    if thread.error:
        raise thread.error
    yield f"http://localhost:{thread.port}"
    thread.terminate()


def test_it_transfers_the_overview_in_at_most_one_and_a_half_megabytes(page, whitenoise_server, published):
    transferred: dict[str, int] = {}
    encodings: dict[str, str] = {}

    def finished(request) -> None:
        sizes = request.sizes()
        transferred[request.url] = sizes["responseBodySize"] + sizes["responseHeadersSize"]
        response = request.response()
        encodings[request.url] = (response.headers.get("content-encoding") or "") if response else ""

    page.on("requestfinished", finished)
    page.goto(whitenoise_server + "/", wait_until="networkidle")
    assert assert_figures_drawn(page) == {"figure-overall": 1}
    save_screenshot(page, "leaderboard-overview-light")

    plotly = next(url for url in transferred if "plotly" in url)
    assert plotly.endswith("/static/vendor/plotly/plotly-cartesian.min.js")
    assert encodings[plotly] == "gzip"
    # The gzipped bundle is about a third of the 1.5 MB file.
    assert transferred[plotly] < 600_000
    total = sum(transferred.values())
    print(f"overview: {len(transferred)} requests, {total:,} bytes transferred (plotly {transferred[plotly]:,})")
    assert total <= LIMIT_BYTES, sorted(transferred.items(), key=lambda item: -item[1])[:5]
