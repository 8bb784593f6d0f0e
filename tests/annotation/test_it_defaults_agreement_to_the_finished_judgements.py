"""The public agreement page shows the most complete finished set of judgements; open campaigns only to staff."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Campaign, Rating
from evaluation.models import Item
from tests.annotation.helpers import make_annotator, make_campaign
from tests.factories import make_dataset
from tests.people import make_admin
from tests.validation import VALIDATION_DIR, load_validation_items

pytestmark = pytest.mark.django_db


@pytest.fixture
def sites():
    """A new version with one doubly rated item in an open campaign (the lower id), then the experts' set."""
    fresh = make_dataset("nirdesha-next", "0.1")
    Item.objects.bulk_create(
        Item(dataset=fresh, item_id=n, language_id=code, persona=f"p{n}", instruction=f"i{n}")
        for n in range(1, 4)
        for code in ("eng", "hin")
    )
    campaign = make_campaign(fresh, "hin", size=3)
    item = campaign.campaign_items.first()
    for email in ("asha.annotator@example.org", "ravi.annotator@example.org"):
        Rating.objects.create(campaign_item=item, annotator=make_annotator(email, "hin"), judgement="completely_agree")
    validation = load_validation_items()
    call_command("import_judgements", str(VALIDATION_DIR), stdout=StringIO())
    return fresh, validation, campaign


def test_the_public_page_defaults_to_the_finished_set_and_hides_the_open_campaign(client, sites):
    fresh, validation, _ = sites
    page = client.get(reverse("annotation:agreement")).content.decode()
    assert f"<h2>{validation}</h2>" in page and "0.807" in page
    assert "Figures of closed campaigns only" in page
    # The open campaign's version is not even offered; asked for by name, it is not found.
    assert fresh.slug not in page
    assert client.get(reverse("annotation:agreement"), {"dataset": fresh.slug}).status_code == 404


def test_a_closed_campaign_shows_its_figures(client, sites):
    fresh, _, campaign = sites
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.CLOSED)
    page = client.get(reverse("annotation:agreement"), {"dataset": fresh.slug}).content.decode()
    assert f"<h2>{fresh}</h2>" in page


def test_staff_see_live_figures_of_an_open_campaign(sites):
    fresh, validation, _ = sites
    staff = Client()
    staff.force_login(make_admin())
    page = staff.get(reverse("annotation:agreement")).content.decode()
    # The default stays the most complete set; the open campaign's version is offered and shown live.
    assert f"<h2>{validation}</h2>" in page and fresh.slug in page
    live = staff.get(reverse("annotation:agreement"), {"dataset": fresh.slug}).content.decode()
    assert "Staff view: live figures" in live and f"<h2>{fresh}</h2>" in live
