"""The submit page: limits shown, a staff folder accepted, every refusal explained and nothing written."""

from __future__ import annotations

import pytest
from django.template.defaultfilters import filesizeformat
from django.test import Client
from django.urls import reverse

from evaluation.models import EmbeddingModel, Run
from tests.fakes.hub import closed_port_url
from tests.people import PASSWORD, make_admin, make_researcher
from tests.submissions.data import drain_queue, validation_dataset

pytestmark = pytest.mark.django_db
URL = reverse("evaluation:submit")


def signed_in(user, *, csrf: bool = False) -> Client:
    client = Client(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


def test_it_asks_anonymous_visitors_to_sign_in(client):
    response = client.get(URL)
    assert response.status_code == 302
    assert reverse("account_login") in response["Location"]


def test_it_shows_the_limits(settings, dataset):
    settings.SUBMISSION_DAILY_QUOTA = 3
    settings.SUBMISSION_MAX_RUN_SECONDS = 4 * 3600
    page = signed_in(make_researcher()).get(URL).content.decode()
    assert filesizeformat(settings.SUBMISSION_MAX_MODEL_BYTES) in page
    assert "<strong>3</strong> submissions per person and" in page
    assert '<strong id="submissions-left">3</strong> left' in page
    assert "<strong>4.0 hours</strong>" in page
    assert str(dataset) in page


def test_it_queues_a_staff_folder_and_sends_its_preflight_task(dataset, tiny_model, django_capture_on_commit_callbacks):
    drain_queue("preflight")
    admin = make_admin()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = signed_in(admin).post(
            URL, {"model": str(tiny_model), "display_name": "Tiny", "note": "smoke", "dataset": dataset.pk}
        )
    run = Run.objects.get()
    assert response.status_code == 302 and response["Location"] == run.get_absolute_url()
    assert run.status == Run.Status.QUEUED
    assert run.submitted_by == admin and run.note == "smoke" and run.dataset == dataset
    assert run.resolved_commit and run.engine_version
    assert run.model.is_local and run.model.display_name == "Tiny" and run.model.parameter_count > 0
    assert list(run.stage_timestamps) == ["QUEUED"]
    assert len(callbacks) == 1
    assert drain_queue("preflight") == [("evaluation.preflight_run", [run.pk])]


def test_it_defaults_to_the_full_dataset_and_falls_back_to_the_demo(dataset, model_copy):
    client = signed_in(make_admin())
    client.post(URL, {"model": str(model_copy("first"))})
    assert Run.objects.get().dataset == dataset and dataset.is_demo
    full = validation_dataset()
    assert f'<option value="{full.pk}" selected>' in client.get(URL).content.decode()
    client.post(URL, {"model": str(model_copy("second"))})
    assert Run.objects.latest("created_at").dataset == full


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("not a model id", "is not a valid Hugging Face model id"),
        ("https://huggingface.co/x/y", "not a URL"),
        ("/srv/models/tiny", "Only staff may submit a model folder"),
    ],
)
def test_it_refuses_bad_model_fields_and_writes_nothing(dataset, model, message):
    response = signed_in(make_researcher()).post(URL, {"model": model})
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Run.objects.exists() and not EmbeddingModel.objects.exists()


def test_it_refuses_a_duplicate_with_a_link_to_the_live_run(dataset, tiny_model):
    client = signed_in(make_admin())
    client.post(URL, {"model": str(tiny_model)})
    first = Run.objects.get()
    response = client.post(URL, {"model": str(tiny_model), "note": "again"})
    page = response.content.decode()
    assert response.status_code == 200
    assert "already evaluated or queued" in page
    assert f'href="{first.get_absolute_url()}"' in page
    assert Run.objects.count() == 1


def test_it_allows_a_new_run_once_the_earlier_one_failed(dataset, tiny_model):
    client = signed_in(make_admin())
    client.post(URL, {"model": str(tiny_model)})
    Run.objects.update(status=Run.Status.FAILED, failure_category=Run.FailureCategory.SUBMITTER)
    client.post(URL, {"model": str(tiny_model)})
    assert Run.objects.count() == 2


def test_it_holds_the_daily_quota_but_gives_back_our_failures(settings, dataset, model_copy):
    settings.SUBMISSION_DAILY_QUOTA = 2
    client = signed_in(make_admin())
    for name in ("one", "two"):
        assert client.post(URL, {"model": str(model_copy(name))}).status_code == 302
    response = client.post(URL, {"model": str(model_copy("three"))})
    assert "The daily quota is used up for your account or for your address: at most 2 submissions per person" in (
        response.content.decode()
    )
    assert Run.objects.count() == 2
    Run.objects.filter(model__name__endswith="one").update(
        status=Run.Status.FAILED, failure_category=Run.FailureCategory.OURS
    )
    assert client.post(URL, {"model": str(model_copy("four"))}).status_code == 302
    assert Run.objects.count() == 3


def test_it_refuses_a_post_without_the_csrf_token(dataset, tiny_model):
    response = signed_in(make_admin(), csrf=True).post(URL, {"model": str(tiny_model)})
    assert response.status_code == 403
    assert not Run.objects.exists()


def test_it_accepts_a_post_with_the_csrf_token(dataset, tiny_model):
    make_admin()
    client = Client(enforce_csrf_checks=True)
    assert client.login(username="alice.admin@example.org", password=PASSWORD)
    client.get(URL)
    token = client.cookies["csrftoken"].value
    response = client.post(URL, {"model": str(tiny_model), "csrfmiddlewaretoken": token})
    assert response.status_code == 302 and Run.objects.count() == 1


def test_it_says_when_the_hub_cannot_be_reached(settings, monkeypatch, dataset):
    settings.HF_ENDPOINT = closed_port_url()
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    response = signed_in(make_researcher()).post(URL, {"model": "intfloat/multilingual-e5-small"})
    assert response.status_code == 200
    assert "Cannot reach the Hugging Face Hub right now; please try again later." in response.content.decode()
    assert not Run.objects.exists() and not EmbeddingModel.objects.exists()


def test_it_records_the_languages_ticked_on_the_form(dataset, tiny_model):
    client = signed_in(make_admin())
    page = client.get(URL).content.decode()
    assert 'name="declared_languages" value="urd"' in page and "Supported languages" in page
    response = client.post(URL, {"model": str(tiny_model), "declared_languages": ["mar", "guj"]})
    assert response.status_code == 302
    assert EmbeddingModel.objects.get(name=str(tiny_model)).declared_languages == ["guj", "mar"]
