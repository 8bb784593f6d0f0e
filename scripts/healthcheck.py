#!/usr/bin/env python3
"""The container's health check: GET /healthz from the local web server as a real client would.

It uses only the standard library, so it starts in a fraction of a second. It sends the first host
of ALLOWED_HOSTS (production refuses any other with 400) and `X-Forwarded-Proto: https` (production
redirects plain HTTP to HTTPS, and trusts that header from the proxy), follows no redirect, and
exits 0 only on a 200 from /healthz, which answers 503 when the database or the broker is down.

    python scripts/healthcheck.py [URL]      # default http://127.0.0.1:8000/healthz
"""

from __future__ import annotations

import http.client
import os
import sys
import urllib.parse


def host_header() -> str:
    for entry in os.environ.get("ALLOWED_HOSTS", "").split(","):
        entry = entry.strip()
        # ".example.org" allows the domain and its subdomains; "*" allows anything.
        if entry == "*":
            return "localhost"
        if entry:
            return entry.lstrip(".")
    return "localhost"


def main(argv: list[str]) -> int:
    url = urllib.parse.urlsplit(argv[1] if len(argv) > 1 else "http://127.0.0.1:8000/healthz")
    connection = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port or 80, timeout=8)
    try:
        connection.request("GET", url.path or "/healthz", headers={"Host": host_header(), "X-Forwarded-Proto": "https"})
        response = connection.getresponse()
        body = response.read(2000).decode("utf-8", "replace")
    except OSError as exc:
        print(f"unhealthy: {type(exc).__name__}: {exc}")
        return 1
    finally:
        connection.close()
    if response.status != 200:
        print(f"unhealthy: HTTP {response.status}: {body[:500]}")
        return 1
    print(body[:500])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
