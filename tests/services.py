"""Real services a test can stop and start: a Redis server of its own, and the Celery app pointed at it.

The shared PostgreSQL and Redis of the machine are never stopped; an outage is a Redis started here
on a free port and shut down here, or a port with nothing listening.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def closed_port_url(scheme: str = "redis") -> str:
    """A URL on loopback where nothing listens: connections are refused at once."""
    return f"{scheme}://127.0.0.1:{free_port()}/0"


class OwnRedis:
    """A redis-server on a port of its own, which the test may stop and start again."""

    def __init__(self) -> None:
        if shutil.which("redis-server") is None:
            pytest.skip("redis-server is not installed")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        subprocess.run(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--daemonize", "yes"],
            check=True,
            capture_output=True,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if (
                subprocess.run(["redis-cli", "-p", str(self.port), "ping"], capture_output=True).stdout.strip()
                == b"PONG"
            ):
                return
            time.sleep(0.05)
        raise RuntimeError(f"redis-server on port {self.port} did not start")

    def stop(self) -> None:
        subprocess.run(["redis-cli", "-p", str(self.port), "shutdown", "nosave"], capture_output=True)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) != 0:
                    return
            time.sleep(0.05)


@contextmanager
def own_redis() -> Iterator[OwnRedis]:
    server = OwnRedis()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def celery_broker(url: str) -> Iterator[None]:
    """Point this process's Celery app (and settings) at another broker for the block."""
    from django.conf import settings

    from config.celery_app import app

    def reset_pools() -> None:
        # The app keeps a connection pool for the broker it first used; drop it to use the new URL.
        app._pool = None
        app.__dict__.get("amqp") and setattr(app.amqp, "_producer_pool", None)

    old_url, old_options = app.conf.broker_url, app.conf.broker_transport_options
    old_setting = settings.CELERY_BROKER_URL
    # Celery reads the CELERY_BROKER_URL environment variable before its own setting.
    old_env = os.environ.get("CELERY_BROKER_URL")
    os.environ["CELERY_BROKER_URL"] = url
    app.conf.broker_url = url
    app.conf.broker_transport_options = {}
    settings.CELERY_BROKER_URL = url
    reset_pools()
    try:
        yield
    finally:
        app.conf.broker_url, app.conf.broker_transport_options = old_url, old_options
        settings.CELERY_BROKER_URL = old_setting
        if old_env is None:
            os.environ.pop("CELERY_BROKER_URL", None)
        else:
            os.environ["CELERY_BROKER_URL"] = old_env
        reset_pools()
