"""One format for every moment the site shows; annotators' lease times in their own time zone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from leaderboard.templatetags.leaderboard_tags import moment


def test_it_writes_a_moment_in_utc_with_a_machine_readable_time():
    when = datetime(2026, 11, 3, 8, 5, tzinfo=UTC)
    assert moment(when) == '<time datetime="2026-11-03T08:05:00+00:00">3 Nov 2026, 08:05 UTC</time>'


def test_it_converts_other_zones_and_iso_strings_to_the_same_format():
    india = timezone(timedelta(hours=5, minutes=30))
    assert "3 Nov 2026, 08:05 UTC" in moment(datetime(2026, 11, 3, 13, 35, tzinfo=india))
    assert "3 Nov 2026, 08:05 UTC" in moment("2026-11-03T08:05:00+00:00")
    assert moment(None) == "" and moment("not a date") == ""


def test_a_local_moment_is_marked_for_the_readers_time_zone():
    assert ' data-local=""' in moment(datetime(2026, 11, 3, 8, 5, tzinfo=UTC), "local")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_an_annotator_sees_the_lease_in_their_own_time_zone(browser, live_server):
    from tests.annotation.browser_steps import log_in
    from tests.annotation.helpers import make_annotator, make_campaign
    from tests.validation import load_validation_items

    make_campaign(load_validation_items(("Hindi",)), "hin", size=3)
    make_annotator("asha.annotator@example.org", "hin")
    context = browser.new_context(timezone_id="Asia/Kolkata")
    page = context.new_page()
    try:
        log_in(page, live_server, "asha.annotator@example.org")
        page.get_by_role("button", name="Start rating").first.click()
        page.wait_for_url("**/annotate/rate/**")
        lease = page.locator("time[data-local]").first
        assert lease.get_attribute("title").endswith(" UTC")
        assert "GMT+5:30" in lease.inner_text() or "IST" in lease.inner_text()
    finally:
        context.close()
