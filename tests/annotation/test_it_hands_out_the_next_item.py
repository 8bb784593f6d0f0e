"""The "next item" view (POST /annotate/campaigns/<id>/next/) and the leases behind it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation import services
from annotation.models import Campaign, Judgement, Lease, Rating
from tests.annotation.helpers import make_annotator, make_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign(hindi_dataset):
    return make_campaign(hindi_dataset, "hin", size=6, per_item=2)


def next_url(campaign: Campaign) -> str:
    return reverse("annotation:next_item", args=[campaign.pk])


def rate(user, lease: Lease, judgement: str = Judgement.COMPLETELY_AGREE) -> Rating:
    return services.submit_rating(user, lease_id=lease.pk, campaign_item_id=lease.campaign_item_id, judgement=judgement)


def test_it_leases_an_item_in_the_annotators_language_and_keeps_it_on_reload(client, campaign):
    annotator = make_annotator("asha@example.org", "hin")
    client.force_login(annotator)
    response = client.post(next_url(campaign))
    lease = Lease.objects.get(annotator=annotator)
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:rate", args=[lease.pk])
    assert lease.campaign_item.campaign == campaign
    assert lease.campaign_item.item.language_id == "hin"
    assert lease.expires_at - lease.started_at == timedelta(minutes=30)
    # Asking again hands back the same lease, not a second item.
    assert client.post(next_url(campaign))["Location"] == response["Location"]
    assert Lease.objects.filter(annotator=annotator).count() == 1


def test_it_follows_the_sample_order(campaign):
    annotator = make_annotator("asha@example.org", "hin")
    lease = services.acquire_lease(campaign, annotator)
    assert lease.campaign_item.position == 1


def test_it_never_hands_out_more_slots_than_ratings_per_item(hindi_dataset):
    campaign = make_campaign(hindi_dataset, "hin", size=1, per_item=2)
    first, second, third = (make_annotator(f"{name}@example.org", "hin") for name in ("asha", "bala", "chitra"))
    lease_a = services.acquire_lease(campaign, first)
    lease_b = services.acquire_lease(campaign, second)
    assert lease_a.campaign_item == lease_b.campaign_item
    # Both slots are leased, though nobody has rated yet: nothing for the third annotator.
    assert services.acquire_lease(campaign, third) is None
    rate(first, lease_a)
    rate(second, lease_b)
    assert services.acquire_lease(campaign, third) is None
    assert services.acquire_lease(campaign, first) is None
    assert Rating.objects.count() == 2


def test_it_returns_an_abandoned_item_to_the_pool_when_its_lease_expires(hindi_dataset):
    campaign = make_campaign(hindi_dataset, "hin", size=1, per_item=1)
    slow, quick = make_annotator("slow@example.org", "hin"), make_annotator("quick@example.org", "hin")
    abandoned = services.acquire_lease(campaign, slow)
    assert services.acquire_lease(campaign, quick) is None
    Lease.objects.filter(pk=abandoned.pk).update(expires_at=timezone.now() - timedelta(seconds=1))

    taken_over = services.acquire_lease(campaign, quick)
    assert taken_over is not None and taken_over.campaign_item == abandoned.campaign_item
    rate(quick, taken_over)
    # The slow annotator's late rating would be a second one on a one-rating item: refused.
    with pytest.raises(services.RatingRefused, match="ran out and it was given to someone else"):
        rate(slow, abandoned)
    assert Rating.objects.count() == 1
    assert not Lease.objects.exists()


def test_it_accepts_a_late_rating_when_nobody_took_the_slot(hindi_dataset):
    campaign = make_campaign(hindi_dataset, "hin", size=1, per_item=1)
    slow = make_annotator("slow@example.org", "hin")
    lease = services.acquire_lease(campaign, slow)
    Lease.objects.filter(pk=lease.pk).update(expires_at=timezone.now() - timedelta(minutes=5))
    rating = rate(slow, lease)
    assert rating.seconds >= 0
    assert Rating.objects.count() == 1


def test_it_offers_skipped_items_only_when_nothing_else_is_left(hindi_dataset):
    campaign = make_campaign(hindi_dataset, "hin", size=2, per_item=1)
    annotator = make_annotator("asha@example.org", "hin")
    first = services.acquire_lease(campaign, annotator)
    services.skip_item(annotator, lease_id=first.pk)
    second = services.acquire_lease(campaign, annotator)
    assert second.campaign_item != first.campaign_item
    rate(annotator, second)
    again = services.acquire_lease(campaign, annotator)
    assert again.campaign_item == first.campaign_item


def test_it_says_so_when_nothing_is_left(client, hindi_dataset):
    campaign = make_campaign(hindi_dataset, "hin", size=1, per_item=1)
    annotator = make_annotator("asha@example.org", "hin")
    rate(annotator, services.acquire_lease(campaign, annotator))
    client.force_login(annotator)
    response = client.post(next_url(campaign), follow=True)
    assert response.redirect_chain[-1][0] == reverse("annotation:home")
    assert "Nothing is left for you to rate" in response.content.decode()


@pytest.mark.parametrize("status", [Campaign.Status.PAUSED, Campaign.Status.CLOSED])
def test_it_refuses_work_from_a_campaign_that_is_not_active(client, campaign, status):
    campaign.status = status
    campaign.save()
    client.force_login(make_annotator("asha@example.org", "hin"))
    assert client.post(next_url(campaign)).status_code == 403
    assert not Lease.objects.exists()


def test_it_refuses_get(client, campaign):
    client.force_login(make_annotator("asha@example.org", "hin"))
    assert client.get(next_url(campaign)).status_code == 405
    assert not Lease.objects.exists()
