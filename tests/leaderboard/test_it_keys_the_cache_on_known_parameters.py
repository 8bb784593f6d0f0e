"""Cache keys come from the parameters a page reads: made-up parameters and odd values add no entries.

Junk values of known parameters each made an entry of their own (the tester: 30 values, 90 entries), so a
loop could flush the page cache; a value a page ignores now gives the canonical page, and a filter value
the form refuses a 400, built without the cache."""

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
    assert weird.status_code == 400 and clean.status_code == 200
    assert "<script>" not in clean.content.decode()


def test_it_adds_no_api_cache_entries_for_unknown_parameters(client):
    make_run(make_dataset(), "org/alpha")
    assert client.get("/api/runs/").status_code == 200
    baseline = entries()
    for number in range(20):
        assert client.get(f"/api/runs/?nonsense={number}").status_code == 200
    assert entries() == baseline


@pytest.mark.parametrize("parameter", ["sort", "task", "metric", "run", "query_language", "format", "common"])
def test_it_serves_the_canonical_page_for_junk_values_the_pages_ignore(client, parameter):
    make_run(make_dataset(), "org/alpha")
    path = "/crosslingual/" if parameter in ("task", "metric", "run", "query_language") else "/"
    canonical = client.get(path + ("?common=on" if parameter == "common" else ""))
    assert canonical.status_code == 200
    baseline = entries()
    for number in range(30):
        junk = client.get(f"{path}?{parameter}=junk-{number}")
        assert junk.status_code == 200
        assert junk.content == canonical.content, number
    assert entries() == baseline


@pytest.mark.parametrize("parameter", ["languages", "script", "family", "size", "origin", "pairs", "dataset"])
def test_it_answers_400_without_a_cache_entry_to_junk_filter_values(client, parameter):
    make_run(make_dataset(), "org/alpha")
    assert client.get("/").status_code == 200
    baseline = entries()
    for number in range(30):
        response = client.get(f"/?{parameter}=junk{number}")
        assert response.status_code == 400
        # The page still says what was wrong, and keeps the defaults.
        assert (
            f"junk{number}" in response.content.decode()
            or "not one of the available choices" in response.content.decode()
        )
    assert entries() == baseline


def test_the_api_leaderboard_adds_no_entries_for_junk_values(client):
    make_run(make_dataset(), "org/alpha")
    canonical = client.get("/api/leaderboard/")
    assert canonical.status_code == 200
    baseline = entries()
    for number in range(30):
        assert client.get(f"/api/leaderboard/?sort=junk{number}").content == canonical.content
        refused = client.get(f"/api/leaderboard/?languages=junk{number}&script=junk{number}")
        # Refused naming the parameters (the API's contract), and built without the cache.
        assert refused.status_code == 400 and {"languages", "script"} & set(refused.json())
    assert entries() == baseline


def test_made_up_searches_add_no_cache_entries(client):
    make_run(make_dataset(), "org/alpha")
    assert client.get("/").status_code == 200
    baseline = entries()
    for number in range(30):
        response = client.get(f"/?q=no-such-model-{number}")
        assert response.status_code == 200 and f"no-such-model-{number}" in response.content.decode()
    assert entries() == baseline


def test_spellings_of_one_search_share_one_cache_entry(client):
    make_run(make_dataset(), "org/alpha")
    first = client.get("/?q=Alpha")
    assert first.status_code == 200 and "alpha" in first.content.decode()
    baseline = entries()
    for spelling in ["alpha", "ALPHA", "%20alpha%20%20", "alpha+alpha", "Alpha+ALPHA+alpha"]:
        assert client.get(f"/?q={spelling}").content == first.content, spelling
    assert entries() == baseline
