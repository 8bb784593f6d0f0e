"""The dataset page: the card, languages and scripts with item counts and samples, agreement per language."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluation.models import Item, Language
from tests.leaderboard.factories import make_dataset
from tests.leaderboard.html import tables

pytestmark = pytest.mark.django_db

SAMPLES = {
    "eng": "Explain how to file an income tax return online.",
    "hin": "ऑनलाइन आयकर रिटर्न कैसे भरें, समझाइए।",
    "urd": "آن لائن انکم ٹیکس ریٹرن کیسے جمع کریں، سمجھائیے۔",
}


def test_it_shows_the_card_languages_and_samples(client):
    dataset = make_dataset(
        "nirdesha-validation",
        "150",
        description="The human-validated sample.",
        provenance="Synthesised in English, machine-translated, human-validated sample.",
    )
    for code, text in SAMPLES.items():
        for item_id in (1, 2):
            Item.objects.create(
                dataset=dataset,
                item_id=item_id,
                language=Language.objects.get(code=code),
                persona="p",
                instruction=text if item_id == 1 else "other",
            )
    page = client.get(reverse("leaderboard:dataset_detail", args=[dataset.pk])).content.decode()

    assert "Apache-2.0" in page and "human-validated sample" in page
    languages = {row[0]: row for row in tables(page)["dataset-languages"][1:]}
    assert languages["Urdu urd"][1:4] == ["Perso-Arabic (Nastaliq) Arab", "Indo-Aryan", "2"]
    # Text in a language carries its language and direction.
    assert f'<span lang="urd" dir="rtl" class="script-arab">{SAMPLES["urd"]}</span>' in page
    assert f'<span lang="hin" dir="ltr" class="script-deva">{SAMPLES["hin"]}</span>' in page
    assert "No validation judgements for this version yet" in page


def test_it_lists_the_languages_of_a_results_only_version(client, published):
    page = client.get(reverse("leaderboard:dataset_detail", args=[published.pk])).content.decode()
    rows = tables(page)["dataset-languages"][1:]
    assert len(rows) == 12 and all("50000 (declared)" in row[3] for row in rows)
    assert "8 finished runs" in page


def test_it_is_404_for_an_unknown_dataset(client):
    assert client.get(reverse("leaderboard:dataset_detail", args=[424242])).status_code == 404
