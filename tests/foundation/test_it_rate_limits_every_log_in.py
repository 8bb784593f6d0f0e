"""Every log-in is rate-limited: the admin's form sends people to allauth's, which counts failures."""

from __future__ import annotations

import pytest

from tests.people import PASSWORD, make_admin

pytestmark = pytest.mark.django_db


def test_it_does_not_check_passwords_on_the_admin_form(client):
    admin = make_admin()
    response = client.post("/admin/login/", {"username": admin.username, "password": PASSWORD, "next": "/admin/"})
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert client.get("/admin/").status_code == 302  # Still not signed in.


def test_it_sends_the_admin_to_the_rate_limited_log_in_and_back(client):
    admin = make_admin()
    response = client.get("/admin/")
    assert response.status_code == 302
    login = client.get(response["Location"], follow=True)
    assert login.status_code == 200 and "/accounts/login/" in login.request["PATH_INFO"]
    signed_in = client.post("/accounts/login/?next=/admin/", {"login": admin.email, "password": PASSWORD})
    assert signed_in.status_code == 302 and signed_in["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


def test_it_refuses_the_right_password_after_many_wrong_ones(client):
    admin = make_admin()
    for _ in range(30):
        client.post("/accounts/login/", {"login": admin.email, "password": "wrong"})
    response = client.post("/accounts/login/", {"login": admin.email, "password": PASSWORD})
    assert response.status_code in (200, 429)
    assert client.get("/admin/").status_code == 302
