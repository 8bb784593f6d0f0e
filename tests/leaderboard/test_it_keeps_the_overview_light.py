"""The overview, with its chart, transfers at most 1.5 MB: a partial plotly bundle, served compressed.

Static files go through whitenoise here, as in production (the usual live server hands them out
itself, uncompressed): a server thread without that static handler, whitenoise reading the static
folders, Chromium asking for gzip and brotli as it always does. What counts is what crossed the wire:
each response's encoded body and headers, as Chromium reports them.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.test.testcases import LiveServerThread

from tests.browser import save_screenshot
from tests.leaderboard.figures import assert_figures_drawn
from tests.workers import ROOT, database_url_for_test_db

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
    # The overall figure (one trace) and the performance-against-size chart (a trace per sized model).
    figures = assert_figures_drawn(page)
    assert figures["figure-overall"] == 1 and figures.get("figure-size", 0) >= 1
    save_screenshot(page, "leaderboard-overview-light")

    plotly = next(url for url in transferred if "plotly" in url)
    assert plotly.endswith("/static/vendor/plotly/plotly-cartesian.min.js")
    assert encodings[plotly] == "gzip"
    # The gzipped bundle is about a third of the 1.5 MB file.
    assert transferred[plotly] < 600_000
    total = sum(transferred.values())
    print(f"overview: {len(transferred)} requests, {total:,} bytes transferred (plotly {transferred[plotly]:,})")
    assert total <= LIMIT_BYTES, sorted(transferred.items(), key=lambda item: -item[1])[:5]


def procfile_command(name: str) -> str:
    """The command of one process in Procfile.local, the file `./scripts/start` runs."""
    line = next(line for line in (ROOT / "Procfile.local").read_text().splitlines() if line.startswith(f"{name}:"))
    return line.split(":", 1)[1].strip()


@pytest.fixture
def started_site(published, tmp_path):
    """The web process exactly as `./scripts/start` runs it (gunicorn, DEBUG off, collected static files)."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DATABASE_URL": database_url_for_test_db(),
        "STATIC_ROOT": str(tmp_path / "static"),
        # Its own var/ folder: page cache, broker folder and media of this test only.
        "NIRDESHA_VAR_DIR": str(tmp_path / "var"),
        "PORT": str(free_port()),
    }
    collect = [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"]
    subprocess.run(collect, cwd=ROOT, env=env, check=True, timeout=300)
    log = open(tmp_path / "web.log", "w")  # noqa: SIM115 - closed below.
    server = subprocess.Popen(["bash", "-c", procfile_command("web")], cwd=ROOT, env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{env['PORT']}"
    try:
        wait_until_serving(url, server, tmp_path / "web.log")
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_serving(url: str, server: subprocess.Popen, log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.poll() is None, log.read_text()
        try:
            urllib.request.urlopen(url + "/healthz", timeout=30)
            return
        except urllib.error.HTTPError:
            # An answer, if not a healthy one (the broker folder may not exist yet): it serves.
            return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"gunicorn did not answer in {timeout} s:\n{log.read_text()}")


def test_the_overview_served_as_scripts_start_serves_it_transfers_at_most_1_2_megabytes(page, started_site):
    transferred: dict[str, int] = {}
    encodings: dict[str, str] = {}

    def finished(request) -> None:
        sizes = request.sizes()
        transferred[request.url] = sizes["responseBodySize"] + sizes["responseHeadersSize"]
        response = request.response()
        encodings[request.url] = (response.headers.get("content-encoding") or "") if response else ""

    page.on("requestfinished", finished)
    response = page.goto(started_site + "/", wait_until="networkidle")
    assert response.headers["server"].startswith("gunicorn")
    # The overall figure (one trace) and the performance-against-size chart (a trace per sized model).
    figures = assert_figures_drawn(page)
    assert figures["figure-overall"] == 1 and figures.get("figure-size", 0) >= 1
    static = [url for url in transferred if "/static/" in url]
    assert static and all(encodings[url] in ("gzip", "br") for url in static if url.endswith((".js", ".css")))
    total = sum(transferred.values())
    print(f"overview from ./scripts/start's web process: {len(transferred)} requests, {total:,} bytes on the wire")
    assert total <= 1_200_000, sorted(transferred.items(), key=lambda item: -item[1])[:5]
