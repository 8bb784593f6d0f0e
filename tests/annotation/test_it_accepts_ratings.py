"""The rating page (GET/POST /annotate/rate/<lease id>/) and the skip button."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from annotation import services
from annotation.models import Flag, Judgement, Lease, Rating, Skip
from tests.annotation.helpers import make_annotator, make_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign(hindi_dataset):
    return make_campaign(hindi_dataset, "hin", size=4, per_item=2)


@pytest.fixture
def asha():
    return make_annotator("asha@example.org", "hin")


def rate_url(lease: Lease) -> str:
    return reverse("annotation:rate", args=[lease.pk])


def test_it_shows_the_english_original_beside_the_translation_with_language_and_direction(client, campaign, asha):
    lease = services.acquire_lease(campaign, asha)
    client.force_login(asha)
    page = client.get(rate_url(lease)).content.decode()
    item = lease.campaign_item.item
    english = lease.campaign_item.english_original()
    assert escape(english.persona) in page and escape(english.instruction) in page
    assert f'lang="hi" dir="ltr">{escape(item.persona)}' in page
    assert "Guidelines" in page and "Completely Agree" in page and "Do Not Agree" in page
    assert 'data-progress="done">0<' in page and 'data-progress="assigned">1<' in page
    assert 'data-progress="total">4<' in page


def test_it_shows_urdu_right_to_left(client, db):
    from tests.validation import load_validation_items

    campaign = make_campaign(load_validation_items(("Urdu",)), "urd", size=2)
    annotator = make_annotator("umar@example.org", "urd")
    lease = services.acquire_lease(campaign, annotator)
    client.force_login(annotator)
    page = client.get(rate_url(lease)).content.decode()
    assert f'lang="ur" dir="rtl">{escape(lease.campaign_item.item.persona)}' in page


def test_it_saves_the_rating_with_the_time_since_the_lease_started_and_moves_on(client, campaign, asha):
    lease = services.acquire_lease(campaign, asha)
    Lease.objects.filter(pk=lease.pk).update(started_at=lease.started_at - timedelta(seconds=42))
    client.force_login(asha)
    response = client.post(
        rate_url(lease),
        {
            "campaign_item": lease.campaign_item_id,
            "judgement": Judgement.PARTIALLY_AGREE,
            "comment": "  The instruction drops 'NCPA'.  ",
            "flag": Flag.MISTRANSLATION,
        },
    )
    rating = Rating.objects.get()
    assert (rating.annotator, rating.campaign_item_id) == (asha, lease.campaign_item_id)
    assert rating.judgement == Judgement.PARTIALLY_AGREE
    assert rating.comment == "The instruction drops 'NCPA'."
    assert rating.flag == Flag.MISTRANSLATION
    assert 42 <= rating.seconds < 60
    # The next item is leased straight away.
    following = Lease.objects.get(annotator=asha)
    assert following.campaign_item_id != lease.campaign_item_id
    assert response["Location"] == rate_url(following)


def test_it_refuses_a_post_for_an_item_other_than_the_leased_one(client, campaign, asha):
    lease = services.acquire_lease(campaign, asha)
    other_item = campaign.campaign_items.exclude(pk=lease.campaign_item_id).first()
    client.force_login(asha)
    response = client.post(
        rate_url(lease), {"campaign_item": other_item.pk, "judgement": Judgement.DO_NOT_AGREE}, follow=True
    )
    assert "different item than the one assigned to you" in response.content.decode()
    assert not Rating.objects.exists()
    assert Lease.objects.filter(pk=lease.pk).exists()


def test_it_refuses_a_post_to_someone_elses_lease(client, campaign, asha):
    bala = make_annotator("bala@example.org", "hin")
    balas_lease = services.acquire_lease(campaign, bala)
    client.force_login(asha)
    response = client.post(
        rate_url(balas_lease), {"campaign_item": balas_lease.campaign_item_id, "judgement": Judgement.COMPLETELY_AGREE}
    )
    assert response.status_code == 404
    assert client.get(rate_url(balas_lease)).status_code == 404
    assert not Rating.objects.exists()


def test_it_refuses_a_second_post_of_the_same_lease(client, campaign, asha):
    lease = services.acquire_lease(campaign, asha)
    client.force_login(asha)
    data = {"campaign_item": lease.campaign_item_id, "judgement": Judgement.COMPLETELY_AGREE}
    client.post(rate_url(lease), data)
    assert client.post(rate_url(lease), data).status_code == 404
    assert Rating.objects.count() == 1


def test_it_explains_a_missing_or_unknown_judgement_and_saves_nothing(client, campaign, asha):
    lease = services.acquire_lease(campaign, asha)
    client.force_login(asha)
    missing = client.post(rate_url(lease), {"campaign_item": lease.campaign_item_id})
    assert missing.status_code == 400
    assert "Choose Completely Agree, Partially Agree or Do Not Agree." in missing.content.decode()
    unknown = client.post(rate_url(lease), {"campaign_item": lease.campaign_item_id, "judgement": "maybe"})
    assert unknown.status_code == 400
    assert not Rating.objects.exists()
    assert Lease.objects.filter(pk=lease.pk).exists()


def test_it_enforces_csrf(campaign, asha):
    lease = services.acquire_lease(campaign, asha)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(asha)
    data = {"campaign_item": lease.campaign_item_id, "judgement": Judgement.COMPLETELY_AGREE}
    assert browser.post(rate_url(lease), data).status_code == 403
    assert browser.post(reverse("annotation:skip", args=[lease.pk])).status_code == 403
    assert not Rating.objects.exists() and not Skip.objects.exists()

    page = browser.get(rate_url(lease)).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    assert browser.post(rate_url(lease), {**data, "csrfmiddlewaretoken": token}).status_code == 302
    assert Rating.objects.count() == 1


def test_it_skips_the_leased_item_and_hands_out_another(client, campaign, asha):
    lease = services.acquire_lease(campaign, asha)
    client.force_login(asha)
    response = client.post(reverse("annotation:skip", args=[lease.pk]))
    assert Skip.objects.filter(annotator=asha, campaign_item=lease.campaign_item).exists()
    following = Lease.objects.get(annotator=asha)
    assert following.campaign_item != lease.campaign_item
    assert response["Location"] == rate_url(following)
    assert not Rating.objects.exists()
