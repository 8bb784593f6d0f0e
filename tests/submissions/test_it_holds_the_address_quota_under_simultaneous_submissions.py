"""Eight people behind one address submit at the same moment: the address's quota still holds exactly.

Each submission locks its own person's row, which serialises one person's submissions but not eight
people's; the client network is locked too, so the count of its runs cannot be raced.
"""

from __future__ import annotations

from collections import Counter

import pytest
from rest_framework.test import APIClient

from evaluation.models import Run
from tests.people import make_user
from tests.submissions.concurrency import at_once
from tests.submissions.data import drain_queue

pytestmark = [pytest.mark.django_db(transaction=True)]
PEOPLE = 8
PER_ADDRESS = 3


def test_people_sharing_an_address_cannot_race_past_its_quota(settings, dataset, model_copy):
    settings.SUBMISSION_DAILY_QUOTA = 5
    settings.SUBMISSION_DAILY_QUOTA_PER_ADDRESS = PER_ADDRESS
    drain_queue("preflight")
    # Staff, so that each may submit a local folder (no Hub needed); staff still count towards quotas.
    people = [make_user(f"neighbour{n}@example.org", staff=True) for n in range(PEOPLE)]
    folders = [model_copy(f"n{n}") for n in range(PEOPLE)]

    def post(person, folder):
        client = APIClient(REMOTE_ADDR="2001:db8:7:7::1")
        client.force_authenticate(person)
        response = client.post("/api/submissions/", {"model": str(folder)}, format="json")
        return response.status_code, response.json().get("code")

    results = at_once([lambda p=p, f=f: post(p, f) for p, f in zip(people, folders, strict=True)], threads=PEOPLE)
    assert not [result for result in results if isinstance(result, Exception)], results
    assert Counter(results) == {(201, None): PER_ADDRESS, (429, "quota"): PEOPLE - PER_ADDRESS}, results
    assert Run.objects.count() == PER_ADDRESS
    drain_queue("preflight")
