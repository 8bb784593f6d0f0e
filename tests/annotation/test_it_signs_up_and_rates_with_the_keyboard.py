"""In a real browser: sign up, get approved on the staff page, rate three items with the keyboard."""

from __future__ import annotations

import pytest

from annotation.models import Judgement, Rating, Skip
from tests.annotation.browser_steps import log_in
from tests.annotation.helpers import make_campaign
from tests.browser import save_screenshot, settled
from tests.people import make_admin
from tests.validation import load_validation_items

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def press_for_the_next_item(page, key: str) -> None:
    """Press a key that sends the item's form, and wait until the next item's page has loaded.

    The form is sent by rating.js after the key, so the request can start well after the press on a
    loaded machine: waiting for a quiet network right after it once ended before the navigation began,
    and the next step ran on a page that was being replaced. The next item's heading is what shows it
    came."""
    item_heading = page.inner_text("h1")
    page.keyboard.press(key)
    page.wait_for_function("heading => document.querySelector('h1').innerText !== heading", arg=item_heading)
    page.wait_for_load_state("load")


def test_it_signs_up_gets_approved_and_rates_three_items_with_the_keyboard(page, browser, live_server):
    campaign = make_campaign(load_validation_items(("Hindi",)), "hin", size=6)
    make_admin()

    # Sign up, choosing Hindi as a native language.
    page.goto(f"{live_server.url}/accounts/signup/")
    page.fill("input[name=email]", "priya@example.org")
    page.fill("input[name=password1]", "a long enough passphrase 42")
    page.fill("input[name=password2]", "a long enough passphrase 42")
    page.get_by_label("Hindi").check()
    save_screenshot(page, "annotation-signup")
    page.click("form.stack button[type=submit]")
    page.wait_for_url(f"{live_server.url}/annotate/")
    assert "waiting for approval" in page.inner_text("#languages")
    assert "Nothing to rate yet" in page.inner_text("#campaigns")

    # Staff approve Hindi on the staff page, in their own browser session.
    staff_context = browser.new_context()
    staff = staff_context.new_page()
    log_in(staff, live_server, "alice.admin@example.org")
    staff.goto(f"{live_server.url}/annotate/staff/annotators/")
    with settled(staff):
        staff.get_by_role("button", name="Approve Hindi for priya@example.org").click()
    assert "priya@example.org may now rate Hindi." in staff.inner_text(".messages")
    staff_context.close()

    page.reload()
    assert "approved" in page.inner_text("#languages")
    save_screenshot(page, "annotation-home-approved")
    page.get_by_role("button", name="Start rating").click()
    page.wait_for_selector("#rating-form")
    # The keys work once rating.js (at the end of the page) has run: the form can be there before it, and
    # on a loaded machine a key pressed in between went unheard (the skip was never sent).
    page.wait_for_load_state("load")
    assert page.inner_text("[data-progress=done]") == "0"
    assert page.inner_text("[data-progress=total]") == "6"

    # S skips the first item; then 1, 2 and 3 choose and Enter submits.
    press_for_the_next_item(page, "s")
    for key in ("1", "2", "3"):
        page.keyboard.press(key)
        assert page.locator("input[name=judgement]:checked").count() == 1
        press_for_the_next_item(page, "Enter")
    assert page.inner_text("[data-progress=done]") == "3"
    assert page.inner_text("[data-progress=assigned]") == "4"
    # Enter with nothing chosen does not submit; it says what to do.
    page.keyboard.press("Enter")
    assert page.inner_text("#keyboard-hint") == "Choose 1, 2 or 3 first."
    save_screenshot(page, "annotation-rating-after-three-keyboard-ratings")

    ratings = list(Rating.objects.filter(annotator__email="priya@example.org").order_by("submitted_at"))
    assert [r.judgement for r in ratings] == [
        Judgement.COMPLETELY_AGREE,
        Judgement.PARTIALLY_AGREE,
        Judgement.DO_NOT_AGREE,
    ]
    assert all(r.campaign_item.campaign == campaign and r.seconds >= 0 for r in ratings)
    assert Skip.objects.filter(annotator__email="priya@example.org").count() == 1
