#!/usr/bin/env python3
"""The container's health check: GET /healthz from the local web server as a real client would.

It uses only the standard library, so it starts in a fraction of a second. It sends the first host
of ALLOWED_HOSTS (production refuses any other with 400) and `X-Forwarded-Proto: https` (production
redirects plain HTTP to HTTPS, and trusts that header from the proxy), follows no redirect, and
exits 0 only on a 200 from /healthz, which answers 503 when the database or the broker is down.

    python scripts/healthcheck.py [URL] [--timeout SECONDS]   # default http://127.0.0.1:8000/healthz, 8 s

The default timeout stays under the Dockerfile's HEALTHCHECK --timeout (10 s); tests on a loaded
machine pass a longer one, so that a slow first answer is not taken for the failure they look for.
"""

from __future__ import annotations

import argparse
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
    parser = argparse.ArgumentParser(description="GET /healthz; exit 0 only on a 200.")
    parser.add_argument("url", nargs="?", default="http://127.0.0.1:8000/healthz")
    parser.add_argument("--timeout", type=float, default=8.0, help="Seconds to wait for the answer (default 8).")
    arguments = parser.parse_args(argv[1:])
    url = urllib.parse.urlsplit(arguments.url)
    connection = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port or 80, timeout=arguments.timeout)
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
