"""Numbers too large for the database, in a filter or a form field, get a clear 400 or a form error, never a 500."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from annotation.forms import CampaignForm, RatingForm
from evaluation.admin import EmbeddingModelForm
from evaluation.forms import SubmissionForm
from tests.factories import make_dataset, make_run
from tests.people import make_admin, make_researcher

HUGE = ["99999999999999999999999", "1e30", "-99999999999999999999999", "9223372036854775808", "1.5", "NaN"]


@pytest.mark.django_db
@pytest.mark.parametrize("value", HUGE)
@pytest.mark.parametrize("url", ["/api/scores/?dataset={}", "/api/scores/?run={}", "/api/runs/?dataset={}"])
def test_it_answers_an_overflowing_api_filter_with_a_clear_400(url, value):
    make_run(make_dataset(), "org/alpha")
    response = APIClient().get(url.format(value))
    assert response.status_code == 400, response.content
    assert response.json(), "the 400 says which parameter is wrong"


@pytest.mark.django_db
def test_it_still_filters_by_a_real_dataset_id():
    run = make_run(make_dataset(), "org/alpha")
    response = APIClient().get(f"/api/scores/?dataset={run.dataset_id}&limit=1")
    assert response.status_code == 200 and response.json()["count"] > 0


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["1" + "0" * 30, str(2**63)])
def test_it_refuses_an_overflowing_parameter_count_in_the_staff_model_form(value):
    data = {"name": "org/m", "kind": "dense", "created_at": "2026-01-01 00:00", "parameter_count": value}
    form = EmbeddingModelForm(data=data)
    assert not form.is_valid() and "parameter_count" in form.errors


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["1" + "0" * 30, str(2**63)])
def test_it_refuses_an_overflowing_campaign_seed_and_sample_size(value):
    dataset = make_dataset()
    form = CampaignForm(
        data={"name": "r", "dataset": dataset.pk, "language": "hin", "ratings_per_item": 2, "sample_size": value,
              "seed": value}
    )  # fmt: skip
    assert not form.is_valid() and {"seed", "sample_size"} <= set(form.errors)


@pytest.mark.django_db
def test_it_refuses_an_overflowing_parameter_count_on_submission():
    form = SubmissionForm(data={"model": "org/m", "parameter_count": "1" + "0" * 30}, user=make_researcher())
    assert not form.is_valid() and "parameter_count" in form.errors
    client = APIClient()
    client.force_authenticate(make_admin())
    response = client.post("/api/submissions/", {"model": "org/m", "parameter_count": 10**30}, format="json")
    assert response.status_code == 400 and "parameter_count" in response.json()


def test_it_refuses_a_forged_campaign_item_id_in_a_rating():
    form = RatingForm(data={"campaign_item": "1" + "0" * 30, "judgement": "completely_agree"})
    assert not form.is_valid() and "campaign_item" in form.errors
