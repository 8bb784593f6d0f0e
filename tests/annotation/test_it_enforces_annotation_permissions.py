"""Who may see and rate what: anonymous visitors, unapproved people, other languages, other people."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation import services
from annotation.models import Judgement, Lease, Rating
from tests.annotation.helpers import make_annotator, make_campaign
from tests.people import make_admin, make_outsider
from tests.validation import load_validation_items

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaigns(db):
    dataset = load_validation_items(("Hindi", "Tamil"))
    return make_campaign(dataset, "hin", size=3), make_campaign(dataset, "tam", size=3)


def test_it_sends_anonymous_visitors_to_log_in(client, campaigns):
    hindi, _ = campaigns
    lease = services.acquire_lease(hindi, make_annotator("asha@example.org", "hin"))
    login = reverse("account_login")
    for url in [
        reverse("annotation:home"),
        reverse("annotation:profile"),
        reverse("annotation:rate", args=[lease.pk]),
        reverse("annotation:staff_home"),
        reverse("annotation:staff_annotators"),
        reverse("annotation:staff_campaign", args=[hindi.pk]),
        reverse("annotation:staff_campaign_export", args=[hindi.pk, "csv"]),
    ]:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(f"{login}?next="), url
    for url in [reverse("annotation:next_item", args=[hindi.pk]), reverse("annotation:skip", args=[lease.pk])]:
        assert client.post(url)["Location"].startswith(f"{login}?next="), url
    assert Lease.objects.count() == 1


def test_it_shows_nothing_to_rate_until_staff_approve_a_language(client, campaigns):
    hindi, _ = campaigns
    waiting = make_annotator("wafa@example.org", "hin", approved=False)
    client.force_login(waiting)
    page = client.get(reverse("annotation:home")).content.decode()
    assert "Nothing to rate yet: staff must approve you for a language first (Hindi requested)" in page
    assert "waiting for approval" in page
    assert hindi.name not in page
    assert client.post(reverse("annotation:next_item", args=[hindi.pk])).status_code == 403
    assert not Lease.objects.exists()


def test_it_keeps_an_annotator_to_the_languages_they_are_approved_for(client, campaigns):
    hindi, tamil = campaigns
    asha = make_annotator("asha@example.org", "hin")
    tamil_lease = services.acquire_lease(tamil, make_annotator("tara@example.org", "tam"))
    client.force_login(asha)
    page = client.get(reverse("annotation:home")).content.decode()
    assert hindi.name in page and tamil.name not in page
    assert client.post(reverse("annotation:next_item", args=[tamil.pk])).status_code == 403
    # Reading a Tamil item through someone else's lease is impossible too.
    assert client.get(reverse("annotation:rate", args=[tamil_lease.pk])).status_code == 404
    assert tamil_lease.campaign_item.item.persona not in client.get(reverse("annotation:home")).content.decode()
    with pytest.raises(Exception, match="not approved"):
        services.acquire_lease(tamil, asha)


def test_it_withdraws_work_when_an_approval_is_revoked(client, campaigns):
    hindi, _ = campaigns
    asha = make_annotator("asha@example.org", "hin")
    lease = services.acquire_lease(hindi, asha)
    services.revoke(asha, hindi.language)
    client.force_login(asha)
    assert client.get(reverse("annotation:rate", args=[lease.pk])).status_code == 404
    assert client.post(reverse("annotation:next_item", args=[hindi.pk])).status_code == 403


def test_it_never_shows_an_annotator_anyone_elses_ratings(client, campaigns):
    hindi, _ = campaigns
    asha, bala = make_annotator("asha@example.org", "hin"), make_annotator("bala@example.org", "hin")
    balas = services.acquire_lease(hindi, bala)
    services.submit_rating(
        bala,
        lease_id=balas.pk,
        campaign_item_id=balas.campaign_item_id,
        judgement=Judgement.DO_NOT_AGREE,
        comment="Bala's secret remark",
    )
    ashas = services.acquire_lease(hindi, asha)
    assert ashas.campaign_item_id == balas.campaign_item_id  # the same item, second slot
    client.force_login(asha)
    page = client.get(reverse("annotation:rate", args=[ashas.pk])).content.decode()
    assert "Bala's secret remark" not in page and "bala@example.org" not in page
    assert "checked" not in page
    api = client.get("/api/annotation/ratings/").json()
    assert api["count"] == 0
    # Staff pages (where ratings are listed) are closed to annotators.
    for url in [
        reverse("annotation:staff_campaign", args=[hindi.pk]),
        reverse("annotation:staff_disagreements", args=[hindi.pk]),
        reverse("annotation:staff_adjudicate", args=[balas.campaign_item_id]),
        reverse("annotation:staff_campaign_export", args=[hindi.pk, "json"]),
    ]:
        assert client.get(url).status_code == 403, url


def test_it_lists_only_ones_own_ratings_in_the_api_and_everything_for_staff(client, campaigns):
    hindi, _ = campaigns
    asha, bala = make_annotator("asha@example.org", "hin"), make_annotator("bala@example.org", "hin")
    for person in (asha, bala):
        lease = services.acquire_lease(hindi, person)
        services.submit_rating(
            person, lease_id=lease.pk, campaign_item_id=lease.campaign_item_id, judgement=Judgement.COMPLETELY_AGREE
        )
    client.force_login(asha)
    mine = client.get("/api/annotation/ratings/").json()
    assert [row["id"] for row in mine["results"]] == [Rating.objects.get(annotator=asha).pk]
    client.force_login(make_admin())
    assert client.get("/api/annotation/ratings/").json()["count"] == 2
    client.logout()
    assert client.get("/api/annotation/ratings/").status_code in (401, 403)


def test_it_keeps_staff_pages_for_staff(client, campaigns):
    client.force_login(make_outsider())
    assert client.get(reverse("annotation:staff_home")).status_code == 403
    assert client.post(reverse("annotation:staff_campaign_new"), {}).status_code == 403
    client.force_login(make_admin())
    assert client.get(reverse("annotation:staff_home")).status_code == 200


def test_it_shows_the_home_page_to_someone_without_a_profile_without_creating_one(client, db):
    from annotation.models import AnnotatorProfile

    client.force_login(make_outsider())
    page = client.get(reverse("annotation:home")).content.decode()
    assert "You have not told us which languages you read natively yet." in page
    assert not AnnotatorProfile.objects.exists()
