"""The daily quota holds: a confirmed e-mail address is needed, and one address (an IPv6 /64) shares one quota."""

from __future__ import annotations

import pytest
from allauth.account.models import EmailAddress
from django.urls import reverse
from rest_framework.test import APIClient

from evaluation.models import Run
from evaluation.networks import client_network
from tests.people import make_user

pytestmark = pytest.mark.django_db
URL = reverse("evaluation:submit")


@pytest.fixture
def models(fake_hub, model_copy):
    for index in range(4):
        fake_hub.add(f"org/model-{index}", model_copy(f"m{index}"))
    return [f"org/model-{index}" for index in range(4)]


def api_as(person, address: str) -> APIClient:
    api = APIClient(REMOTE_ADDR=address)
    api.force_authenticate(person)
    return api


def test_it_refuses_a_person_whose_address_is_not_confirmed(client, dataset, models):
    person = make_user("never.confirmed@example.org")
    EmailAddress.objects.filter(user=person).update(verified=False)
    client.force_login(person)
    page = client.post(URL, {"model": models[0]}).content.decode()
    assert "Confirm your e-mail address before submitting" in page
    response = api_as(person, "198.51.100.4").post("/api/submissions/", {"model": models[0]}, format="json")
    assert response.status_code == 403 and response.json()["code"] == "unverified"
    assert not Run.objects.exists()


def test_three_accounts_on_one_address_share_its_quota(dataset, models, settings):
    settings.SUBMISSION_DAILY_QUOTA = 5
    settings.SUBMISSION_DAILY_QUOTA_PER_ADDRESS = 2
    people = [make_user(f"sock{index}@example.org") for index in range(3)]
    answers = [
        api_as(person, "203.0.113.7").post("/api/submissions/", {"model": model}, format="json")
        for person, model in zip(people, models, strict=False)
    ]
    assert [answer.status_code for answer in answers] == [201, 201, 429]
    refusal = answers[2].json()
    assert refusal["code"] == "quota"
    assert "at most 5 submissions per person and 2 per client address (per /64 network for IPv6)" in refusal["detail"]
    # Another address is another quota.
    assert (
        api_as(people[2], "203.0.113.8").post("/api/submissions/", {"model": models[3]}, format="json").status_code
        == 201
    )


def test_one_ipv6_64_is_one_address(dataset, models, settings):
    settings.SUBMISSION_DAILY_QUOTA_PER_ADDRESS = 1
    first, second = make_user("v6a@example.org"), make_user("v6b@example.org")
    one = api_as(first, "2001:db8:1:2::1").post("/api/submissions/", {"model": models[0]}, format="json")
    same_64 = api_as(second, "2001:db8:1:2:ffff::9").post("/api/submissions/", {"model": models[1]}, format="json")
    other_64 = api_as(second, "2001:db8:1:3::1").post("/api/submissions/", {"model": models[2]}, format="json")
    assert (one.status_code, same_64.status_code, other_64.status_code) == (201, 429, 201)
    assert client_network("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert client_network("::ffff:203.0.113.7") == "203.0.113.7"


def test_the_submit_page_states_both_limits(client, dataset, settings):
    settings.SUBMISSION_DAILY_QUOTA = 5
    settings.SUBMISSION_DAILY_QUOTA_PER_ADDRESS = 7
    client.force_login(make_user("reader@example.org"))
    page = client.get(URL).content.decode()
    assert "<strong>5</strong> submissions per person and <strong>7</strong> per client address" in page
    assert "per /64 network for IPv6" in page
