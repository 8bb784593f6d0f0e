"""The errors page of a re-run of the demo sample, in a real browser: scripts, English beside them, buckets, links."""

from __future__ import annotations

import re

import pytest

from tests.browser import save_screenshot
from tests.leaderboard.demo_runs import demo_reruns

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

DEVANAGARI = re.compile("[\u0900-\u097f]")
ARABIC = re.compile("[\u0600-\u06ff]")
LATIN_WORD = re.compile("[A-Za-z]{3,}")


def shown_ranks(page) -> list[int]:
    """The gold ranks of the queries on the page, top to bottom."""
    return [int(value) for value in page.locator("article.error-query").evaluate_all("n => n.map(e => e.dataset.rank)")]


def test_it_follows_the_run_page_to_the_queries_and_filters_them_by_bucket(page, live_server):
    run = demo_reruns()["bm25"]
    page.goto(f"{live_server.url}/results/{run.pk}/")
    # The T1 table's Hindi row links to Hindi's queries.
    row = page.locator('table.run-scores[data-task="t1"] tr', has_text="Hindi").first
    row.locator("a.errors-link").click()
    page.wait_for_url(re.compile(r"/errors/\?task=t1&language=hin$"))

    first = page.locator("article.error-query").first
    query = first.locator(".error-row.query")
    assert DEVANAGARI.search(query.locator('[lang="hi"]').inner_text())
    assert LATIN_WORD.search(query.locator('[lang="en"]').inner_text())
    assert first.locator(".error-row.retrieved").count() == 3
    # Worst first: the ranks shown never increase down the page.
    ranks = shown_ranks(page)
    assert ranks == sorted(ranks, reverse=True) and ranks[0] > 1
    save_screenshot(page, "leaderboard-errors-hindi")

    # Urdu is shown right to left, in its own font, with the English original beside it.
    page.goto(f"{live_server.url}/results/{run.pk}/errors/?task=t1&language=urd")
    urdu = page.locator('.error-row.query [lang="ur"]').first
    assert ARABIC.search(urdu.inner_text())
    assert urdu.get_attribute("dir") == "rtl"
    assert urdu.evaluate("e => getComputedStyle(e).direction") == "rtl"
    assert LATIN_WORD.search(page.locator('.error-row.query [lang="en"]').first.inner_text())

    # A bucket chip filters the list to the ranks it names, with as many queries as its count.
    chip = page.locator('.error-buckets a[data-bucket="2-5"]')
    count = int(chip.locator(".count").inner_text())
    assert count > 0
    chip.click()
    page.wait_for_url(re.compile(r"bucket=2-5"))
    shown = shown_ranks(page)
    assert len(shown) == min(count, 20) and all(2 <= rank <= 5 for rank in shown)
    save_screenshot(page, "leaderboard-errors-urdu-bucket")
