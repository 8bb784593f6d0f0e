"""An unreachable Hub is a passing fault: the 503 says when to try again (Retry-After) and records nothing."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from evaluation.models import Run
from tests.fakes.hub import closed_port_url
from tests.people import make_researcher

pytestmark = pytest.mark.django_db


def test_it_sends_retry_after_with_the_hub_unreachable_503(dataset, settings, monkeypatch):
    settings.HF_ENDPOINT = closed_port_url()
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    client = APIClient()
    client.force_authenticate(make_researcher())
    response = client.post("/api/submissions/", {"model": "intfloat/multilingual-e5-small"}, format="json")
    assert response.status_code == 503 and response.json()["code"] == "hub_unreachable"
    assert int(response["Retry-After"]) > 0
    assert not Run.objects.exists()
