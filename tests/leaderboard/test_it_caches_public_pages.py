"""Public pages are served from the cache until the generation is bumped by an import or a finished run."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.urls import reverse

from leaderboard.cache import bump_generation
from tests.factories import make_dataset, make_run
from tests.people import make_researcher

pytestmark = pytest.mark.django_db
URL = reverse("leaderboard:overview")


def test_it_serves_a_cached_page_without_touching_the_database(client, django_assert_num_queries):
    dataset = make_dataset()
    make_run(dataset, "org/alpha", display_name="Alpha")
    first = client.get(URL + "?languages=hin&languages=tam")
    with django_assert_num_queries(0):
        second = client.get(URL + "?languages=tam&languages=hin")  # same selection, other order
    assert first.content == second.content and b"Alpha" in second.content

    # A new result stays invisible until the generation moves on, then appears.
    make_run(dataset, "org/beta", display_name="Beta")
    assert b"Beta" not in client.get(URL + "?languages=hin&languages=tam").content
    bump_generation()
    assert b"Beta" in client.get(URL + "?languages=hin&languages=tam").content


def test_it_is_invalidated_by_an_import(client, published_dir, django_capture_on_commit_callbacks):
    assert b"No results yet" in client.get(URL).content
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_published_results", str(published_dir), verbosity=0)
    assert b"E5-Large-Instruct" in client.get(URL).content


def test_it_caches_the_content_but_not_the_account_links(client, django_assert_max_num_queries):
    make_run(make_dataset(), "org/alpha", display_name="Alpha")
    anonymous = client.get(URL).content.decode()
    assert "Log in" in anonymous
    person = make_researcher()
    client.force_login(person)
    signed_in = client.get(URL).content.decode()
    assert person.email in signed_in and "Log in" not in signed_in
    assert "Alpha" in signed_in
    # Signed in, only the session and the user are read; the content comes from the cache.
    with django_assert_max_num_queries(2):
        assert person.email in client.get(URL).content.decode()
    client.logout()
    assert client.get(URL).content.decode() == anonymous


def test_it_never_caches_a_message_meant_for_one_visitor(client):
    make_run(make_dataset(), "org/alpha", display_name="Alpha")
    client.get(URL)
    person = make_researcher()
    client.force_login(person)
    # Signing out leaves a message for the next page this visitor sees, and for nobody else.
    response = client.post(reverse("account_logout"), follow=True)
    assert response.redirect_chain[-1][0] == URL
    assert "You have signed out" in response.content.decode()
    other = client.__class__()
    assert "You have signed out" not in other.get(URL).content.decode()


def test_it_caches_downloads_per_format(client, django_assert_num_queries):
    make_run(make_dataset(), "org/alpha", display_name="Alpha")
    csv_body = client.get(URL + "?format=csv").content
    json_body = client.get(URL + "?format=json").content
    with django_assert_num_queries(0):
        assert client.get(URL + "?format=csv").content == csv_body
        assert client.get(URL + "?format=json").content == json_body
    assert csv_body != json_body


def test_it_caches_the_read_api_until_the_generation_moves_on(client, django_assert_num_queries):
    dataset = make_dataset()
    make_run(dataset, "org/alpha", display_name="Alpha")
    url = "/api/scores/?task=t1&metric=recall@1"
    first = client.get(url).json()
    table = client.get("/api/leaderboard/").json()
    with django_assert_num_queries(0):
        assert client.get(url).json() == first
        assert client.get("/api/leaderboard/").json() == table
    make_run(dataset, "org/beta", display_name="Beta")
    assert client.get(url).json()["count"] == first["count"] == 5
    bump_generation()
    assert client.get(url).json()["count"] == 10
    assert client.get("/api/scores/999999/").status_code == 404
