"""Submission attempts are rate-limited per person and per client address, on the API and the form."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from config.cache import redis_cache
from evaluation.models import Run
from tests.people import make_admin, make_outsider, make_researcher
from tests.services import closed_port_url

pytestmark = pytest.mark.django_db
LIST = "/api/submissions/"


def api_client(user, address: str = "198.51.100.7") -> APIClient:
    client = APIClient(REMOTE_ADDR=address)
    client.force_authenticate(user)
    return client


def test_it_limits_one_person_across_addresses(settings, dataset, model_copy):
    settings.SUBMISSION_RATE_PER_USER = 2
    admin = make_admin()
    codes = [
        api_client(admin, f"198.51.100.{k}").post(LIST, {"model": str(model_copy(f"u{k}"))}, format="json")
        for k in range(3)
    ]
    assert [response.status_code for response in codes] == [201, 201, 429]
    assert codes[2].json()["code"] == "rate_limited" and Run.objects.count() == 2


def test_it_limits_one_address_across_people(settings, dataset):
    settings.SUBMISSION_RATE_PER_IP = 2
    people = [make_researcher(), make_outsider(), make_admin()]
    # Refused attempts count too: each asks the Hub (here: an invalid name, refused before that).
    answers = [api_client(person).post(LIST, {"model": "not a model"}, format="json") for person in people]
    assert [response.status_code for response in answers] == [400, 400, 429]
    assert api_client(people[2], "203.0.113.9").post(LIST, {"model": "not a model"}, format="json").status_code == 400


def test_it_limits_the_form_too(client, settings, dataset):
    settings.SUBMISSION_RATE_PER_USER = 1
    client.force_login(make_researcher())
    assert client.post("/evaluation/submit/", {"model": "not a model"}).status_code == 200
    response = client.post("/evaluation/submit/", {"model": "not a model"})
    assert response.status_code == 429 and "Too many submission attempts" in response.content.decode()


def test_it_still_limits_while_the_cache_is_down(settings, dataset, caplog):
    """With Redis unreachable the attempts are counted in the process's memory: the limit holds and
    nobody is refused for the outage itself."""
    settings.CACHES = {"default": redis_cache(closed_port_url())}
    settings.SUBMISSION_RATE_PER_IP = 2
    people = [make_researcher(), make_outsider(), make_admin()]
    bad = {"model": "not a model"}
    answers = [api_client(person, "192.0.2.55").post(LIST, bad, format="json") for person in people]
    assert [response.status_code for response in answers] == [400, 400, 429]
    assert api_client(people[2], "192.0.2.56").post(LIST, bad, format="json").status_code == 400
    assert "Cache unavailable" in caplog.text
