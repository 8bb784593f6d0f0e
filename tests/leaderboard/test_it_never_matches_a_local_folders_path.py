"""Filters and search on model names never match a local folder's path, only its display name: a right and
a wrong guess of the path answer the same (`/api/runs/?model=`, `/api/scores/?model=`, `/?q=`)."""

from __future__ import annotations

import pytest
from django.test import Client

from evaluation.models import EmbeddingModel
from tests.factories import make_dataset, make_run

pytestmark = pytest.mark.django_db
PATH = "/srv/nirdesha-private/models/secret-encoder"


@pytest.fixture
def runs():
    dataset = make_dataset()
    local = make_run(dataset, PATH, display_name="Secret encoder")
    EmbeddingModel.objects.filter(pk=local.model_id).update(is_local=True)
    hub = make_run(dataset, "Hub-Org/Hub-Model", level=0.4)
    return local, hub


def api(path: str) -> tuple[int, object]:
    response = Client().get(path)
    return response.status_code, response.json()


@pytest.mark.parametrize("endpoint", ["/api/runs/", "/api/scores/"])
@pytest.mark.parametrize("guess", [PATH, PATH.upper(), "/srv/nirdesha-private/models/secret-encoder/"])
def test_the_api_answers_a_right_guess_like_a_wrong_one(runs, endpoint, guess):
    assert api(f"{endpoint}?model={guess}") == api(f"{endpoint}?model=/srv/somewhere-else/models/nothing")
    assert api(f"{endpoint}?model={guess}")[1]["count"] == 0


def test_the_api_finds_a_local_folder_by_its_display_name_and_a_hub_id_in_any_case(runs):
    local, hub = runs
    assert [row["id"] for row in api("/api/runs/?model=Secret encoder")[1]["results"]] == [local.pk]
    assert [row["id"] for row in api("/api/runs/?model=hub-org/hub-model")[1]["results"]] == [hub.pk]
    assert api("/api/scores/?model=HUB-ORG/HUB-MODEL")[1]["count"] > 0


def board_rows(query: str, runs) -> list[int]:
    page = Client().get("/", {"q": query}).content.decode()
    return [run.pk for run in runs if f'id="run-{run.pk}"' in page]


def test_the_boards_search_never_matches_the_path(runs):
    local, _ = runs
    assert board_rows("/srv/", runs) == board_rows("/nowhere/", runs) == []
    assert board_rows("nirdesha-private", runs) == board_rows("nirdesha-public", runs) == []
    assert board_rows("secret", runs) == [local.pk]
