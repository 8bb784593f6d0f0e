"""Every API list is paged with a capped page size; huge limits and offsets answer 200, not 500, and what is
not a page number at all gets a 400 that names the parameter."""

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


@pytest.mark.parametrize("query", ["limit=99999999999999999999", "offset=99999999999999999999"])
def test_it_answers_absurd_numbers_without_an_error(query):
    make_run(make_dataset(), "org/alpha")
    client = APIClient()
    client.force_authenticate(make_admin())
    for url in LISTS:
        response = client.get(f"{url}?{query}")
        assert response.status_code == 200, (url, response.content[:300])


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ("limit=-1", "limit"),
        ("limit=0", "limit"),
        ("limit=abc", "limit"),
        ("offset=x", "offset"),
        ("offset=-3", "offset"),
    ],
)
def test_it_refuses_what_is_not_a_page_number(query, parameter):
    make_run(make_dataset(), "org/alpha")
    client = APIClient()
    client.force_authenticate(make_admin())
    for url in LISTS:
        response = client.get(f"{url}?{query}")
        assert response.status_code == 400, (url, response.content[:300])
        assert parameter in response.json()
