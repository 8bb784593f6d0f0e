"""The web server as shipped: Procfile.local's `web` command (gunicorn with config/gunicorn.py), started
against the test database in a folder of its own, for tests that need a real server and real sockets."""

from __future__ import annotations

import http.client
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.services import free_port
from tests.workers import ROOT, database_url_for_test_db


def procfile_command(name: str) -> str:
    """The command of one process in Procfile.local, the file `./scripts/start` runs."""
    line = next(line for line in (ROOT / "Procfile.local").read_text().splitlines() if line.startswith(f"{name}:"))
    return line.split(":", 1)[1].strip()


@contextmanager
def shipped_web_server(folder: Path, extra_env: dict[str, str] | None = None) -> Iterator[int]:
    """Start Procfile.local's web server on a free loopback port; yields the port. The caller needs a
    transactional database fixture (the server is another process and sees committed rows only)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
            "DATABASE_URL": database_url_for_test_db(),
            "NIRDESHA_VAR_DIR": str(folder / "var"),
            "PORT": str(port),
            **(extra_env or {}),
        }
    )
    log_path = folder / "web.log"
    with open(log_path, "w") as log:
        server = subprocess.Popen(["bash", "-c", procfile_command("web")], cwd=ROOT, env=env, stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + 90
            while True:
                assert server.poll() is None, log_path.read_text()
                try:
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                    connection.request("GET", "/healthz")
                    connection.getresponse().read()
                    break
                except OSError:
                    assert time.monotonic() < deadline, f"the server did not answer:\n{log_path.read_text()}"
                    time.sleep(0.3)
            yield port
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
