"""The dataset page: the card, languages and scripts with item counts and samples, agreement per language."""

from __future__ import annotations

import csv
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils.html import escape

from evaluation.engine.languages import BY_CODE
from evaluation.models import Dataset, Item, Language
from tests.data import EXPECTED_AGREEMENT_CSV, VALIDATION_DIR, VALIDATION_LANGUAGES
from tests.leaderboard.html import tables

pytestmark = pytest.mark.django_db


def test_it_shows_the_card_languages_and_samples(client):
    call_command(
        "import_dataset",
        str(VALIDATION_DIR),
        "--dataset=nirdesha-validation@150",
        "--license=Apache-2.0",
        "--provenance=Machine-translated from English; a human-validated sample.",
        stdout=StringIO(),
        stderr=StringIO(),
    )
    dataset = Dataset.objects.get(name="nirdesha-validation", version="150")
    page = client.get(reverse("leaderboard:dataset_detail", args=[dataset.pk])).content.decode()

    assert "Apache-2.0" in page and "human-validated sample" in page
    languages = {row[0]: row for row in tables(page)["dataset-languages"][1:]}
    assert set(languages) == {"English eng", "Bengali ben", "Hindi hin", "Marathi mar", "Tamil tam", "Urdu urd"}
    assert languages["Urdu urd"][1:4] == ["Perso-Arabic (Nastaliq) Arab", "Indo-Aryan", "150"]
    # Text in a language carries its language, direction and script font.
    for code, direction in (("urd", "rtl"), ("hin", "ltr"), ("tam", "ltr")):
        sample = Item.objects.get(dataset=dataset, language=code, item_id=1).instruction
        script = Language.objects.get(code=code).script.lower()
        opening = f'<span lang="{BY_CODE[code].bcp47}" dir="{direction}" class="script-{script}">'
        assert opening + escape(sample[:100]) in page
    assert "No validation judgements for this version yet" in page


def test_it_shows_agreement_per_language_from_the_imported_judgements(client):
    call_command(
        "import_dataset",
        str(VALIDATION_DIR),
        "--dataset=nirdesha-validation@150",
        stdout=StringIO(),
        stderr=StringIO(),
    )
    call_command("import_judgements", str(VALIDATION_DIR), "--dataset=nirdesha-validation@150", stdout=StringIO())
    dataset = Dataset.objects.get(name="nirdesha-validation", version="150")
    page = client.get(reverse("leaderboard:dataset_detail", args=[dataset.pk])).content.decode()

    rows = {row[0]: row for row in tables(page)["agreement"][1:]}
    assert set(rows) == set(VALIDATION_LANGUAGES)
    with EXPECTED_AGREEMENT_CSV.open(encoding="utf-8", newline="") as handle:
        published = {row["file_name"].removesuffix(".csv"): row for row in csv.DictReader(handle)}
    for language, row in rows.items():
        expected = published[language]
        assert row[1] == "150"
        assert row[2] == f"{float(expected['agreement_percentage']):.1f}"
        assert row[3].startswith(f"{float(expected['kappa_score']):.3f} [")
        # The interval computed the published way reproduces the published bounds.
        assert row[4] == f"[{float(expected['kappa_ci_lower']):.3f}, {float(expected['kappa_ci_upper']):.3f}]"
        assert row[5] == f"{float(expected['krippendorff_alpha']):.3f}"
    # The AC1 definition differs from the published table's; the page says how.
    assert "first rater" in page
    assert "?format=csv&amp;table=agreement" in page


def test_it_lists_the_languages_of_a_results_only_version(client, published):
    page = client.get(reverse("leaderboard:dataset_detail", args=[published.pk])).content.decode()
    rows = tables(page)["dataset-languages"][1:]
    assert len(rows) == 12 and all("50000 (declared)" in row[3] for row in rows)
    assert "8 finished runs" in page


def test_it_is_404_for_an_unknown_dataset(client):
    assert client.get(reverse("leaderboard:dataset_detail", args=[424242])).status_code == 404
