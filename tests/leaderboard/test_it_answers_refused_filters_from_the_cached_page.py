"""A link with refused filter values gets a 400 naming them, above the cached page for the other filters.

At 1,000 models a board takes about 0.7 s to build; a 400 built for each malformed link let anyone keep
the web processes busy with made-up spellings."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from leaderboard.responses import page_keys
from tests.browser import settled
from tests.factories import make_dataset, make_run
from tests.layout import LAPTOP, PHONE, elements_past_the_edge, overflowing_tables, page_width
from tests.leaderboard.accessibility import serious_violations
from tests.leaderboard.site_pages import open_context

pytestmark = pytest.mark.django_db


def test_the_400_is_the_cached_page_of_the_valid_filters_under_the_refusal(client):
    make_run(make_dataset(), "org/alpha", display_name="Alpha")
    assert client.get("/?sort=-t1").status_code == 200
    key, _ = page_keys("overview", "html", "sort=-t1")
    payload = cache.get(key)
    assert payload is not None and "Alpha" in payload["body"]
    # What the cache holds is what the refused link shows: it is not built again.
    cache.set(key, {**payload, "body": payload["body"].replace("Alpha", "Marked in the cache")}, 300)
    response = client.get("/?sort=-t1&languages=junk&size=huge")
    page = response.content.decode()
    assert response.status_code == 400
    assert "Marked in the cache" in page and "Alpha" not in page
    notice = page[page.index('<div role="alert"><ul class="messages">') :]
    assert "junk is not one of the available choices" in notice[: notice.index("</ul>")]
    assert "huge is not one of the available choices" in notice[: notice.index("</ul>")]


def test_the_refusal_is_escaped_and_comes_with_the_fragment_too(client):
    make_run(make_dataset(), "org/alpha", display_name="Alpha")
    response = client.get("/?languages=<b>bold</b>", HTTP_X_PAGE_FRAGMENT="1")
    page = response.content.decode()
    assert response.status_code == 400
    assert page.startswith('<div role="alert"><ul class="messages">')
    assert "<b>bold</b>" not in page and "&lt;b&gt;bold&lt;/b&gt;" in page
    assert "Alpha" in page


def test_a_refused_export_is_the_export_of_the_valid_filters(client):
    make_run(make_dataset(), "org/alpha", display_name="Alpha")
    plain = client.get("/?format=csv")
    refused = client.get("/?format=csv&languages=junk")
    assert refused.status_code == 400 and refused.content == plain.content


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1366", "390"])
def test_a_browser_shows_the_refusal_on_a_page_that_fits_and_passes_axe(browser, live_server, viewport):
    make_run(make_dataset(), "org/alpha", display_name="Alpha")
    with open_context(browser, viewport) as page:
        with settled(page):
            response = page.goto(live_server.url + "/?languages=junk&size=huge")
        assert response is not None and response.status == 400
        alert = page.get_by_role("alert")
        assert alert.is_visible()
        assert "junk is not one of the available choices" in alert.inner_text()
        # The board of the other filters is under it.
        assert page.locator("tr[data-run]", has_text="Alpha").count() == 1
        if viewport is PHONE:
            assert page_width(page) <= PHONE["width"], elements_past_the_edge(page, PHONE["width"])
        else:
            assert overflowing_tables(page) == []
        assert serious_violations(page) == []
