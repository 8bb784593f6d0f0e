"""40 submissions from 4 people at the same moment through the API: each recorded once, quotas held."""

from __future__ import annotations

from collections import Counter

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evaluation.models import Run
from tests.people import make_user
from tests.submissions.concurrency import at_once
from tests.submissions.data import drain_queue

# Threads need committed rows: a transactional test.
pytestmark = [pytest.mark.django_db(transaction=True)]
PEOPLE = 4
QUOTA = 4


def test_it_records_each_accepted_submission_once_and_holds_the_quota(settings, dataset, model_copy):
    settings.SUBMISSION_DAILY_QUOTA = QUOTA
    drain_queue("preflight")
    people = [make_user(f"person{n}@example.org", staff=True) for n in range(PEOPLE)]
    tokens = {person.pk: Token.objects.create(user=person).key for person in people}
    # Each person sends 10 submissions of 6 different folders (four of them twice): more than the
    # quota, and with duplicates racing each other.
    requests = []
    for person in people:
        folders = [model_copy(f"p{person.pk}-m{k}") for k in range(6)]
        for k in range(10):
            requests.append((person, folders[k % 6]))

    def post(person, folder):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {tokens[person.pk]}")
        response = client.post("/api/submissions/", {"model": str(folder)}, format="json")
        return person.pk, response.status_code, response.json()

    results = at_once([lambda p=p, f=f: post(p, f) for p, f in requests], threads=8)
    errors = [result for result in results if isinstance(result, Exception)]
    assert errors == []
    statuses = Counter(status for _, status, _ in results)
    accepted = [(pk, body["id"]) for pk, status, body in results if status == 201]
    refused_codes = Counter(body["code"] for _, status, body in results if status != 201)

    runs = Run.objects.all()
    assert runs.count() == len(accepted) == PEOPLE * QUOTA, statuses
    assert sorted(run_id for _, run_id in accepted) == sorted(runs.values_list("pk", flat=True))
    assert Counter(runs.values_list("submitted_by", flat=True)) == {person.pk: QUOTA for person in people}
    assert len(set(runs.values_list("resolved_commit", flat=True))) == runs.count()
    assert set(refused_codes) <= {"duplicate", "quota"} and sum(refused_codes.values()) == 40 - PEOPLE * QUOTA
    assert set(statuses) <= {201, 409, 429}
    # Every recorded run sent its pre-flight task exactly once.
    messages = drain_queue("preflight")
    assert sorted(args[0] for _, args in messages) == sorted(run_id for _, run_id in accepted)
