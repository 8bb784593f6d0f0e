"""The container's health check (scripts/healthcheck.py, the Dockerfile's HEALTHCHECK) against gunicorn
under production settings and the documented ALLOWED_HOSTS: healthy with the database up, unhealthy
with it down. A plain request, as the old `curl` check made, gets 400 or a redirect instead.

On a loaded machine gunicorn's first answer (Django starting in the worker, then the checks) can take
far longer than the container's 8 s, and a check that timed out is unhealthy for another reason than
the one a test looks for. So every wait here is explicit and generous (WAIT), and the tests assert the
kind of answer (a 503 saying the database is down) rather than racing a clock."""

from __future__ import annotations

import http.client
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.services import closed_port_url, free_port

ROOT = Path(__file__).resolve().parents[2]
# Seconds any one step may take here: starting gunicorn, one request, the health check itself.
WAIT = 180
PRODUCTION = {
    "DJANGO_SETTINGS_MODULE": "config.settings.production",
    "SECRET_KEY": "a-long-random-production-secret-for-the-health-check-only-0123456789",
    # The database of this test's own: created by the test run when DATABASE_URL names PostgreSQL.
    "CELERY_BROKER_URL": os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/9"),
    "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/10"),
    "ALLOWED_HOSTS": "leaderboard.example.org",  # As in .env.example.
}


def postgres_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        pytest.skip("needs DATABASE_URL on PostgreSQL (production refuses SQLite)")
    return url


@contextmanager
def gunicorn(database_url: str) -> Iterator[int]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env.update(PRODUCTION, DATABASE_URL=database_url)
    command = [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
               "--workers", "1", "--timeout", str(WAIT)]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                http.client.HTTPConnection("127.0.0.1", port, timeout=1).connect()
                break
            except OSError:
                assert process.poll() is None, process.stderr.read().decode()
                time.sleep(0.2)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=WAIT)


def healthcheck(port: int) -> subprocess.CompletedProcess:
    env = {**os.environ, "ALLOWED_HOSTS": PRODUCTION["ALLOWED_HOSTS"]}
    return subprocess.run(
        [sys.executable, "scripts/healthcheck.py", f"http://127.0.0.1:{port}/healthz", "--timeout", str(WAIT)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=WAIT + 30,
    )  # fmt: skip


def status_of(port: int, headers: dict[str, str]) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    connection.request("GET", "/healthz", headers=headers)
    return connection.getresponse().status


@pytest.mark.slow
def test_it_is_healthy_under_production_settings_with_the_database_up():
    with gunicorn(postgres_url()) as port:
        result = healthcheck(port)
        assert result.returncode == 0, result.stdout + result.stderr
        assert '"database": {"ok": true' in result.stdout
        # What the old check saw: a 400 for the loopback host, or the HTTPS redirect (which curl -f
        # took as a success).
        assert status_of(port, {"Host": "127.0.0.1"}) == 400
        assert status_of(port, {"Host": "leaderboard.example.org"}) == 301


@pytest.mark.slow
def test_it_is_unhealthy_when_the_database_is_down():
    postgres_url()
    with gunicorn(closed_port_url("postgres")) as port:
        result = healthcheck(port)
    # The kind of failure: the server answered 503 because the database is down (not a timeout).
    assert result.returncode == 1 and "HTTP 503" in result.stdout, result.stdout + result.stderr
    assert '"database": {"ok": false' in result.stdout
    assert "127.0.0.1" not in result.stdout.split("HTTP 503", 1)[1]


def test_it_is_unhealthy_when_nothing_answers():
    result = healthcheck(free_port())
    # Refused at once, however long the check would wait for an answer.
    assert result.returncode == 1 and "unhealthy: ConnectionRefusedError" in result.stdout
