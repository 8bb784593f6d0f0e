"""Staff pages: creating a campaign, changing its status, approving annotators, downloading ratings."""

from __future__ import annotations

import csv
import io
from collections import Counter

import pytest
from django.urls import reverse

from annotation.models import Campaign, CampaignItem, LanguageApproval, Lease
from annotation.sampling import Candidate, allocate, length_terciles, stratum_name
from leaderboard.cache import current_generation
from tests.annotation.helpers import make_annotator
from tests.people import make_admin

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    client.force_login(make_admin())
    return client


def create(staff_client, dataset, **overrides):
    data = {
        "name": "Hindi round 1",
        "dataset": dataset.pk,
        "language": "hin",
        "ratings_per_item": 2,
        "sample_size": 150,
        "seed": 123,
        **overrides,
    }
    return staff_client.post(reverse("annotation:staff_campaign_new"), data)


def test_it_creates_a_campaign_with_a_stratified_seeded_sample(staff_client, validation_dataset):
    response = create(staff_client, validation_dataset, sample_size=60)
    campaign = Campaign.objects.get()
    assert response["Location"] == reverse("annotation:staff_campaign", args=[campaign.pk])
    assert (campaign.language_id, campaign.ratings_per_item, campaign.seed) == ("hin", 2, 123)
    items = list(campaign.campaign_items.select_related("item").order_by("position"))
    assert len(items) == 60
    assert {ci.item.language_id for ci in items} == {"hin"}
    assert [ci.position for ci in items] == list(range(1, 61))
    # Shares follow the Hindi population's strata (description × length tercile of persona + instruction).
    population = [
        Candidate(key=item.pk, description=item.description, length=len(item.persona) + len(item.instruction))
        for item in validation_dataset.items.filter(language_id="hin")
    ]
    terciles = length_terciles(population)
    strata = Counter(stratum_name(c.description, terciles[c.key]) for c in population)
    assert len(strata) == 6
    assert Counter(ci.stratum for ci in items) == Counter(allocate(strata, 60))
    assert all(ci.stratum == stratum_name(ci.item.description, terciles[ci.item.pk]) for ci in items)

    # The same seed draws the same sample.
    create(staff_client, validation_dataset, name="Hindi round 1 again", sample_size=60)
    again = Campaign.objects.get(name="Hindi round 1 again")
    assert list(again.campaign_items.order_by("position").values_list("item_id", flat=True)) == [
        ci.item_id for ci in items
    ]


def test_it_explains_an_impossible_campaign_and_creates_nothing(staff_client, validation_dataset):
    too_big = create(staff_client, validation_dataset, sample_size=151)
    assert too_big.status_code == 400
    assert "has only 150 Hindi items; a sample of 151 is impossible" in too_big.content.decode()
    create(staff_client, validation_dataset)
    duplicate = create(staff_client, validation_dataset)
    assert duplicate.status_code == 400
    assert "already exists" in duplicate.content.decode()
    assert create(staff_client, validation_dataset, language="eng").status_code == 400
    assert Campaign.objects.count() == 1
    assert CampaignItem.objects.count() == 150


def test_it_pauses_a_campaign_and_refreshes_cached_public_pages(
    staff_client, validation_dataset, django_capture_on_commit_callbacks
):
    create(staff_client, validation_dataset, sample_size=5)
    campaign = Campaign.objects.get()
    url = reverse("annotation:staff_campaign_status", args=[campaign.pk])
    generation = current_generation()
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(url, {"status": "paused"})
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.PAUSED
    assert current_generation() == generation + 1
    staff_client.post(url, {"status": "nonsense"})
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.PAUSED
    page = staff_client.get(campaign.get_absolute_url()).content.decode()
    assert "0 of 10 ratings" in page


def test_it_approves_and_revokes_annotators_per_language(staff_client, validation_dataset):
    wafa = make_annotator("wafa@example.org", "hin", "urd", approved=False)
    page = staff_client.get(reverse("annotation:staff_annotators")).content.decode()
    assert "wafa@example.org" in page and "Approve Urdu for wafa@example.org" in page
    url = reverse("annotation:staff_annotators")
    staff_client.post(url, {"annotator": wafa.pk, "language": "urd", "action": "approve"})
    assert list(LanguageApproval.objects.filter(annotator=wafa).values_list("language_id", flat=True)) == ["urd"]
    assert LanguageApproval.objects.get(annotator=wafa).approved_by.is_staff
    staff_client.post(url, {"annotator": wafa.pk, "language": "urd", "action": "revoke"})
    assert not LanguageApproval.objects.filter(annotator=wafa).exists()
    # English is never rated; a forged approval for it changes nothing.
    staff_client.post(url, {"annotator": wafa.pk, "language": "eng", "action": "approve"})
    assert not LanguageApproval.objects.exists()


def test_it_downloads_a_campaign_as_csv_and_json(staff_client, validation_dataset):
    from annotation import services

    create(staff_client, validation_dataset, sample_size=3)
    campaign = Campaign.objects.get()
    asha = make_annotator("asha@example.org", "hin")
    lease = services.acquire_lease(campaign, asha)
    services.submit_rating(
        asha, lease_id=lease.pk, campaign_item_id=lease.campaign_item_id, judgement="partially_agree", comment="ok-ish"
    )
    response = staff_client.get(reverse("annotation:staff_campaign_export", args=[campaign.pk, "csv"]))
    assert response["Content-Disposition"] == 'attachment; filename="Hindi.csv"'
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [row["id"] for row in rows] == [
        str(ci.item.item_id) for ci in campaign.campaign_items.select_related("item").order_by("position")
    ]
    assert rows[0]["expert_1"] == "Partially Agree" and rows[0]["expert_2"] == ""
    data = staff_client.get(reverse("annotation:staff_campaign_export", args=[campaign.pk, "json"])).json()
    assert data["campaign"]["language"] == "hin"
    assert data["items"][0]["ratings"][0]["comment"] == "ok-ish"
    assert staff_client.get(reverse("annotation:staff_campaign_export", args=[campaign.pk, "xml"])).status_code == 404
    assert Lease.objects.count() == 0


def test_it_offers_only_versions_whose_items_are_here_and_refuses_a_results_only_one(staff_client, validation_dataset):
    from tests.factories import make_dataset

    results_only = make_dataset("nirdesha", "1.0")
    form = staff_client.get(reverse("annotation:staff_campaign_new")).content.decode()
    assert f'<option value="{validation_dataset.pk}"' in form and f'<option value="{results_only.pk}"' not in form
    refused = create(staff_client, results_only)
    assert refused.status_code == 400
    assert "That version&#x27;s items are not on this server, so it cannot be sampled." in refused.content.decode()
    assert Campaign.objects.count() == 0
