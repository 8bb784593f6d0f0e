"""The API schema states what the server enforces, and the server answers as the schema says.

The property-based walk (test_it_satisfies_the_api_schema.py, slow) finds any gap; these name the
contract's parts one by one, fast: page numbers, row ids, the model reference, control characters,
documented fields only, the agreement list, and JSON 404s under /api/.
"""

from __future__ import annotations

import re

import pytest
from rest_framework.test import APIClient

from config.schema import NO_CONTROL_IN_FIELDS, NO_CONTROL_IN_PARAMETERS
from tests.factories import make_dataset, make_run
from tests.people import make_researcher

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema():
    return APIClient().get("/api/schema/?format=json").json()


def parameter(schema: dict, path: str, name: str) -> dict:
    return next(p for p in schema["paths"][path]["get"]["parameters"] if p["name"] == name)["schema"]


def test_it_states_the_bounds_of_page_numbers_and_row_ids(schema):
    assert parameter(schema, "/api/runs/", "limit")["minimum"] == 1
    assert parameter(schema, "/api/runs/", "offset")["minimum"] == 0
    assert parameter(schema, "/api/scores/", "run")["minimum"] == 1
    assert parameter(schema, "/api/runs/{id}/", "id")["minimum"] == 1


def test_it_states_the_control_character_rule_and_the_model_reference(schema):
    assert parameter(schema, "/api/runs/", "model")["pattern"] == NO_CONTROL_IN_PARAMETERS
    body = schema["components"]["schemas"]["SubmissionCreate"]
    assert body["additionalProperties"] is False
    assert body["properties"]["note"]["pattern"] == NO_CONTROL_IN_FIELDS
    model = body["properties"]["model"]["pattern"]
    assert re.fullmatch(model, "intfloat/multilingual-e5-small") and re.fullmatch(model, "/models/mine")
    assert not any(re.fullmatch(model, bad) for bad in ("a--b/c", " org/m", "org/m\x00", "/a/../b", "org"))
    assert parameter(schema, "/api/annotation/agreement/", "dataset")["pattern"]


def test_the_agreement_of_a_dataset_is_a_plain_list_as_its_schema_says(schema):
    answer = schema["paths"]["/api/datasets/{id}/agreement/"]["get"]["responses"]["200"]
    assert answer["content"]["application/json"]["schema"]["type"] == "array"
    dataset = make_dataset()
    assert isinstance(APIClient().get(f"/api/datasets/{dataset.pk}/agreement/").json(), list)


@pytest.mark.parametrize("query", ["limit=0", "limit=x", "offset=-1", "offset=null"])
def test_it_refuses_what_is_not_a_page_number(query):
    response = APIClient().get(f"/api/runs/?{query}")
    assert response.status_code == 400 and query.split("=")[0] in response.json()


@pytest.mark.parametrize(
    "query", ["size=huge", "origin=elsewhere", "pairs=all", "common=maybe", "languages=xx", "dataset=abc"]
)
def test_it_refuses_leaderboard_parameters_the_board_does_not_know(query):
    make_run(make_dataset(), "org/alpha")
    response = APIClient().get(f"/api/leaderboard/?{query}")
    assert response.status_code == 400, response.content[:200]
    assert query.split("=")[0] in response.json()


def test_it_answers_an_unknown_version_of_the_leaderboard_with_404():
    make_run(make_dataset(), "org/alpha")
    assert APIClient().get("/api/leaderboard/?dataset=987654").status_code == 404


@pytest.mark.parametrize("path", ["/api/runs/abc/", "/api/runs/1.5/", "/api/datasets/x/agreement/", "/api/nothing/"])
def test_it_answers_unknown_paths_and_ids_with_json_404(path):
    response = APIClient().get(path)
    assert response.status_code == 404 and response["Content-Type"] == "application/json"


def test_it_refuses_a_submission_field_it_does_not_document():
    client = APIClient()
    client.force_authenticate(make_researcher())
    response = client.post("/api/submissions/", {"model": "org/m", "revison": "main"}, format="json")
    assert response.status_code == 400 and "'revison'" in str(response.json())
    response = client.post("/api/submissions/", {"model": " org/m"}, format="json")
    assert response.status_code == 400 and "model" in response.json()


def test_it_reads_null_in_a_form_encoded_body_as_null():
    client = APIClient()
    client.force_authenticate(make_researcher())
    response = client.post("/api/submissions/", {"model": "org/m", "dataset": "null", "parameter_count": "null"})
    # Both fields read as null; what remains is that the site has no version to evaluate on yet.
    assert response.status_code == 409 and response.json()["code"] == "no_dataset"
