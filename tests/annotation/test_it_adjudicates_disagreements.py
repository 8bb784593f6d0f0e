"""The staff disagreement queue and adjudication page."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Adjudication, Campaign, Rating
from annotation.reports import agreement_by_language
from tests.people import make_admin
from tests.validation import VALIDATION_DIR, read_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def hindi(hindi_dataset, tmp_path):
    (tmp_path / "Hindi.csv").write_bytes((VALIDATION_DIR / "Hindi.csv").read_bytes())
    call_command("import_judgements", str(tmp_path), stdout=StringIO())
    return Campaign.objects.get(language_id="hin")


def test_it_lists_exactly_the_items_the_raters_disagreed_on(client, hindi):
    client.force_login(make_admin())
    disagreeing = {int(row["id"]) for row in read_rows("Hindi") if row["expert_1"] != row["expert_2"]}
    assert len(disagreeing) == 10  # 93.33% of 150 agree
    assert {ci.item.item_id for ci in hindi.disagreements()} == disagreeing
    page = client.get(reverse("annotation:staff_disagreements", args=[hindi.pk])).content.decode()
    assert page.count("Adjudicate</a>") == 10


def test_it_stores_an_adjudication_beside_the_unchanged_ratings(client, hindi, hindi_dataset):
    admin = make_admin()
    client.force_login(admin)
    item = hindi.disagreements().first()
    ratings_before = list(Rating.objects.order_by("pk").values_list("pk", "judgement"))
    agreement_before = agreement_by_language(hindi_dataset)

    page = client.get(reverse("annotation:staff_adjudicate", args=[item.pk])).content.decode()
    assert "expert_1.hin@import.invalid" in page
    response = client.post(
        reverse("annotation:staff_adjudicate", args=[item.pk]),
        {"judgement": "partially_agree", "note": "The instruction loses the festival's name."},
    )
    assert response["Location"] == reverse("annotation:staff_disagreements", args=[hindi.pk])
    adjudication = Adjudication.objects.get()
    assert (adjudication.campaign_item, adjudication.judgement, adjudication.adjudicated_by) == (
        item,
        "partially_agree",
        admin,
    )
    assert list(Rating.objects.order_by("pk").values_list("pk", "judgement")) == ratings_before
    assert agreement_by_language(hindi_dataset) == agreement_before

    # Changing one's mind replaces the decision; it never adds a second one.
    client.post(reverse("annotation:staff_adjudicate", args=[item.pk]), {"judgement": "do_not_agree", "note": ""})
    assert Adjudication.objects.get().judgement == "do_not_agree"
    assert client.post(reverse("annotation:staff_adjudicate", args=[item.pk]), {"judgement": "??"}).status_code == 400
    assert Adjudication.objects.get().judgement == "do_not_agree"
