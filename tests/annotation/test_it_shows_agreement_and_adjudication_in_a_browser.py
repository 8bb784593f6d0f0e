"""In a real browser: the public agreement page with its plotly figure, and staff adjudicating."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Adjudication, Campaign
from tests.annotation.browser_steps import log_in
from tests.browser import save_screenshot
from tests.people import make_admin
from tests.validation import VALIDATION_DIR, load_validation_items

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def imported():
    dataset = load_validation_items()
    call_command("import_judgements", str(VALIDATION_DIR), stdout=StringIO())
    return dataset


def test_it_draws_the_agreement_figure_and_tables(page, live_server, imported):
    page.goto(f"{live_server.url}/annotate/agreement/")
    page.wait_for_selector("#agreement-plot .main-svg")
    # Five languages on the x axis, four traces (κ with each interval, AC1, α).
    assert page.locator("#agreement-plot .xtick").count() == 5
    assert page.evaluate("() => document.getElementById('agreement-plot').data.length") == 4
    hindi = page.locator("#agreement-table tr", has_text="Hindi").inner_text()
    assert "0.807" in hindi and "[0.691, 0.923]" in hindi and "Almost perfect agreement" in hindi
    assert "first rater's proportions only" in page.inner_text("#notes")
    save_screenshot(page, "annotation-agreement")


def test_it_lets_staff_adjudicate_a_disagreement(page, live_server, imported):
    make_admin()
    campaign = Campaign.objects.get(language_id="tam")
    log_in(page, live_server, "alice.admin@example.org")
    page.goto(f"{live_server.url}{campaign.get_absolute_url()}")
    assert "300 of 300 ratings" in page.inner_text("#progress")
    page.get_by_role("link", name="Disagreements to adjudicate (17)").click()
    page.locator("#disagreements a", has_text="Adjudicate").first.click()
    page.get_by_label("Partially Agree").check()
    page.fill("textarea[name=note]", "Both readings are defensible; the name is transliterated.")
    page.get_by_role("button", name="Save adjudication").click()
    page.wait_for_selector("#disagreements")
    assert "adjudicated" in page.inner_text(".messages")
    assert page.locator("#disagreements a", has_text="Review").count() == 1
    save_screenshot(page, "annotation-disagreements")
    assert Adjudication.objects.get().judgement == "partially_agree"
