"""Admin pages: campaigns with progress, annotators with counts and median seconds, the approval action."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse

from annotation import services
from annotation.models import AnnotatorProfile, Judgement, LanguageApproval, Lease
from tests.annotation.helpers import make_annotator, make_campaign
from tests.people import make_admin

pytestmark = pytest.mark.django_db


def rate_after(user, campaign, seconds: int) -> None:
    lease = services.acquire_lease(campaign, user)
    Lease.objects.filter(pk=lease.pk).update(started_at=lease.started_at - timedelta(seconds=seconds))
    services.submit_rating(
        user, lease_id=lease.pk, campaign_item_id=lease.campaign_item_id, judgement=Judgement.COMPLETELY_AGREE
    )


def test_it_lists_annotators_with_their_counts_and_median_seconds(client, hindi_dataset):
    campaign = make_campaign(hindi_dataset, "hin", size=5)
    asha = make_annotator("asha@example.org", "hin")
    for seconds in (10, 30, 200):
        rate_after(asha, campaign, seconds)
    client.force_login(make_admin())
    page = client.get(reverse("admin:annotation_annotatorprofile_changelist")).content.decode()
    row = page[page.index("asha@example.org") :].split("</tr>")[0]
    assert ">3<" in row  # ratings
    assert ">30<" in row  # median seconds per item: median of 10, 30, 200
    assert "Hindi" in row

    campaigns = client.get(reverse("admin:annotation_campaign_changelist")).content.decode()
    assert "3 / 10" in campaigns
    detail = client.get(reverse("admin:annotation_campaign_change", args=[campaign.pk])).content.decode()
    assert "3 of 10 ratings" in detail

    staff_page = client.get(reverse("annotation:staff_campaign", args=[campaign.pk])).content.decode()
    assert "asha@example.org</td><td>3</td><td>0</td><td>30</td>" in staff_page


def test_it_approves_native_languages_with_the_admin_action(client, db):
    wafa = make_annotator("wafa@example.org", "hin", "urd", approved=False)
    admin = make_admin()
    client.force_login(admin)
    client.post(
        reverse("admin:annotation_annotatorprofile_changelist"),
        {"action": "approve_native_languages", "_selected_action": [AnnotatorProfile.objects.get(user=wafa).pk]},
    )
    approvals = LanguageApproval.objects.filter(annotator=wafa)
    assert sorted(approvals.values_list("language_id", flat=True)) == ["hin", "urd"]
    assert {approval.approved_by for approval in approvals} == {admin}


def test_it_keeps_raw_ratings_read_only_in_the_admin(client, hindi_dataset):
    campaign = make_campaign(hindi_dataset, "hin", size=1)
    rate_after(make_annotator("asha@example.org", "hin"), campaign, 5)
    client.force_login(make_admin())
    from annotation.models import Rating

    rating = Rating.objects.get()
    response = client.post(reverse("admin:annotation_rating_change", args=[rating.pk]), {"judgement": "do_not_agree"})
    assert response.status_code in (200, 403)
    rating.refresh_from_db()
    assert rating.judgement == Judgement.COMPLETELY_AGREE
