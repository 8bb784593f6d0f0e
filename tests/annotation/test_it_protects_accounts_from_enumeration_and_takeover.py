"""Accounts: sign-up and password reset answer the same for a known and an unknown address, and a reset
password or a changed e-mail revokes the account's API tokens and other sessions."""

from __future__ import annotations

import re

import pytest
from allauth.account.models import EmailAddress
from django.contrib.sessions.models import Session
from django.core import mail
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from tests.people import PASSWORD, make_researcher

pytestmark = pytest.mark.django_db
KNOWN = "rahul.researcher@example.org"
NEW_PASSWORD = "a brand new passphrase 7"


def answer(response) -> tuple[int, str, str]:
    """What the person sees: the status, where it leads, and that page's main text without the address."""
    client = Client()
    location = response.get("Location", "")
    page = client.get(location).content.decode() if location else response.content.decode()
    main = re.search(r"<main.*?</main>", page, re.S)
    return (
        response.status_code,
        location,
        (main.group(0) if main else page).replace(KNOWN, "").replace("nobody.new@example.org", ""),
    )


def test_sign_up_answers_the_same_for_a_known_address(client, settings):
    # The shipped setting (the test settings turn verification off for the other tests).
    from config.settings import base

    settings.ACCOUNT_EMAIL_VERIFICATION = base.ACCOUNT_EMAIL_VERIFICATION
    make_researcher()
    signup = reverse("account_signup")
    fields = {"password1": PASSWORD + " x", "password2": PASSWORD + " x"}
    known = Client().post(signup, {"email": KNOWN, **fields})
    new = Client().post(signup, {"email": "nobody.new@example.org", **fields})
    assert answer(known) == answer(new)
    assert known.status_code == 302
    assert "already registered" not in Client().get(known["Location"]).content.decode()
    # The owner of the known address hears about the attempt by e-mail, not the person at the form.
    assert sorted(message.to[0] for message in mail.outbox) == sorted([KNOWN, "nobody.new@example.org"])


def test_password_reset_answers_the_same_for_an_unknown_address(client):
    make_researcher()
    reset = reverse("account_reset_password")
    known = Client().post(reset, {"email": KNOWN})
    unknown = Client().post(reset, {"email": "nobody.new@example.org"})
    assert answer(known) == answer(unknown)


def reset_password_through_the_link(client: Client) -> None:
    client.post(reverse("account_reset_password"), {"email": KNOWN})
    link = re.search(r"https?://[^/\s]+(/accounts/password/reset/key/\S+)", mail.outbox[-1].body).group(1)
    form_page = client.get(link, follow=True)
    action = form_page.redirect_chain[-1][0] if form_page.redirect_chain else link
    done = client.post(action, {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD})
    assert done["Location"] == reverse("account_reset_password_from_key_done")


def test_a_password_reset_revokes_the_token_and_every_session(client):
    person = make_researcher()
    token = Token.objects.create(user=person)
    squatter = Client()
    squatter.force_login(person)
    assert squatter.get("/api/submissions/", HTTP_AUTHORIZATION=f"Token {token.key}").status_code == 200

    reset_password_through_the_link(Client())

    assert not Token.objects.filter(user=person).exists()
    assert Client().get("/api/submissions/", HTTP_AUTHORIZATION=f"Token {token.key}").status_code == 401
    assert not [s for s in Session.objects.all() if s.get_decoded().get("_auth_user_id") == str(person.pk)]
    assert squatter.get(reverse("accounts:api_token")).status_code == 302


def test_an_email_change_revokes_the_token_and_other_sessions(client):
    person = make_researcher()
    token = Token.objects.create(user=person)
    other = Client()
    other.force_login(person)
    EmailAddress.objects.create(user=person, email="rahul.new@example.org", verified=True, primary=False)
    client.force_login(person)

    response = client.post(reverse("account_email"), {"action_primary": "", "email": "rahul.new@example.org"})

    assert response.status_code == 302
    assert EmailAddress.objects.get(user=person, primary=True).email == "rahul.new@example.org"
    assert not Token.objects.filter(pk=token.pk).exists()
    assert other.get(reverse("accounts:api_token")).status_code == 302
    # The person who made the change stays signed in.
    assert client.get(reverse("accounts:api_token")).status_code == 200
