"""Cache keys come from the parameters a page reads: made-up parameters and odd values add no entries."""

from __future__ import annotations

import pytest

from tests.factories import make_dataset, make_run
from tests.leaderboard.caching import cache_entries as entries

pytestmark = pytest.mark.django_db


def test_it_adds_no_cache_entries_for_unknown_parameters(client):
    make_run(make_dataset(), "org/alpha")
    assert client.get("/tasks/t1/").status_code == 200
    baseline = entries()
    for number in range(30):
        assert client.get(f"/tasks/t1/?utm_source=x{number}&junk={number}").status_code == 200
    assert entries() == baseline


def test_it_normalises_parameter_order_and_repeats(client):
    make_run(make_dataset(), "org/alpha")
    assert client.get("/?languages=hin&languages=tam&sort=rank").status_code == 200
    baseline = entries()
    assert client.get("/?sort=rank&languages=tam&languages=hin&languages=hin&x=1").status_code == 200
    assert entries() == baseline


def test_it_builds_the_page_from_the_same_parameters_as_its_key(client):
    make_run(make_dataset(), "org/alpha")
    # A value with markup or spaces is dropped before the page is built, so it can never be cached
    # under the key of the clean URL.
    weird = client.get("/?sort=<script>&languages=hin%20tam")
    clean = client.get("/")
    assert weird.status_code == 200 and clean.status_code == 200
    assert "<script>" not in clean.content.decode()


def test_it_adds_no_api_cache_entries_for_unknown_parameters(client):
    make_run(make_dataset(), "org/alpha")
    assert client.get("/api/runs/").status_code == 200
    baseline = entries()
    for number in range(20):
        assert client.get(f"/api/runs/?nonsense={number}").status_code == 200
    assert entries() == baseline
