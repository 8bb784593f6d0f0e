"""The filters offer chips only for the languages a version has, and the compare page its own selectors."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from evaluation.models import Run

pytestmark = pytest.mark.django_db


def chips(page: str, name: str) -> list[str]:
    return re.findall(rf'<input type="(?:checkbox|radio)" name="{name}" value="([^"]+)"', page)


def test_the_validation_board_offers_its_five_languages_only(client, published, validation_with_bins):
    page = client.get(reverse("leaderboard:overview"), {"dataset": validation_with_bins.pk}).content.decode()
    # The small version has Hindi, Marathi, Bengali, Tamil and Urdu: no chip selects nothing.
    assert sorted(chips(page, "languages")) == ["ben", "hin", "mar", "tam", "urd"]
    assert sorted(chips(page, "script")) == ["Arab", "Beng", "Deva", "Taml"]
    assert "Dravidian" in page and "Indo-Aryan" in page
    # The published version keeps all twelve.
    assert len(chips(client.get(reverse("leaderboard:overview")).content.decode(), "languages")) == 12


def test_the_endonym_on_a_chip_carries_its_language_tag(client, published):
    page = client.get(reverse("leaderboard:overview")).content.decode()
    assert '<span>Hindi · <span lang="hi">हिन्दी</span></span>' in page
    assert '<span lang="ur">اردو</span>' in page


def test_the_compare_page_chooses_languages_and_says_what_it_compares_over(client, published):
    ids = [Run.objects.get(model__display_name=name).pk for name in ("BGE-M3", "E5-Large-Instruct")]
    page = client.get(reverse("leaderboard:compare"), {"runs": ids}).content.decode()
    assert len(chips(page, "languages")) == 12 and chips(page, "pairs") == ["both", "source"]
    assert "a mean over all 12 translated languages" in page
    page = client.get(reverse("leaderboard:compare"), {"runs": ids, "languages": ["hin", "tam"]}).content.decode()
    assert "a mean over Hindi, Tamil; a cross-lingual pair counts when both its languages are among them" in page
    checked = re.findall(r'name="languages" value="([a-z]+)" checked', page)
    assert checked == ["hin", "tam"]
    # The chosen languages are not also sent twice as hidden fields.
    assert 'type="hidden" name="languages"' not in page
