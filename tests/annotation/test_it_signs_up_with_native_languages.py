"""allauth sign-up (/accounts/signup/) with the annotator's native languages."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.models import AnnotatorProfile, LanguageApproval

pytestmark = pytest.mark.django_db


def test_it_shows_the_signup_page_in_the_site_layout_with_the_languages(client):
    page = client.get(reverse("account_signup")).content.decode()
    assert "Nirdesha" in page and 'class="site-nav"' in page
    assert "Languages you read natively" in page
    assert "Hindi" in page and "Urdu" in page and ">English<" not in page


def test_it_creates_the_account_and_the_profile_without_approving_anything(client):
    response = client.post(
        reverse("account_signup"),
        {
            "email": "meera@example.org",
            "password1": "a long enough passphrase 42",
            "password2": "a long enough passphrase 42",
            "native_languages": ["tam", "mal"],
        },
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:home")
    user = get_user_model().objects.get(email="meera@example.org")
    profile = AnnotatorProfile.objects.get(user=user)
    assert sorted(profile.native_languages.values_list("code", flat=True)) == ["mal", "tam"]
    assert not LanguageApproval.objects.exists()
    home = client.get(reverse("annotation:home")).content.decode()
    assert "Malayalam" in home and "waiting for approval" in home


def test_it_refuses_english_and_unknown_languages_and_creates_no_account(client):
    response = client.post(
        reverse("account_signup"),
        {
            "email": "meera@example.org",
            "password1": "a long enough passphrase 42",
            "password2": "a long enough passphrase 42",
            "native_languages": ["eng"],
        },
    )
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()
    assert not get_user_model().objects.filter(email="meera@example.org").exists()


def test_it_lets_people_change_their_languages_later(client):
    client.post(
        reverse("account_signup"),
        {
            "email": "meera@example.org",
            "password1": "a long enough passphrase 42",
            "password2": "a long enough passphrase 42",
        },
    )
    user = get_user_model().objects.get(email="meera@example.org")
    assert not user.annotator_profile.native_languages.exists()
    client.post(reverse("annotation:profile"), {"native_languages": ["ben"]})
    assert list(user.annotator_profile.native_languages.values_list("code", flat=True)) == ["ben"]
