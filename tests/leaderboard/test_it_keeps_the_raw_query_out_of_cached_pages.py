"""A cached public page holds nothing taken from the raw request: one visitor's query never reaches the next."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.factories import make_dataset, make_run
from tests.leaderboard.caching import cache_entries

pytestmark = pytest.mark.django_db
TRACKED = "?utm_source=mail&email=victim.q7x%40example.org&languages=hin"


def test_it_builds_the_log_in_link_from_the_cleaned_query():
    run = make_run(make_dataset(), "org/alpha")
    first = Client().get("/" + TRACKED).content.decode()
    assert "victim.q7x" not in first and "utm_source" not in first
    assert "next=/%3Flanguages%3Dhin" in first
    # The next visitor of the same page (same cleaned query) gets the same, clean page.
    second = Client().get("/?languages=hin").content.decode()
    assert "victim.q7x" not in second and "next=/%3Flanguages%3Dhin" in second
    page = Client().get(f"/results/{run.pk:03d}/?utm_campaign=x").content.decode()
    assert f"next=/results/{run.pk}/" in page and "utm_campaign" not in page


def test_it_does_not_grow_the_cache_for_a_padded_query():
    make_run(make_dataset(), "org/alpha")
    Client().get("/")
    before = cache_entries()
    for padding in range(5):
        Client().get("/", {f"pad{padding}": "x" * 5000, "email": f"someone{padding}@example.org"})
    assert cache_entries() == before
