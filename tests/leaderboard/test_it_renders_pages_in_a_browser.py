"""Every public page in headless Chromium: figures drawn, filters applied, sorting, a CSV download, a phone."""

from __future__ import annotations

import csv

import pytest

from evaluation.models import Run
from tests.browser import save_screenshot, watch_errors
from tests.leaderboard.figures import assert_figures_drawn

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def visit(page, live_server, path: str, name: str, **expected) -> dict:
    page.goto(live_server.url + path)
    traces = assert_figures_drawn(page, expected_traces=expected or None)
    save_screenshot(page, name)
    return traces


def test_it_opens_every_page_and_draws_the_figures(page, live_server, published, validation_with_bins):
    visit(page, live_server, "/", "leaderboard-overview", **{"figure-overall": 1})
    # Eight models in two blocks, each under its heading row (ranked, then declaring fewer languages).
    assert page.locator("#overview-table tbody tr[data-run]").count() == 8
    assert page.locator("#overview-table tbody tr.block-head").count() == 2
    first = page.locator("#overview-table tbody tr[data-run]").first
    assert first.locator("td.model").inner_text() == "E5-Large-Instruct"
    for task in ("t1", "t2", "t3", "t3x"):
        visit(page, live_server, f"/tasks/{task}/", f"leaderboard-task-{task}", **{"figure-languages": 8})
        assert page.locator("table.task-table").count() == 3

    visit(page, live_server, "/tasks/t4/", "leaderboard-t4-published")
    assert page.get_by_text("No run on this benchmark version has reliability bins").is_visible()
    traces = visit(page, live_server, f"/tasks/t4/?dataset={validation_with_bins.pk}", "leaderboard-t4-reliability")
    # One diagram per language the run has bins for (all five), each with diagonal, before and after.
    assert len(traces) == 5 and set(traces.values()) == {3}

    bge = Run.objects.get(model__name="BAAI/bge-m3")
    traces = visit(page, live_server, f"/crosslingual/?run={bge.pk}", "leaderboard-crosslingual")
    assert traces == {"figure-heatmap": 1, "figure-asymmetry": 1}
    cells = page.evaluate("() => document.querySelector('[data-figure=figure-heatmap]').data[0].z.length")
    assert cells == 12

    ids = "&".join(f"runs={run.pk}" for run in Run.objects.filter(dataset__name="nirdesha").order_by("pk")[:3])
    visit(page, live_server, f"/compare/?{ids}", "leaderboard-compare", **{"figure-bars": 3, "figure-axes": 15})

    alpha = Run.objects.get(model__name="org/alpha")
    visit(page, live_server, f"/results/{alpha.pk}/", "leaderboard-run", **{"figure-run-bars": 2})
    assert page.locator("#tokenizer-coverage tbody tr").count() == 2
    visit(page, live_server, f"/results/{bge.pk}/", "leaderboard-run-published")
    visit(page, live_server, "/datasets/", "leaderboard-datasets")
    visit(page, live_server, f"/datasets/{validation_with_bins.pk}/", "leaderboard-dataset")
    urdu = page.locator('span[lang="ur"]')
    assert urdu.evaluate("e => getComputedStyle(e).direction") == "rtl"
    assert "Nastaliq" in urdu.evaluate("e => getComputedStyle(e).fontFamily")


def test_it_reaverages_at_once_when_a_language_chip_is_clicked(page, live_server, published):
    page.goto(live_server.url + "/")
    assert_figures_drawn(page)
    before = page.locator("#overview-table td.model").all_inner_texts()
    requests: list[tuple[str, str | None]] = []

    def sent(request) -> None:
        # The browser may ask for the favicon again after a history change; that is not the page's doing.
        if not request.url.endswith("/favicon.svg"):
            requests.append((request.url, request.headers.get("x-page-fragment")))

    page.on("request", sent)
    # One click on a chip: no Apply button, no full reload, the state in the URL.
    assert not page.get_by_role("button", name="Apply").is_visible()
    page.get_by_label("Hindi").check()
    page.wait_for_url("**languages=hin**")
    page.wait_for_selector("#page-body:not([aria-busy])")
    assert_figures_drawn(page)
    after = page.locator("#overview-table td.model").all_inner_texts()
    assert after != before and after[2].startswith("paraphrase-multilingual-mpnet-base-v2")
    assert "now: Hindi" in page.locator("fieldset.languages legend").inner_text()
    # Only the page's body was fetched: no stylesheet, script or plotly bundle again.
    assert requests == [(f"{live_server.url}/?languages=hin", "1")]
    save_screenshot(page, "leaderboard-overview-hindi")

    # Clicking a header sorts by that column, keeping the filter, and marks it with an arrow.
    page.get_by_role("link", name="T4 AUROC").click()
    page.wait_for_url("**sort=-t4_auroc**")
    page.wait_for_selector("#page-body:not([aria-busy])")
    assert "languages=hin" in page.url
    assert "▼" in page.locator("#overview-table th", has_text="T4 AUROC").inner_text()
    headers = page.locator("#overview-table thead tr").last.locator("th").all_inner_texts()
    column = next(index for index, text in enumerate(headers, start=1) if "T4 AUROC" in text)
    values = [
        float(text.split()[0])
        for text in page.locator(f"#overview-table tbody tr td:nth-child({column})").all_inner_texts()
        if text.strip() and text.split()[0].replace(".", "", 1).isdigit()
    ]
    assert len(values) >= 3
    assert values == sorted(values, reverse=True)
    # Back restores the previous state from the URL.
    page.go_back()
    page.wait_for_url("**/?languages=hin")
    page.wait_for_selector("#page-body:not([aria-busy])")
    assert page.locator("#overview-table td.model").all_inner_texts() == after


