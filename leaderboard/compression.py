"""Cached public responses, compressed once per build rather than once per request.

The 1,000-model overview is 1.4 MB of HTML and /api/leaderboard/ 1.5 MB of JSON. Sent as they are,
each request of a cached page spends its time writing those bytes, and a proxy that compresses (the
compose file's Caddy, `encode zstd gzip`) compresses them again for every visitor. A client that
accepts gzip (every browser does) gets instead a gzip copy made once from the stored bytes and kept
in the cache beside them, under the same generation key, so that it goes when they go; a proxy passes
an encoded response through as it is. The stored pages hold nothing private (they are what every
anonymous visitor sees), so compressing them reveals nothing (BREACH needs a secret in the body).
Clients that do not accept gzip get the bytes as before; both answers say `Vary: Accept-Encoding`.
"""

from __future__ import annotations

import gzip

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_vary_headers

# Smaller bodies are not worth a compressed copy (Django's GZipMiddleware leaves bodies under 200
# bytes alone for the same reason).
MINIMUM_BYTES = 1024
# zlib's default level: a 1.4 MB page compresses in about 20 ms, once per build of the page.
LEVEL = 6


def accepts_gzip(request: HttpRequest) -> bool:
    """Whether the request's Accept-Encoding names gzip (or *) with a quality above zero."""
    header = request.META.get("HTTP_ACCEPT_ENCODING", "")
    accepted = {}
    for part in header.split(","):
        coding, _, parameters = part.strip().partition(";")
        quality = 1.0
        for parameter in parameters.split(";"):
            name, _, value = parameter.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if coding:
            accepted[coding.strip().lower()] = quality
    if "gzip" in accepted:
        return accepted["gzip"] > 0
    return accepted.get("*", 0.0) > 0


def compressed_key(key: str) -> str:
    """Where the gzip copy of the bytes stored under `key` is kept."""
    return f"{key}|gzip"


def compressed_hit(request: HttpRequest, key: str, content_type: str) -> HttpResponse | None:
    """The stored gzip copy under `key`, as a response, for a client that accepts gzip; else None."""
    if not accepts_gzip(request):
        return None
    body = cache.get(compressed_key(key))
    if body is None:
        return None
    return _encoded(HttpResponse(body, content_type=content_type))


def negotiated(request: HttpRequest, response: HttpResponse, key: str, *, keep: bool) -> HttpResponse:
    """`response` compressed for a client that accepts gzip, its copy kept under `key` when `keep` (a
    fresh page, never a latest copy served while the page is rebuilt)."""
    patch_vary_headers(response, ("Accept-Encoding",))
    if not accepts_gzip(request) or response.has_header("Content-Encoding") or len(response.content) < MINIMUM_BYTES:
        return response
    body = gzip.compress(response.content, compresslevel=LEVEL, mtime=0)
    if keep:
        cache.set(compressed_key(key), body, settings.PUBLIC_PAGE_CACHE_SECONDS)
    response.content = body
    return _encoded(response)


def _encoded(response: HttpResponse) -> HttpResponse:
    response["Content-Encoding"] = "gzip"
    response["Content-Length"] = str(len(response.content))
    patch_vary_headers(response, ("Accept-Encoding",))
    return response
