"""Hub ids are case-insensitive: every spelling of a model is one model row, under the Hub's own spelling."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluation.models import EmbeddingModel, Run
from tests.people import make_outsider, make_researcher

pytestmark = pytest.mark.django_db
URL = reverse("evaluation:submit")


def test_it_keeps_one_row_under_the_hubs_spelling(client, dataset, fake_hub, tiny_model):
    repo = fake_hub.add("probe-org/Victim-Model", tiny_model)
    client.force_login(make_researcher())
    response = client.post(URL, {"model": "PROBE-ORG/VICTIM-MODEL", "declared_languages": ["hin"]})
    assert response.status_code == 302
    model = EmbeddingModel.objects.get()
    assert model.name == "probe-org/Victim-Model"
    assert Run.objects.get().resolved_commit == repo.commit


@pytest.mark.parametrize("second", ["probe-org/victim-model", "PROBE-ORG/VICTIM-MODEL", "probe-org/Victim-Model"])
def test_it_refuses_the_same_commit_under_another_spelling_as_a_duplicate(
    client, dataset, fake_hub, tiny_model, second
):
    fake_hub.add("probe-org/victim-model", tiny_model)
    client.force_login(make_researcher())
    assert client.post(URL, {"model": "probe-org/victim-model"}).status_code == 302
    client.force_login(make_outsider())
    response = client.post(URL, {"model": second, "declared_languages": ["urd"]})
    assert response.status_code == 200
    assert "already evaluated or queued" in response.content.decode()
    assert EmbeddingModel.objects.count() == 1 and Run.objects.count() == 1
    assert EmbeddingModel.objects.get().declared_languages == []


def test_it_counts_every_spelling_towards_one_model_in_the_api(dataset, fake_hub, tiny_model):
    from rest_framework.test import APIClient

    fake_hub.add("probe-org/victim-model", tiny_model)
    api = APIClient()
    api.force_authenticate(make_researcher())
    first = api.post("/api/submissions/", {"model": "probe-org/victim-model"}, format="json")
    second = api.post("/api/submissions/", {"model": "Probe-Org/Victim-Model"}, format="json")
    assert (first.status_code, second.status_code) == (201, 409)
    assert second.json()["run"]["id"] == first.json()["id"]


def test_the_database_holds_one_row_per_model_in_any_case(db):
    from django.db import IntegrityError, transaction

    EmbeddingModel.objects.create(name="probe-org/victim-model")
    with pytest.raises(IntegrityError), transaction.atomic():
        EmbeddingModel.objects.create(name="PROBE-ORG/victim-model")
    assert EmbeddingModel.objects.named("Probe-Org/Victim-Model").get().name == "probe-org/victim-model"
