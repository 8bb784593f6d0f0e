"""allauth's log-in, log-out and password-reset pages, in the site's layout, with the e-mail backend."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from django.urls import reverse

from tests.people import PASSWORD, make_researcher

pytestmark = pytest.mark.django_db


def test_it_logs_in_by_email_and_out(client):
    make_researcher()
    page = client.get(reverse("account_login")).content.decode()
    assert "<h1>Log in</h1>" in page and 'class="site-nav"' in page
    response = client.post(reverse("account_login"), {"login": "rahul.researcher@example.org", "password": PASSWORD})
    assert response.status_code == 302
    assert "rahul.researcher@example.org" in client.get("/").content.decode()
    assert "<h1>Log out</h1>" in client.get(reverse("account_logout")).content.decode()
    client.post(reverse("account_logout"))
    assert client.get(reverse("annotation:home")).status_code == 302


def test_it_refuses_a_wrong_password(client):
    make_researcher()
    response = client.post(reverse("account_login"), {"login": "rahul.researcher@example.org", "password": "nope"})
    assert response.status_code == 200
    assert "not correct" in response.content.decode()


def test_it_resets_a_password_through_the_emailed_link(client):
    make_researcher()
    page = client.get(reverse("account_reset_password")).content.decode()
    assert "Reset your password" in page
    response = client.post(reverse("account_reset_password"), {"email": "rahul.researcher@example.org"})
    assert response["Location"] == reverse("account_reset_password_done")
    assert "Check your e-mail" in client.get(response["Location"]).content.decode()
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["rahul.researcher@example.org"]

    link = re.search(r"https?://[^/\s]+(/accounts/password/reset/key/\S+)", mail.outbox[0].body).group(1)
    form_page = client.get(link, follow=True)
    assert "Choose a new password" in form_page.content.decode()
    action = form_page.redirect_chain[-1][0] if form_page.redirect_chain else link
    done = client.post(action, {"password1": "a brand new passphrase 7", "password2": "a brand new passphrase 7"})
    assert done["Location"] == reverse("account_reset_password_from_key_done")
    assert "Password changed" in client.get(done["Location"]).content.decode()
    client.logout()
    assert client.login(email="rahul.researcher@example.org", password="a brand new passphrase 7")


def test_it_explains_a_used_or_broken_reset_link(client):
    page = client.get("/accounts/password/reset/key/zz-set-password/", follow=True).content.decode()
    assert "This link does not work" in page


def test_it_shows_allauths_other_account_pages_in_the_site_layout(client):
    client.force_login(make_researcher())
    for url, heading in ((reverse("account_change_password"), "Change Password"), (reverse("account_email"), "Email")):
        page = " ".join(client.get(url).content.decode().split())
        assert 'class="site-nav"' in page, url
        assert f"<h1> {heading}" in page and "· Nirdesha</title>" in page, url
