"""Every API list is paged with a capped page size; absurd limits and offsets answer 200, not 500."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from config.pagination import MAX_PAGE_SIZE
from evaluation.models import Score
from tests.factories import make_dataset, make_run
from tests.people import make_admin

pytestmark = pytest.mark.django_db

LISTS = ["/api/runs/", "/api/scores/", "/api/models/", "/api/datasets/", "/api/submissions/"]


def test_it_caps_the_page_size(client):
    dataset = make_dataset()
    for number in range(6):
        make_run(dataset, f"org/m{number}")
    assert Score.objects.count() > MAX_PAGE_SIZE
    body = client.get("/api/scores/?limit=100000000").json()
    assert len(body["results"]) == MAX_PAGE_SIZE and body["count"] == Score.objects.count()
    assert body["next"] is not None


@pytest.mark.parametrize("query", ["limit=99999999999999999999", "offset=99999999999999999999", "limit=-1&offset=x"])
def test_it_answers_absurd_numbers_without_an_error(query):
    make_run(make_dataset(), "org/alpha")
    client = APIClient()
    client.force_authenticate(make_admin())
    for url in LISTS:
        response = client.get(f"{url}?{query}")
        assert response.status_code == 200, (url, response.content[:300])
