"""Request bodies: refused from their declared length before they are read, and read with deadlines.

Django parses a multipart body (CSRF's check of a POST reads it) before any view can refuse the
request, and its upload limits count form fields only: a 30 MB file part was read in full, and
written to a temporary file, before an anonymous POST got its 403. Here a body longer than
REQUEST_MAX_BODY_BYTES is answered 413 from its Content-Length alone, before anything reads it, on
every URL; a body without a length (chunked) is cut at the same limit as it is read.

A client that sends its body slowly holds a server thread while it is read. Under gunicorn each read
waits at most REQUEST_BODY_READ_TIMEOUT_SECONDS for the next bytes and the whole body at most
REQUEST_BODY_DEADLINE_SECONDS; past either, the request ends with 400 and the thread is free again.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponse, JsonResponse


def too_large_message(limit: int) -> str:
    return f"The request body is larger than this site accepts ({limit:,} bytes at most)."


def declared_length(environ: dict[str, Any]) -> int | None:
    """The body's declared length; None when there is none (or it is not a number)."""
    try:
        return int(environ.get("CONTENT_LENGTH") or "")
    except ValueError:
        return None


def _refusal(path: str, status: int, message: str) -> HttpResponse:
    # The API answers in JSON, as its schema says; pages answer in plain text.
    if path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": message}, status=status)
    else:
        response = HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")
    # The unread body is not drained: gunicorn discards at most 64 KiB of it, then closes the connection.
    return response


class RequestBodyLimitMiddleware:
    """Answer 413 to a body declared longer than REQUEST_MAX_BODY_BYTES, without reading it.

    First in MIDDLEWARE, so that nothing before it (CSRF reads POST bodies) has read the body.
    """

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.REQUEST_MAX_BODY_BYTES
        length = declared_length(request.META)
        if length is not None and length > limit:
            return _refusal(request.path, 413, too_large_message(limit))
        return self.get_response(request)


BODY_TIMEOUT_MESSAGE = "The request body did not arrive in time; send it again."


class BodyReadTimeout(BadRequest):
    """The client did not send its body in time. Not an OSError, which Django would report as an
    unreadable body and answer 500: Django answers this one 400, wherever the body is read."""


class GuardedInput:
    """wsgi.input read at most `limit` bytes, each read within `idle` seconds, all before `deadline`."""

    def __init__(self, stream, limit: int, sock: socket.socket | None, idle: float, deadline: float) -> None:
        self.stream = stream
        self.remaining = limit
        self.sock = sock
        self.idle = idle
        self.deadline = deadline

    def _wait_budget(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise BodyReadTimeout(BODY_TIMEOUT_MESSAGE)
        if self.sock is not None:
            # A blocked read raises socket.timeout (an OSError) after this long without bytes.
            self.sock.settimeout(min(self.idle, left))

    def read(self, size: int = -1) -> bytes:
        if self.remaining <= 0:
            return b""
        size = self.remaining if size is None or size < 0 else min(size, self.remaining)
        self._wait_budget()
        try:
            data = self.stream.read(size)
        except TimeoutError:
            raise BodyReadTimeout(BODY_TIMEOUT_MESSAGE) from None
        self.remaining -= len(data)
        return data

    def readline(self, size: int = -1) -> bytes:
        if self.remaining <= 0:
            return b""
        size = self.remaining if size is None or size < 0 else min(size, self.remaining)
        self._wait_budget()
        try:
            data = self.stream.readline(size)
        except TimeoutError:
            raise BodyReadTimeout(BODY_TIMEOUT_MESSAGE) from None
        self.remaining -= len(data)
        return data

    def __iter__(self):
        while line := self.readline():
            yield line


class GuardedBodyApplication:
    """A WSGI application whose requests' bodies are bounded in size and in time (see the module)."""

    def __init__(self, application: Callable) -> None:
        self.application = application

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        sock = environ.get("gunicorn.socket")
        sock = sock if isinstance(sock, socket.socket) else None
        prior_timeout = sock.gettimeout() if sock is not None else None
        environ["wsgi.input"] = GuardedInput(
            environ["wsgi.input"],
            limit=settings.REQUEST_MAX_BODY_BYTES,
            sock=sock,
            idle=settings.REQUEST_BODY_READ_TIMEOUT_SECONDS,
            deadline=time.monotonic() + settings.REQUEST_BODY_DEADLINE_SECONDS,
        )
        try:
            return self.application(environ, start_response)
        finally:
            if sock is not None:
                # The response is written with the server's own timeout: a large download to a slow
                # reader is not cut by the body's deadlines.
                with contextlib.suppress(OSError):
                    sock.settimeout(prior_timeout)
