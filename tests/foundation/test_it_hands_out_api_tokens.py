"""API clients: missing or bad credentials get 401 with a challenge; signed-in people get their token
from a page, and the token works."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.people import make_researcher

pytestmark = pytest.mark.django_db


def test_it_answers_401_with_a_challenge_to_missing_credentials():
    response = APIClient().post("/api/submissions/", {"model": "org/m"}, format="json")
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"


def test_it_answers_401_with_a_challenge_to_a_bad_token():
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    response = client.get("/api/submissions/")
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"


def test_it_shows_creates_and_replaces_a_token_for_a_signed_in_person(client):
    person = make_researcher()
    assert client.get("/accounts/api-token/").status_code == 302  # Sign in first.
    client.force_login(person)
    assert "You have no token yet" in client.get("/accounts/api-token/").content.decode()
    assert client.post("/accounts/api-token/").status_code == 302
    first = Token.objects.get(user=person).key
    assert first in client.get("/accounts/api-token/").content.decode()
    client.post("/accounts/api-token/")
    second = Token.objects.get(user=person).key
    assert second != first

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {second}")
    assert api.get("/api/submissions/").status_code == 200
    api.credentials(HTTP_AUTHORIZATION=f"Token {first}")
    assert api.get("/api/submissions/").status_code == 401
