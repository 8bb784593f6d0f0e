"""Hostile requests get a clear 400 (or 404), never a 500: control characters in parameters, deep or
large JSON bodies, and a staff submission of the whole file system as a model folder."""

from __future__ import annotations

import json
import time

import pytest
from rest_framework.test import APIClient

from evaluation.models import Run
from tests.people import make_admin

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url",
    [
        "/annotate/agreement/?dataset=nirdesha%00@1.0",
        "/api/agreement/?dataset=nirdesha%00@1.0",
        "/?dataset=1%00",
        "/tasks/t1/?languages=hin%01",
    ],
)
def test_it_answers_400_to_a_nul_or_control_character_in_a_parameter(client, url):
    response = client.get(url)
    assert response.status_code == 400
    assert "control character" in response.content.decode()


def test_it_refuses_a_nul_in_a_form_field(client):
    client.force_login(make_admin())
    response = client.post("/evaluation/submit/", {"model": "org/model\x00"})
    assert response.status_code == 400 and not Run.objects.exists()


def api_client() -> APIClient:
    client = APIClient()
    client.force_authenticate(make_admin())
    return client


def test_it_answers_400_to_a_deeply_nested_json_body():
    body = "[" * 1000 + "]" * 1000
    response = api_client().post("/api/submissions/", body, content_type="application/json")
    assert response.status_code == 400 and "nested more than" in response.json()["detail"]


def test_it_answers_400_to_an_oversized_json_body():
    body = json.dumps({"model": "org/model", "note": "x" * 200_000})
    response = api_client().post("/api/submissions/", body, content_type="application/json")
    assert response.status_code == 400 and "at most" in response.json()["detail"]


def test_it_answers_400_to_an_escaped_nul_in_a_json_body():
    response = api_client().post("/api/submissions/", '{"model": "org/m\\u0000"}', content_type="application/json")
    assert response.status_code == 400 and "control character" in response.json()["detail"]
    assert not Run.objects.exists()


def test_it_refuses_the_root_folder_as_a_model_quickly(client):
    from tests.submissions.data import demo_dataset

    demo_dataset()
    client.force_login(make_admin())
    started = time.monotonic()
    response = client.post("/evaluation/submit/", {"model": "/"})
    assert time.monotonic() - started < 5
    assert response.status_code == 200 and "is not a transformers model folder" in response.content.decode()
    assert not Run.objects.exists()
