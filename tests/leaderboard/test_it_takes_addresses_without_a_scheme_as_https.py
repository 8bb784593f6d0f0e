"""Staff typing an address without its scheme in the admin get https, as Django 6.0 will give them, and
no deprecation warning on the way (Django 5.2 would take it as http and warn on every such form)."""

import warnings

import pytest
from django.contrib import admin
from django.test import RequestFactory
from django.urls import reverse
from django.utils.deprecation import RemovedInDjango60Warning

from evaluation.models import Dataset, EmbeddingModel
from tests.factories import admin_model_change
from tests.people import make_admin

pytestmark = pytest.mark.django_db


def test_a_models_hub_address_typed_without_a_scheme_is_stored_as_https(client):
    model = EmbeddingModel.objects.create(name="owner/model", display_name="Model")
    client.force_login(make_admin())
    url = reverse("admin:evaluation_embeddingmodel_change", args=[model.pk])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RemovedInDjango60Warning)
        assert client.get(url).status_code == 200
        response = client.post(url, admin_model_change(model, hub_url="huggingface.co/owner/model"))
    assert response.status_code == 302, response.content.decode()[:2000]
    model.refresh_from_db()
    assert model.hub_url == "https://huggingface.co/owner/model"


def test_a_datasets_homepage_typed_without_a_scheme_is_taken_as_https():
    request = RequestFactory().get("/admin/")
    request.user = make_admin()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RemovedInDjango60Warning)
        form_class = admin.site._registry[Dataset].get_form(request)
        homepage = form_class().fields["homepage"]
    assert homepage.clean("example.org/nirdesha") == "https://example.org/nirdesha"
    # An address with its scheme keeps it.
    assert homepage.clean("http://example.org/nirdesha") == "http://example.org/nirdesha"
