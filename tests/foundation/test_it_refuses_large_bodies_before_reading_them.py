"""A request body over the limit is refused from its Content-Length before anything reads it, on every
URL and multipart included; a body without a length is read no further than the limit.

The tester's attack: a 30 MB anonymous multipart upload to `/`, `/accounts/login/` or
`/api/submissions/` was read in full (CSRF parses a POST's body) before the 403 or 401.
"""

from __future__ import annotations

import io
import socket
from io import BytesIO

import pytest
from django.conf import settings

from config.limits import GuardedInput
from config.wsgi import application
from tests.shipped_server import shipped_web_server

THIRTY_MB = 30_000_000
BOUNDARY = "nirdesha-upload-boundary"


class CountingBody(io.RawIOBase):
    """A 30 MB multipart body made on the fly, which counts the bytes anyone reads from it."""

    def __init__(self, size: int = THIRTY_MB) -> None:
        head = f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n'.encode()
        self.head, self.size, self.read_bytes = head, size, 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        left = self.size - self.read_bytes
        size = left if size is None or size < 0 else min(size, left)
        start = self.read_bytes
        self.read_bytes += size
        prefix = self.head[start : start + size] if start < len(self.head) else b""
        return prefix + b"x" * (size - len(prefix))

    def readline(self, size: int = -1) -> bytes:
        return self.read(min(size, 65536) if size and size > 0 else 65536)


def call(path: str, body: CountingBody, *, declare_length: bool = True) -> tuple[str, bytes]:
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": path,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "HTTP_HOST": "127.0.0.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": body,
        "wsgi.errors": io.StringIO(),
        "CONTENT_TYPE": f"multipart/form-data; boundary={BOUNDARY}",
    }
    if declare_length:
        environ["CONTENT_LENGTH"] = str(body.size)
    else:
        environ["HTTP_TRANSFER_ENCODING"] = "chunked"
    seen: dict[str, str] = {}

    def start_response(status, headers, exc_info=None):
        seen["status"] = status

    answer = b"".join(application(environ, start_response))
    return seen["status"], answer


@pytest.fixture
def no_connection_left_open(django_db_blocker):
    """Close the database connections an earlier test in this process may have left open.

    Django's handler checks a kept connection's health when a request starts (CONN_HEALTH_CHECKS), before
    any of the site's code runs; with one left open by an earlier test, that check would be the database
    access these tests refuse, and they would pass or fail by the order the tests were run in."""
    from django.db import connections

    with django_db_blocker.unblock():
        connections.close_all()


@pytest.mark.usefixtures("no_connection_left_open")
@pytest.mark.parametrize("path", ["/", "/accounts/login/", "/api/submissions/", "/tasks/t1/", "/no-such-page/"])
def test_it_refuses_a_30_mb_anonymous_upload_without_reading_a_byte_of_it(path):
    # No database access is allowed here: the refusal comes before any middleware that would need one.
    body = CountingBody()
    status, answer = call(path, body)
    assert status.startswith("413"), (status, answer[:200])
    assert body.read_bytes == 0
    assert f"{settings.REQUEST_MAX_BODY_BYTES:,} bytes at most" in answer.decode()
    if path.startswith("/api/"):
        assert answer.startswith(b'{"detail":')


def test_it_reads_a_body_without_a_length_no_further_than_the_limit():
    body = CountingBody()
    guarded = GuardedInput(body, limit=settings.REQUEST_MAX_BODY_BYTES, sock=None, idle=10, deadline=float("inf"))
    while guarded.read(1 << 20):
        pass
    assert body.read_bytes == settings.REQUEST_MAX_BODY_BYTES


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_shipped_server_answers_413_while_the_30_mb_are_still_unsent(tmp_path):
    with shipped_web_server(tmp_path) as port, socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        head = (
            f"POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {THIRTY_MB}\r\n"
            f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n\r\n"
        )
        sock.sendall(head.encode() + CountingBody().read(64 * 1024))
        # The answer comes with 29.9 MB still unsent: the server never waited for them.
        answer = BytesIO()
        while b"\r\n\r\n" not in answer.getvalue():
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer.write(chunk)
    assert answer.getvalue().startswith(b"HTTP/1.1 413"), answer.getvalue()[:300]
