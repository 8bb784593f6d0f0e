"""Slow clients cannot hold the web server: with 20 uploads trickling in, a byte every half second, the
server as shipped (Procfile.local, config/gunicorn.py) answers /healthz within 2 s all along; and a body
that stops coming is cut at its deadline, freeing the thread.

Before: 16 slow clients timed out every health probe of `Procfile.local` (2 processes of 4 threads),
and 3 took down the compose site (3 sync workers).
"""

from __future__ import annotations

import http.client
import socket
import time

import pytest

from tests.shipped_server import shipped_web_server

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
SLOW_CLIENTS = 20
PROBE_SECONDS = 12


def start_slow_upload(port: int) -> socket.socket:
    """A log-in POST that declares 1 MB and has sent only its headers (CSRF will read its body)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(
        b"POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n"
        b"Content-Type: application/x-www-form-urlencoded\r\n\r\nlogin="
    )
    return sock


def health_status(port: int) -> tuple[int, float]:
    """/healthz's status and how long it took; a probe that takes more than 2 s raises (its timeout)."""
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        connection.request("GET", "/healthz")
        return connection.getresponse().status, round(time.monotonic() - started, 2)
    finally:
        connection.close()


def warm_up(port: int) -> None:
    """Probe until ten in a row answer within 2 s: every server process has loaded its views (the first
    request of a process imports them, which takes seconds on a loaded machine)."""
    deadline, in_a_row = time.monotonic() + 180, 0
    while in_a_row < 10:
        assert time.monotonic() < deadline, "the server never answered ten probes in a row within 2 s"
        try:
            health_status(port)
            in_a_row += 1
        except TimeoutError:
            in_a_row = 0


def test_it_answers_health_probes_within_2_seconds_while_20_clients_upload_slowly(tmp_path):
    with shipped_web_server(tmp_path) as port:
        warm_up(port)
        clients = [start_slow_upload(port) for _ in range(SLOW_CLIENTS)]
        try:
            # Every slow upload has been taken up by the server (its headers parsed, its body awaited).
            time.sleep(2)
            probes: list[tuple[int, float]] = []
            end = time.monotonic() + PROBE_SECONDS
            while time.monotonic() < end:
                for sock in clients:
                    sock.sendall(b"a")
                probes.append(health_status(port))
                time.sleep(0.5)
        finally:
            for sock in clients:
                sock.close()
    print(f"/healthz (status, seconds) with {SLOW_CLIENTS} slow uploads: {probes}")
    assert len(probes) >= 5 and {status for status, _ in probes} == {200}, probes


def test_it_cuts_a_body_that_stops_coming_at_its_deadline(tmp_path):
    with (
        shipped_web_server(tmp_path, {"REQUEST_BODY_READ_TIMEOUT_SECONDS": "2"}) as port,
        start_slow_upload(port) as sock,
    ):
        sock.settimeout(60)
        started = time.monotonic()
        answer = sock.recv(4096)
        waited = time.monotonic() - started
    # Answered, not left waiting for the 999,994 bytes that never come; the thread is free again.
    assert answer.startswith(b"HTTP/1.1 400"), answer[:300]
    assert waited < 30
