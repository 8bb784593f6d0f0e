"""Every public page in headless Chromium: figures drawn, filters applied, sorting, a CSV download, a phone."""

from __future__ import annotations

import csv

import pytest

from evaluation.models import Item, Language, Run
from tests.browser import save_screenshot
from tests.factories import make_dataset, make_run
from tests.leaderboard.figures import assert_figures_drawn

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def validation_with_bins():
    """A small second benchmark version with re-runs that carry reliability bins and coverage."""
    dataset = make_dataset()
    coverage = {"Deva": {"tokens_per_word": 2.1, "unk_rate": 0.0}, "Arab": {"tokens_per_word": 4.4, "unk_rate": 0.04}}
    make_run(
        dataset, "org/alpha", display_name="Alpha", level=0.3, with_bins=True, details={"tokenizer_coverage": coverage}
    )
    make_run(dataset, "org/beta", display_name="Beta", level=0.22, with_bins=True)
    make_run(dataset, "bm25", display_name="BM25", level=0.1, kind="lexical", languages=("hin", "mar", "ben", "tam"))
    texts = {
        "hin": "ऑनलाइन आयकर रिटर्न कैसे भरें?",
        "urd": "آن لائن انکم ٹیکس ریٹرن کیسے جمع کریں؟",
        "eng": "How to file taxes?",
    }
    for code, text in texts.items():
        Item.objects.create(
            dataset=dataset, item_id=1, language=Language.objects.get(code=code), persona="p", instruction=text
        )
    return dataset


def visit(page, live_server, path: str, name: str, **expected) -> dict:
    page.goto(live_server.url + path)
    traces = assert_figures_drawn(page, expected_traces=expected or None)
    save_screenshot(page, name)
    return traces


def test_it_opens_every_page_and_draws_the_figures(page, live_server, published, validation_with_bins):
    visit(page, live_server, "/", "leaderboard-overview", **{"figure-overall": 1})
    assert page.locator("#overview-table tbody tr").count() == 8
    assert page.locator("#overview-table tbody tr").first.locator("td.model").inner_text() == "E5-Large-Instruct"
    for task in ("t1", "t2", "t3", "t3x"):
        visit(page, live_server, f"/tasks/{task}/", f"leaderboard-task-{task}", **{"figure-languages": 8})
        assert page.locator("table.task-table").count() == 3

    visit(page, live_server, "/tasks/t4/", "leaderboard-t4-published")
    assert page.get_by_text("No run on this benchmark version has reliability bins").is_visible()
    traces = visit(page, live_server, f"/tasks/t4/?dataset={validation_with_bins.pk}", "leaderboard-t4-reliability")
    assert len(traces) == 4 and set(traces.values()) == {3}  # diagonal, before and after, per language

    bge = Run.objects.get(model__name="BAAI/bge-m3")
    traces = visit(page, live_server, f"/crosslingual/?run={bge.pk}", "leaderboard-crosslingual")
    assert traces == {"figure-heatmap": 1, "figure-asymmetry": 1}
    cells = page.evaluate("() => document.querySelector('[data-figure=figure-heatmap]').data[0].z.length")
    assert cells == 12

    ids = "&".join(f"runs={run.pk}" for run in Run.objects.filter(dataset__name="nirdesha").order_by("pk")[:3])
    visit(page, live_server, f"/compare/?{ids}", "leaderboard-compare", **{"figure-bars": 3, "figure-radar": 3})

    alpha = Run.objects.get(model__name="org/alpha")
    visit(page, live_server, f"/results/{alpha.pk}/", "leaderboard-run", **{"figure-run-bars": 2})
    assert page.locator("#tokenizer-coverage tbody tr").count() == 2
    visit(page, live_server, f"/results/{bge.pk}/", "leaderboard-run-published")
    visit(page, live_server, "/datasets/", "leaderboard-datasets")
    visit(page, live_server, f"/datasets/{validation_with_bins.pk}/", "leaderboard-dataset")
    urdu = page.locator('span[lang="urd"]')
    assert urdu.evaluate("e => getComputedStyle(e).direction") == "rtl"
    assert "Nastaliq" in urdu.evaluate("e => getComputedStyle(e).fontFamily")


def test_it_applies_a_language_filter_from_the_form(page, live_server, published):
    page.goto(live_server.url + "/")
    before = page.locator("#overview-table td.model").all_inner_texts()
    page.locator("details.filters-card summary").click()
    page.get_by_label("Hindi").check()
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**languages=hin**")
    assert_figures_drawn(page)
    after = page.locator("#overview-table td.model").all_inner_texts()
    assert after != before and after[2] == "paraphrase-multilingual-mpnet-base-v2"
    assert "Hindi" in page.locator("details.filters-card summary").inner_text()
    save_screenshot(page, "leaderboard-overview-hindi")

    # Clicking a header sorts by that column, keeping the filter.
    page.get_by_role("link", name="T4 AUROC").click()
    page.wait_for_url("**sort=-t4_auroc**")
    assert "languages=hin" in page.url
    values = [
        float(text.split()[0]) for text in page.locator("#overview-table tbody tr td:nth-child(7)").all_inner_texts()
    ]
    assert values == sorted(values, reverse=True)


def test_it_downloads_the_table_as_csv(page, live_server, published, tmp_path):
    page.goto(live_server.url + "/?script=Deva")
    with page.expect_download() as download_info:
        page.get_by_role("link", name="CSV").first.click()
    download = download_info.value
    target = tmp_path / download.suggested_filename
    download.save_as(target)
    assert download.suggested_filename == "overview-overview.csv"
    rows = list(csv.DictReader(target.open(encoding="utf-8")))
    assert len(rows) == 8 and all(row["t1_expected"] == "2" for row in rows)


def test_it_fits_a_phone_screen(browser, live_server, published):
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True)
    phone = context.new_page()
    errors: list[str] = []
    phone.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
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
    # Nothing the docs page shows may come from a CDN or a font service. Redoc's bundle asks for a
    # logo on Redocly's CDN; the page's Content-Security-Policy stops that request in the browser.
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
        assert fetched == [f"{live_server.url}/static/drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"]
        assert foreign_answered == []
        assert all("csp" in reason.lower() for reason in foreign_blocked), foreign_blocked
        save_screenshot(docs, "leaderboard-api-docs")
    finally:
        context.close()
