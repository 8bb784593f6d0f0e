"""The cache is an optimisation only: with Redis down (a real closed port, or a Redis of the test's own
that it stops), pages, the API, log-in and /healthz keep working, and the outage is logged."""

from __future__ import annotations

import logging

import pytest

from config.cache import redis_cache
from tests.people import PASSWORD, make_researcher
from tests.services import closed_port_url, own_redis

pytestmark = pytest.mark.django_db

PAGES = ["/", "/tasks/t1/", "/crosslingual/", "/datasets/", "/api/runs/", "/api/leaderboard/", "/api/models/"]


def test_it_serves_pages_and_the_api_uncached_when_the_cache_is_down(client, settings, caplog):
    settings.CACHES = {"default": redis_cache(closed_port_url())}
    with caplog.at_level(logging.WARNING, logger="config.cache"):
        for url in PAGES:
            assert client.get(url).status_code == 200, url
    assert "Cache unavailable" in caplog.text


def test_it_logs_in_when_the_cache_is_down(client, settings):
    settings.CACHES = {"default": redis_cache(closed_port_url())}
    person = make_researcher()
    response = client.post("/accounts/login/", {"login": person.email, "password": PASSWORD})
    assert response.status_code == 302
    assert client.get("/evaluation/runs/").status_code == 200


def test_it_keeps_serving_when_the_cache_goes_away_mid_flight(client, settings):
    with own_redis() as redis:
        # Generous timeouts: a live Redis slower than the site's 1 s on a loaded machine would read as
        # an outage before the test stops it. Once stopped, connections are refused at once.
        patient = {"socket_connect_timeout": 60, "socket_timeout": 60}
        settings.CACHES = {"default": {**redis_cache(redis.url), "OPTIONS": patient}}
        assert client.get("/tasks/t1/").status_code == 200
        health = client.get("/healthz").json()
        assert health["cache"] == {"ok": True, "detail": "redis"}
        redis.stop()
        assert client.get("/tasks/t1/").status_code == 200
        assert client.get("/api/runs/?limit=5").status_code == 200


def test_it_reports_the_cache_in_healthz_without_hosts_or_ports(client, settings):
    url = closed_port_url()
    port = url.rsplit(":", 1)[1].split("/")[0]
    settings.CACHES = {"default": redis_cache(url)}
    settings.CELERY_BROKER_URL = closed_port_url()
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 503 and body["cache"]["ok"] is False and body["broker"]["ok"] is False
    assert port not in response.content.decode() and "127.0.0.1" not in response.content.decode()
