"""Submitting needs an account: the site says so, and after logging in or signing up the form is back."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluation.models import Dataset
from tests.people import PASSWORD, make_researcher

pytestmark = pytest.mark.django_db
SUBMIT = reverse("evaluation:submit")


def test_it_says_why_it_asks_for_a_log_in(client):
    response = client.get(SUBMIT, follow=True)
    login_url, _ = response.redirect_chain[-1]
    assert login_url == f"{reverse('account_login')}?next={SUBMIT}"
    page = response.content.decode()
    assert "Log in to submit a model (or sign up); afterwards you come back to this form." in page
    # The sign-up link on the log-in page carries the way back too.
    assert f"{reverse('account_signup')}?next=%2Fevaluation%2Fsubmit%2F" in page


def test_it_returns_to_the_form_after_logging_in(client):
    make_researcher()
    response = client.post(
        f"{reverse('account_login')}?next={SUBMIT}",
        {"login": "rahul.researcher@example.org", "password": PASSWORD, "next": SUBMIT},
    )
    assert response.status_code == 302 and response["Location"] == SUBMIT


def test_it_returns_to_the_form_after_signing_up(client):
    response = client.post(
        f"{reverse('account_signup')}?next={SUBMIT}",
        {
            "email": "new.researcher@example.org",
            "password1": "a long passphrase 42",
            "password2": "a long passphrase 42",
            "next": SUBMIT,
        },
    )
    assert response.status_code == 302 and response["Location"] == SUBMIT


def test_it_sends_a_researcher_who_signs_up_from_the_header_back_where_they_were(client):
    overview = client.get(reverse("leaderboard:task", args=["t1"])).content.decode()
    assert f"{reverse('account_signup')}?next=/tasks/t1/" in overview
    response = client.post(
        reverse("account_signup"),
        {"email": "someone@example.org", "password1": "a long passphrase 42", "password2": "a long passphrase 42"},
    )
    # No way back given and no languages to annotate: a researcher, sent to the leaderboard.
    assert response.status_code == 302 and response["Location"] == reverse("leaderboard:overview")


def test_it_explains_which_benchmark_versions_a_model_can_be_run_on(client, dataset):
    Dataset.objects.create(name="nirdesha", version="1.0", declared_pool_size=50_000)
    client.force_login(make_researcher())
    page = client.get(SUBMIT).content.decode()
    assert "Benchmark versions" in page
    assert "nirdesha 1.0</strong>: results only" in page and "pools of 50,000 items per language" in page
    # The demo is the only version with items here; the form offers it and says what it is.
    assert f"{dataset}</strong>: a small sample written to try the site out" in page
