"""Staff edit a model's declared languages in the admin, as ticks stored in the benchmark's language order."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluation.models import EmbeddingModel
from tests.factories import admin_model_change
from tests.people import make_admin

pytestmark = pytest.mark.django_db


def test_it_saves_the_ticked_languages(client):
    model = EmbeddingModel.objects.create(name="owner/model", display_name="Model")
    client.force_login(make_admin())
    url = reverse("admin:evaluation_embeddingmodel_change", args=[model.pk])
    page = client.get(url).content.decode()
    assert 'name="declared_languages"' in page
    response = client.post(url, admin_model_change(model, declared_languages=["urd", "hin"]))
    assert response.status_code == 302, response.content.decode()[:2000]
    model.refresh_from_db()
    assert model.declared_languages == ["hin", "urd"]
    listing = client.get(reverse("admin:evaluation_embeddingmodel_changelist")).content.decode()
    assert "2 of 12" in listing
