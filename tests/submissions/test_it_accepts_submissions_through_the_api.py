"""POST /api/submissions/ and GET /api/submissions/<id>/: token or session auth, the form's rules, scoped reads."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evaluation.models import EmbeddingModel, Run
from tests.fakes.hub import closed_port_url
from tests.people import make_admin, make_outsider, make_researcher

pytestmark = pytest.mark.django_db
LIST = "/api/submissions/"


def token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def test_it_creates_a_run_for_a_token_holder_and_reports_its_status(dataset, tiny_model):
    admin = make_admin()
    client = token_client(admin)
    response = client.post(LIST, {"model": str(tiny_model), "note": "via API"}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    run = Run.objects.get()
    assert body["id"] == run.pk and body["status"] == "QUEUED" and body["queue_position"] == 1
    assert response["Location"] == run.get_absolute_url()
    detail = client.get(f"{LIST}{run.pk}/").json()
    assert detail["status"] == "QUEUED" and detail["stage_detail"] == "" and detail["progress"] == 0
    assert detail["model"] == str(tiny_model) and detail["note"] == "via API" and detail["scores"] == []


def test_it_records_a_declared_training_on_nirdesha_data(dataset, tiny_model):
    client = token_client(make_admin())
    response = client.post(LIST, {"model": str(tiny_model), "trained_on_nirdesha": True}, format="json")
    assert response.status_code == 201, response.content
    assert EmbeddingModel.objects.get(name=str(tiny_model)).trained_on_nirdesha is True


def test_it_refuses_unauthenticated_posts(dataset, tiny_model):
    response = APIClient().post(LIST, {"model": str(tiny_model)}, format="json")
    assert response.status_code in (401, 403)
    assert not Run.objects.exists()


def test_it_refuses_a_forged_session_post_without_csrf(dataset, tiny_model):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(make_admin())
    response = client.post(LIST, {"model": str(tiny_model)}, format="json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]
    assert not Run.objects.exists()


def test_it_answers_refusals_with_codes_a_client_can_act_on(settings, monkeypatch, dataset, model_copy):
    settings.SUBMISSION_DAILY_QUOTA = 2
    client = token_client(make_admin())
    first = model_copy("first")
    assert client.post(LIST, {"model": str(first)}, format="json").status_code == 201

    duplicate = client.post(LIST, {"model": str(first)}, format="json")
    assert duplicate.status_code == 409
    assert duplicate.json()["code"] == "duplicate" and duplicate.json()["run"]["id"] == Run.objects.get().pk

    malformed = client.post(LIST, {"model": "no spaces allowed"}, format="json")
    assert malformed.status_code == 400 and "model" in malformed.json()

    assert client.post(LIST, {"model": str(model_copy("second"))}, format="json").status_code == 201
    over = client.post(LIST, {"model": str(model_copy("third"))}, format="json")
    assert over.status_code == 429 and over.json()["code"] == "quota"

    settings.SUBMISSION_DAILY_QUOTA = 5
    settings.HF_ENDPOINT = closed_port_url()
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    unreachable = client.post(LIST, {"model": "intfloat/multilingual-e5-small"}, format="json")
    assert unreachable.status_code == 503
    assert unreachable.json()["detail"] == "Cannot reach the Hugging Face Hub right now; please try again later."
    assert Run.objects.count() == 2


def test_it_refuses_local_folders_from_people_who_are_not_staff(dataset, tiny_model):
    response = token_client(make_researcher()).post(LIST, {"model": str(tiny_model)}, format="json")
    assert response.status_code == 403 and response.json()["code"] == "forbidden"
    assert not Run.objects.exists()


def test_it_hides_other_peoples_submissions(dataset, tiny_model):
    token_client(make_admin()).post(LIST, {"model": str(tiny_model)}, format="json")
    run = Run.objects.get()
    outsider = token_client(make_outsider())
    assert outsider.get(f"{LIST}{run.pk}/").status_code == 404
    assert outsider.get(LIST).json()["results"] == []
    assert outsider.post(f"{LIST}{run.pk}/cancel/").status_code == 404
    run.refresh_from_db()
    assert run.status == Run.Status.QUEUED


def test_it_lets_the_submitter_cancel_and_only_staff_requeue(dataset, tiny_model):
    researcher = make_researcher()
    run = Run.objects.create(model=_model(tiny_model), dataset=dataset, submitted_by=researcher, resolved_commit="c1")
    client = token_client(researcher)
    cancelled = client.post(f"{LIST}{run.pk}/cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "CANCELLED"
    assert client.post(f"{LIST}{run.pk}/cancel/").status_code == 409
    assert client.post(f"{LIST}{run.pk}/requeue/").status_code == 403
    requeued = token_client(make_admin()).post(f"{LIST}{run.pk}/requeue/")
    assert requeued.status_code == 200 and requeued.json()["status"] == "QUEUED"


def _model(folder):
    return EmbeddingModel.objects.create(name=str(folder), is_local=True)


def test_it_records_the_languages_a_submitter_declares(dataset, tiny_model):
    client = token_client(make_admin())
    bad = client.post(LIST, {"model": str(tiny_model), "declared_languages": ["hin", "xyz"]}, format="json")
    assert bad.status_code == 400 and "declared_languages" in bad.json()
    assert not Run.objects.exists()
    response = client.post(LIST, {"model": str(tiny_model), "declared_languages": ["urd", "hin"]}, format="json")
    assert response.status_code == 201, response.content
    # Stored in the benchmark's language order, whatever order they were sent in.
    assert EmbeddingModel.objects.get(name=str(tiny_model)).declared_languages == ["hin", "urd"]