def test_it_searches_once_when_enter_follows_typing(page, live_server, published):
    page.goto(live_server.url + "/")
    fragments: list[str] = []
    page.on("request", lambda request: request.headers.get("x-page-fragment") and fragments.append(request.url))
    # Typing starts a short wait before the search; Enter searches at once. A search still waiting
    # afterwards would load the board again a moment later, over whatever the visitor did meanwhile
    # (a link clicked on the result was taken back to the search).
    page.fill("input[name=q]", "mpnet")
    page.press("input[name=q]", "Enter")
    page.wait_for_url("**q=mpnet**")
    page.wait_for_selector("#page-body:not([aria-busy])")
    page.wait_for_timeout(1000)  # four times the typing wait in filters.js
    assert fragments == [f"{live_server.url}/?q=mpnet"]


def test_it_does_not_search_again_when_enter_comes_after_the_typed_search(page, live_server, published):
    """On a loaded machine (or with a slow typist) the typed search has started before Enter arrives."""
    page.goto(live_server.url + "/")
    fragments: list[str] = []
    page.on("request", lambda request: request.headers.get("x-page-fragment") and fragments.append(request.url))
    page.fill("input[name=q]", "mpnet")
    page.wait_for_url("**q=mpnet**")
    page.wait_for_selector("#page-body:not([aria-busy])")
    shown = page.locator("#overview-table td.model").all_inner_texts()
    page.press("input[name=q]", "Enter")
    page.wait_for_timeout(1000)
    assert fragments == [f"{live_server.url}/?q=mpnet"]
    # A different query, or going back, still loads.
    page.fill("input[name=q]", "bge")
    page.press("input[name=q]", "Enter")
    page.wait_for_url("**q=bge**")
    page.wait_for_selector("#page-body:not([aria-busy])")
    page.go_back()
    page.wait_for_url("**q=mpnet")
    page.wait_for_selector("#page-body:not([aria-busy])")
    assert page.locator("#overview-table td.model").all_inner_texts() == shown
    assert fragments == [f"{live_server.url}/?q={query}" for query in ("mpnet", "bge", "mpnet")]


def test_it_filters_without_javascript_too(browser, live_server, published):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(live_server.url + "/")
        page.get_by_label("Hindi").check()
        page.get_by_role("button", name="Apply").click()
        page.wait_for_url("**languages=hin**")
        assert page.locator("#overview-table td.model").all_inner_texts()[2].startswith("paraphrase-multilingual")
        page.fill("input[type=search]", "indic")
        page.get_by_role("button", name="Apply").click()
        page.wait_for_url("**q=indic**")
        assert page.locator("#overview-table tbody tr").count() == 2
    finally:
        context.close()


def test_it_downloads_the_table_as_csv(page, live_server, published, tmp_path):
    page.goto(live_server.url + "/?script=Deva")
    with page.expect_download() as download_info:
        page.get_by_role("link", name="CSV").first.click()
    download = download_info.value
    target = tmp_path / download.suggested_filename
    download.save_as(target)
    assert download.suggested_filename == "nirdesha-1.0-overview-script-deva.csv"
    rows = list(csv.DictReader(target.open(encoding="utf-8-sig")))
    assert len(rows) == 8 and all(row["t1_recall@1_expected"] == "2" for row in rows)


def test_it_fits_a_phone_screen(browser, live_server, published):
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True)
    phone = context.new_page()
    errors = watch_errors(phone, page_errors=False)
    try:
        bge = Run.objects.get(model__name="BAAI/bge-m3")
        for path, name in (
            ("/", "leaderboard-phone-overview"),
            (f"/crosslingual/?run={bge.pk}", "leaderboard-phone-heatmap"),
        ):
            phone.goto(live_server.url + path)
            assert_figures_drawn(phone)
            # Wide tables scroll inside their own box; the page itself never scrolls sideways.
            assert phone.evaluate("() => document.documentElement.scrollWidth") <= 390
            save_screenshot(phone, name)
    finally:
        context.close()
    assert not errors


def test_it_renders_the_api_docs_with_local_scripts(browser, live_server):
    # Nothing the docs page shows may come from a CDN or a font service. The sidecar's Redoc bundle is
    # served without the logo it would ask Redocly's CDN for, so nothing foreign is even requested.
    context = browser.new_context()
    docs = context.new_page()
    scripts: list[str] = []
    foreign_answered: list[str] = []
    foreign_blocked: list[str] = []

    def is_foreign(url: str) -> bool:
        return not url.startswith((live_server.url, "blob:", "data:"))

    def on_request(request) -> None:
        if request.resource_type == "script":
            scripts.append(request.url)

    def on_response(response) -> None:
        if is_foreign(response.url):
            foreign_answered.append(response.url)

    def on_failure(request) -> None:
        if is_foreign(request.url):
            foreign_blocked.append(request.failure or "")

    docs.on("request", on_request)
    docs.on("response", on_response)
    docs.on("requestfailed", on_failure)
    try:
        docs.goto(live_server.url + "/api/docs/")
        docs.wait_for_selector("text=Nirdesha Leaderboard API")
        docs.wait_for_selector("text=/api/leaderboard/", timeout=15_000)
        # Redoc starts a worker from a blob: URL it made itself; every script fetched comes from our server.
        fetched = [url for url in scripts if not url.startswith("blob:")]
        assert fetched == [f"{live_server.url}/api/docs/redoc/bundles/redoc.standalone.js"]
        assert foreign_answered == [] and foreign_blocked == []
        # The quick start opens the docs.
        assert docs.locator("text=Quick start").first.is_visible()
        save_screenshot(docs, "leaderboard-api-docs")
    finally:
        context.close()
