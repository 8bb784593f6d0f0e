"""Public pages and read API responses go gzip-compressed to clients that accept it, compressed once per build."""

from __future__ import annotations

import gzip

import pytest
from django.core.cache import cache
from django.test import RequestFactory
from django.urls import reverse

from leaderboard.cache import bump_generation, generation_key
from leaderboard.compression import accepts_gzip, compressed_key
from leaderboard.responses import page_keys
from tests.factories import make_dataset, make_run

BROWSER = {"HTTP_ACCEPT_ENCODING": "gzip, deflate, br, zstd"}


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("gzip, deflate, br, zstd", True),
        ("GZIP", True),
        ("br;q=1.0, gzip;q=0.5", True),
        ("gzip;q=0", False),
        ("gzip;q=0.0, *;q=1", False),
        ("*", True),
        ("identity", False),
        ("", False),
        ("gzipped", False),
        ("gzip;q=nonsense", False),
    ],
)
def test_it_reads_accept_encoding_with_its_qualities(header, expected):
    assert accepts_gzip(RequestFactory().get("/", HTTP_ACCEPT_ENCODING=header)) is expected


def board(names: tuple[str, ...]) -> None:
    dataset = make_dataset()
    for name in names:
        make_run(dataset, f"org/{name.lower()}", display_name=name)


def whole_overview_key() -> str:
    return generation_key("whole-page", "overview", "")


def api_leaderboard_key() -> str:
    from leaderboard.api.views import leaderboard_key

    return leaderboard_key("")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "stored_under"),
    [(reverse("leaderboard:overview"), whole_overview_key), ("/api/leaderboard/", api_leaderboard_key)],
)
def test_a_browser_gets_the_same_bytes_gzipped_and_the_copy_is_made_once(client, url, stored_under):
    cache.clear()
    board(("Alpha", "Beta"))
    plain = client.get(url)
    assert plain.status_code == 200 and "Content-Encoding" not in plain
    assert "Accept-Encoding" in plain["Vary"]
    first = client.get(url, **BROWSER)
    assert first.status_code == 200
    assert first["Content-Encoding"] == "gzip" and "Accept-Encoding" in first["Vary"]
    assert int(first["Content-Length"]) == len(first.content) < len(plain.content)
    assert gzip.decompress(first.content) == plain.content
    assert first["Content-Type"] == plain["Content-Type"]
    # The copy was kept beside the stored bytes; the next browser gets it (a changed copy shows it was read).
    key = compressed_key(stored_under())
    assert cache.get(key) == first.content
    cache.set(key, gzip.compress(b"the stored copy"), 300)
    assert gzip.decompress(client.get(url, **BROWSER).content) == b"the stored copy"


@pytest.mark.django_db
def test_a_client_refusing_gzip_gets_the_page_as_it_is(client):
    board(("Alpha",))
    response = client.get(reverse("leaderboard:overview"), HTTP_ACCEPT_ENCODING="gzip;q=0, identity")
    assert "Content-Encoding" not in response and b"Alpha" in response.content


@pytest.mark.django_db
def test_after_a_change_of_results_the_compressed_copy_is_the_new_page(client):
    cache.clear()
    url = reverse("leaderboard:overview")
    dataset = make_dataset()
    make_run(dataset, "org/alpha", display_name="Alpha")
    assert b"Alpha" in gzip.decompress(client.get(url, **BROWSER).content)
    make_run(dataset, "org/beta", display_name="Beta")
    bump_generation()
    # Another request is rebuilding: this browser gets the latest copy, compressed, and it is not kept.
    _, latest = page_keys("overview", "html", "")
    cache.add(f"{latest}:rebuilding", 1)
    assert b"Beta" not in gzip.decompress(client.get(url, **BROWSER).content)
    assert cache.get(compressed_key(whole_overview_key())) is None
    cache.delete(f"{latest}:rebuilding")
    assert b"Beta" in gzip.decompress(client.get(url, **BROWSER).content)
    assert b"Beta" in gzip.decompress(client.get(url, **BROWSER).content)
