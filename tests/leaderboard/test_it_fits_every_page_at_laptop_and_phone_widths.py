"""Every page at 1366 px (a laptop) and 390 px (a phone), in Chromium, with a screenshot of each.

At 1366 px no table is wider than its box; on a phone the page never scrolls sideways (a wide table
scrolls inside its own box, its model column staying in view). Each model keeps one colour in every
chart of T1, T2 and compare. The screenshots land in test-artifacts/screenshots/ for people to look at.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token

from evaluation.models import Dataset, Run, Score
from tests.annotation.helpers import make_annotator, make_campaign
from tests.browser import save_screenshot
from tests.data import VALIDATION_DIR
from tests.layout import LAPTOP, PHONE, elements_past_the_edge, overflowing_tables, page_width
from tests.leaderboard.demo_runs import demo_reruns
from tests.leaderboard.figures import assert_figures_drawn
from tests.people import PASSWORD, make_researcher

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def site(published, validation_with_bins):
    """The published results, a small version with bins, rated validation items and two people."""
    call_command("import_dataset", str(VALIDATION_DIR), stdout=StringIO(), stderr=StringIO())
    items = Dataset.objects.get(name="nirdesha-validation", version="1.0")
    call_command("import_judgements", str(VALIDATION_DIR), stdout=StringIO())
    # A token makes the token page as wide as it gets: its key, and the curl example that quotes it.
    Token.objects.create(user=make_researcher())
    make_annotator("asha.annotator@example.org", "urd")
    # An open campaign with items left to rate, for the rating page.
    make_campaign(items, "urd", size=20)
    # Multi-reference diagnostics on the small version, as the engine stores them, for the diagnostics tab.
    diagnostics = {"max@r": 12.5, "max@r_norm": 0.81, "complete@10": 0.42, "english_preference": 0.17}
    for offset, model in enumerate(("org/alpha", "org/beta")):
        run = Run.objects.get(model__name=model)
        Score.objects.bulk_create(
            Score(run=run, task="multi", source_id=code, metric=metric, value=value - offset / 10 + index / 100)
            for index, code in enumerate(("hin", "mar", "ben", "tam", "urd"))
            for metric, value in diagnostics.items()
        )
    # The demo sample re-run with the lexical baselines, for the pages that read per-query rank files
    # (the validation version above has baseline runs of the same names, without them).
    demo_reruns()
    demo = Run.objects.filter(dataset__name="nirdesha-demo")
    return {
        "bm25": demo.get(model__name="bm25"),
        "tfidf": demo.get(model__name="tfidf-char"),
        "bge": Run.objects.get(model__name="BAAI/bge-m3"),
        "alpha": Run.objects.get(model__name="org/alpha"),
        "validation": validation_with_bins,
        "three": "&".join(f"runs={run.pk}" for run in Run.objects.filter(dataset=published).order_by("pk")[:3]),
    }


def public_pages(site) -> list[tuple[str, str]]:
    validation = site["validation"].pk
    return [
        ("overview", "/"),
        *[(f"task-{task}", f"/tasks/{task}/") for task in ("t1", "t2", "t3", "t3x", "t4", "t5")],
        ("t4-reliability", f"/tasks/t4/?dataset={validation}"),
        ("crosslingual", f"/crosslingual/?run={site['bge'].pk}"),
        ("compare", f"/compare/?{site['three']}"),
        ("diagnostics", f"/diagnostics/?dataset={validation}"),
        ("run", f"/results/{site['alpha'].pk}/"),
        ("run-live", f"/evaluation/runs/{site['alpha'].pk}/"),
        ("run-published", f"/results/{site['bge'].pk}/"),
        ("errors", f"/results/{site['bm25'].pk}/errors/?task=t1&language=urd"),
        ("errors-pair", f"/results/{site['bm25'].pk}/errors/?task=t2&language=hin&target=urd"),
        (
            "compare-errors",
            f"/compare/errors/?a={site['bm25'].pk}&b={site['tfidf'].pk}&task=t3&language=urd",
        ),
        ("datasets", "/datasets/"),
        ("dataset", f"/datasets/{validation}/"),
        ("agreement", "/annotate/agreement/"),
        ("login", "/accounts/login/?next=/evaluation/submit/"),
        ("signup", "/accounts/signup/"),
        ("api-docs", "/api/docs/"),
    ]


def log_in(page, base: str, email: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=login]", email)
    page.fill("input[name=password]", PASSWORD)
    page.click("form.stack button[type=submit]")
    page.wait_for_load_state("networkidle")


def check(page, base: str, name: str, path: str, width: int) -> None:
    page.goto(base + path)
    page.wait_for_load_state("networkidle")
    if name == "agreement":
        # The annotation pages draw their one figure with their own small script.
        page.wait_for_selector("#agreement-plot .main-svg")
    elif page.locator("[data-figure]").count():
        assert_figures_drawn(page)
    if width == LAPTOP["width"]:
        assert overflowing_tables(page) == [], f"{name}: tables wider than their box"
    else:
        assert page_width(page) <= width, f"{name} scrolls sideways: {elements_past_the_edge(page, width)}"
    save_screenshot(page, f"page-{name}-{width}")


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1366", "390"])
def test_it_fits_every_page(browser, live_server, site, viewport):
    phone = viewport is PHONE
    context = browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone, device_scale_factor=1)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda exception: errors.append(str(exception)))
    try:
        for name, path in public_pages(site):
            check(page, live_server.url, name, path, viewport["width"])
        log_in(page, live_server.url, "rahul.researcher@example.org")
        # Every page of the navigation and the account menu that needs a person.
        for name, path in (
            ("submit", "/evaluation/submit/"),
            ("my-submissions", "/evaluation/runs/"),
            ("token", "/accounts/api-token/"),
            ("annotate", "/annotate/"),
        ):
            check(page, live_server.url, name, path, viewport["width"])
        page.goto(live_server.url + "/accounts/logout/")
        page.click("form button[type=submit]")
        log_in(page, live_server.url, "asha.annotator@example.org")
        page.goto(f"{live_server.url}/annotate/")
        page.get_by_role("button", name="Start rating").first.click()
        page.wait_for_url("**/annotate/rate/**")
        check(page, live_server.url, "rate", page.url.removeprefix(live_server.url), viewport["width"])
        guidelines_open = page.evaluate("() => document.getElementById('guidelines').open")
        hints_shown = page.locator(".keys-hint").first.is_visible()
        # On a phone the pair to rate comes first (guidelines folded) and keyboard hints are not shown.
        assert guidelines_open is (not phone) and hints_shown is (not phone)
    finally:
        context.close()
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
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=1)
    page = context.new_page()
    try:
        page.goto(live_server.url + "/")
        page.wait_for_load_state("networkidle")
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
    finally:
        context.close()


def test_a_chart_of_many_bars_starts_with_the_top_three_models_on_a_phone(browser, live_server, site):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=1)
    page = context.new_page()
    visible = """() => document.querySelector('[data-figure="figure-languages"]').data
        .filter(trace => trace.visible !== 'legendonly').length"""
    try:
        page.goto(live_server.url + "/tasks/t2/")
        assert_figures_drawn(page, expected_traces={"figure-languages": 8})
        assert page.evaluate(visible) == 3
        button = page.get_by_role("button", name="Show all 8 models")
        button.click()
        page.wait_for_function(visible.replace("() =>", "() => 8 ===", 1))
        assert not button.count()
    finally:
        context.close()
    laptop = browser.new_context(viewport=LAPTOP)
    page = laptop.new_page()
    try:
        page.goto(live_server.url + "/tasks/t2/")
        assert_figures_drawn(page)
        assert page.evaluate(visible) == 8 and not page.get_by_role("button", name="Show all 8 models").count()
    finally:
        laptop.close()
