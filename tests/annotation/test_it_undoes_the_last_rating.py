"""POST /annotate/campaigns/<id>/undo/: an annotator takes back their last rating within its lease and rates again."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation import services
from annotation.models import Judgement, Lease, Rating
from tests.annotation.helpers import make_annotator, make_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign(hindi_dataset):
    return make_campaign(hindi_dataset, "hin", size=4, per_item=1)


def rate_next(client, campaign, judgement: str = Judgement.DO_NOT_AGREE) -> Lease:
    """Rate the item leased to the client's user through the page, as the annotator does."""
    client.post(reverse("annotation:next_item", args=[campaign.pk]))
    lease = Lease.objects.get(campaign_item__campaign=campaign)
    response = client.post(
        reverse("annotation:rate", args=[lease.pk]), {"campaign_item": lease.campaign_item_id, "judgement": judgement}
    )
    assert response.status_code == 302
    return lease


def test_it_takes_back_the_last_rating_and_leases_its_item_again(client, campaign):
    annotator = make_annotator("asha@example.org", "hin")
    client.force_login(annotator)
    first = rate_next(client, campaign)
    # The next item is leased now; its page offers to undo the rating just given.
    next_lease = Lease.objects.get(annotator=annotator)
    assert next_lease.campaign_item_id != first.campaign_item_id
    page = client.get(reverse("annotation:rate", args=[next_lease.pk])).content.decode()
    assert 'id="undo-form"' in page and "Do Not Agree" in page

    response = client.post(reverse("annotation:undo", args=[campaign.pk]))
    again = Lease.objects.get(annotator=annotator)
    assert response["Location"] == reverse("annotation:rate", args=[again.pk])
    assert again.campaign_item_id == first.campaign_item_id and not Rating.objects.filter(annotator=annotator).exists()
    # The same lease time as the first time, not a fresh half hour; the item handed next is back in the pool.
    assert again.expires_at - again.started_at == services.lease_duration()
    assert not Lease.objects.filter(pk=next_lease.pk).exists()
    # Rated again, with another judgement, it counts once.
    client.post(
        reverse("annotation:rate", args=[again.pk]),
        {"campaign_item": again.campaign_item_id, "judgement": Judgement.COMPLETELY_AGREE},
    )
    assert list(Rating.objects.filter(annotator=annotator).values_list("judgement", flat=True)) == [
        Judgement.COMPLETELY_AGREE
    ]


def test_it_refuses_an_undo_once_the_lease_time_is_over(client, campaign):
    annotator = make_annotator("asha@example.org", "hin")
    client.force_login(annotator)
    rate_next(client, campaign)
    Rating.objects.filter(annotator=annotator).update(started_at=timezone.now() - timedelta(hours=1))
    response = client.post(reverse("annotation:undo", args=[campaign.pk]), follow=True)
    assert "the time to change it has run out" in response.content.decode()
    assert Rating.objects.filter(annotator=annotator).count() == 1


def test_it_undoes_only_ones_own_rating(client, campaign):
    asha, bala = make_annotator("asha@example.org", "hin"), make_annotator("bala@example.org", "hin")
    client.force_login(asha)
    rate_next(client, campaign)
    client.force_login(bala)
    client.post(reverse("annotation:undo", args=[campaign.pk]))
    assert Rating.objects.filter(annotator=asha).count() == 1 and not Lease.objects.filter(annotator=bala).exists()


def test_it_asks_to_sign_in_and_to_post(client, campaign):
    url = reverse("annotation:undo", args=[campaign.pk])
    assert client.post(url).status_code == 302 and "login" in client.post(url)["Location"]
    client.force_login(make_annotator("asha@example.org", "hin"))
    assert client.get(url).status_code == 405
