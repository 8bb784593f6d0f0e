"""The site's pages that browser tests visit, listed in one place.

The layout test (every page fits at 1366 and 390 px) and the accessibility test (axe-core finds
nothing serious) walk the same list, so a page added here is checked by both. `site` (a fixture in
tests/leaderboard/conftest.py) builds the data the pages need; `public_pages(site)` and
`SIGNED_IN_PAGES` name them; `open_rating_page` reaches the one page that has no fixed address;
`open_context` and `visit_every_page` are how both tests open a browser at a width and walk the list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from io import StringIO

from django.core.management import call_command
from rest_framework.authtoken.models import Token

from evaluation.models import Dataset, Run, Score
from leaderboard.slugs import model_slug
from tests.annotation.helpers import make_annotator, make_campaign
from tests.browser import settled
from tests.data import VALIDATION_DIR
from tests.leaderboard.demo_runs import demo_reruns
from tests.people import PASSWORD, make_researcher

RESEARCHER = "rahul.researcher@example.org"
ANNOTATOR = "asha.annotator@example.org"


def build_site(published, validation_with_bins) -> dict:
    """The published results, a small version with bins, rated validation items and two people."""
    call_command("import_dataset", str(VALIDATION_DIR), stdout=StringIO(), stderr=StringIO())
    items = Dataset.objects.get(name="nirdesha-validation", version="1.0")
    call_command("import_judgements", str(VALIDATION_DIR), stdout=StringIO())
    # A token makes the token page as wide as it gets: its key, and the curl example that quotes it.
    Token.objects.create(user=make_researcher())
    make_annotator(ANNOTATOR, "urd")
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
    """(name, path) of every page of the navigation and the pages a result links to, signed out."""
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
        ("model-published", f"/models/{model_slug(site['bge'].model.public_name)}/"),
        ("model-rerun", f"/models/{model_slug(site['bm25'].model.public_name)}/"),
        ("errors-index", f"/results/{site['bm25'].pk}/errors/"),
        ("errors", f"/results/{site['bm25'].pk}/errors/?task=t1&language=urd"),
        ("errors-pair", f"/results/{site['bm25'].pk}/errors/?task=t2&language=hin&target=urd"),
        (
            "compare-errors",
            f"/compare/errors/?a={site['bm25'].pk}&b={site['tfidf'].pk}&task=t3&language=urd",
        ),
        ("datasets", "/datasets/"),
        *[(f"dataset-{dataset.pk}", f"/datasets/{dataset.pk}/") for dataset in Dataset.objects.order_by("pk")],
        ("agreement", "/annotate/agreement/"),
        ("login", "/accounts/login/?next=/evaluation/submit/"),
        ("signup", "/accounts/signup/"),
        ("api-docs", "/api/docs/"),
    ]


# The pages of the navigation and the account menu that need a signed-in researcher.
SIGNED_IN_PAGES: tuple[tuple[str, str], ...] = (
    ("submit", "/evaluation/submit/"),
    ("my-submissions", "/evaluation/runs/"),
    ("token", "/accounts/api-token/"),
    ("annotate", "/annotate/"),
    ("display-name", "/accounts/name/"),
    ("hub-account", "/accounts/hub/"),
)


def log_in(page, base: str, email: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=login]", email)
    page.fill("input[name=password]", PASSWORD)
    with settled(page):
        page.click("form.stack button[type=submit]")


def log_out(page, base: str) -> None:
    page.goto(base + "/accounts/logout/")
    with settled(page):
        page.click("form button[type=submit]")


def open_rating_page(page, base: str) -> str:
    """Sign the annotator in, start rating, and return the rating page's path."""
    log_in(page, base, ANNOTATOR)
    page.goto(f"{base}/annotate/")
    page.get_by_role("button", name="Start rating").first.click()
    page.wait_for_url("**/annotate/rate/**")
    return page.url.removeprefix(base)


def open_page(page, base: str, name: str, path: str) -> None:
    """Open a page and wait until it has settled: its requests answered and its figures drawn."""
    from tests.leaderboard.figures import assert_figures_drawn

    with settled(page):
        page.goto(base + path)
    if name == "agreement":
        # The annotation pages draw their one figure with their own small script.
        page.wait_for_selector("#agreement-plot .main-svg")
    elif page.locator("[data-figure]").count():
        assert_figures_drawn(page)


@contextmanager
def open_context(browser, viewport: dict, **options) -> Iterator:
    """A page in a fresh browser context at `viewport`; a phone's (390 px) is mobile and has touch."""
    phone = viewport["width"] < 640
    context = browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone, device_scale_factor=1, **options)
    try:
        yield context.new_page()
    finally:
        context.close()


def visit_every_page(page, base: str, site, visit: Callable[[str, str], None]) -> None:
    """Call `visit(name, path)` on every public page, every signed-in page and the rating page, signing in
    and out between them; `visit` opens the page (open_page) and checks it."""
    for name, path in public_pages(site):
        visit(name, path)
    log_in(page, base, RESEARCHER)
    for name, path in SIGNED_IN_PAGES:
        visit(name, path)
    log_out(page, base)
    visit("rate", open_rating_page(page, base))
