"""The annotator's home page: "Start rating" only when an item is left for them, "Continue" while they hold one."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation import services
from annotation.models import Judgement
from tests.annotation.helpers import make_annotator, make_campaign

pytestmark = pytest.mark.django_db


def button(client) -> str:
    page = client.get(reverse("annotation:home")).content.decode()
    if "Nothing left for you to rate here." in page:
        return "nothing left"
    return "Continue" if ">Continue</button>" in page else "Start rating" if ">Start rating</button>" in page else ""


def test_it_offers_start_continue_and_then_nothing(client, hindi_dataset):
    campaign = make_campaign(hindi_dataset, "hin", size=1, per_item=2)
    asha, bala, chitra = (make_annotator(f"{name}@example.org", "hin") for name in ("asha", "bala", "chitra"))
    client.force_login(asha)
    assert button(client) == "Start rating"
    lease = services.acquire_lease(campaign, asha)
    assert button(client) == "Continue"
    services.submit_rating(
        asha, lease_id=lease.pk, campaign_item_id=lease.campaign_item_id, judgement=Judgement.COMPLETELY_AGREE
    )
    # Asha rated the one item: nothing is left for her, though the campaign still needs a rating.
    assert button(client) == "nothing left"
    client.force_login(bala)
    assert button(client) == "Start rating"
    services.acquire_lease(campaign, bala)
    # Both slots of the one item are taken (rated or leased): nothing for a third annotator.
    client.force_login(chitra)
    assert button(client) == "nothing left"
