"""The board's API builds its filter form only for a request that sets one of the form's parameters: one that
sets none cannot be refused, so skipping the form changes no answer, and each refusal still comes."""

from __future__ import annotations

import pytest
from django.http import QueryDict

from evaluation.models import Run
from leaderboard.filters import LeaderboardFilter, form_parameters
from tests.factories import make_dataset, make_run

pytestmark = pytest.mark.django_db


def test_the_skipped_parameters_are_exactly_the_forms_fields():
    form = LeaderboardFilter(QueryDict(), queryset=Run.objects.none()).form
    assert form_parameters() == frozenset(form.fields)
    # Without any of its parameters (other ones are not its business) the form has nothing to refuse.
    assert LeaderboardFilter(QueryDict("format=json&limit=3"), queryset=Run.objects.none()).form.is_valid()


def test_a_request_without_filters_gets_the_board_and_each_bad_filter_a_refusal(client):
    dataset = make_dataset()
    make_run(dataset, "org/alpha", display_name="Alpha")
    board = client.get("/api/leaderboard/")
    assert board.status_code == 200 and [row["model"] for row in board.json()["rows"]] == ["Alpha"]
    assert client.get("/api/leaderboard/?format=json").json() == board.json()
    refusals = {
        "languages": "zzz",
        "script": "Nope",
        "family": "nope",
        "pairs": "sideways",
        "common": "maybe",
        "origin": "imagined",
        "kind": "psychic",
        "size": "huge",
        "licence": "no-such-licence",
        "weights": "closed",
        "nirdesha": "show",
    }
    assert set(refusals) <= form_parameters()
    for name, value in refusals.items():
        response = client.get(f"/api/leaderboard/?{name}={value}")
        assert response.status_code == 400 and name in response.json(), (name, response.content[:200])
    # A version id without finished runs is not found, as before.
    assert client.get("/api/leaderboard/?dataset=999999").status_code == 404
