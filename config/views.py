import sys
from functools import lru_cache
from pathlib import Path

import psycopg
from django.contrib.staticfiles import finders
from django.db import DatabaseError, InterfaceError, InternalError, OperationalError, connections
from django.http import HttpResponse, JsonResponse
from django.template import loader
from django.views import defaults
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from drf_spectacular.views import SpectacularRedocView

from config.health import broker_status, cache_status, database_status


@never_cache
@require_GET
def healthz(request):
    db_ok, db_detail = database_status()
    broker_ok, broker_detail = broker_status()
    cache_ok, cache_detail = cache_status()
    # The site serves pages without its cache (config/cache.py), so a cache outage is reported but
    # does not make the site unhealthy; the database and the broker do.
    healthy = db_ok and broker_ok
    body = {
        "status": ("ok" if cache_ok else "degraded") if healthy else "unavailable",
        "database": {"ok": db_ok, "detail": db_detail},
        "broker": {"ok": broker_ok, "detail": broker_detail},
        "cache": {"ok": cache_ok, "detail": cache_detail},
    }
    return JsonResponse(body, status=200 if healthy else 503)


_redoc = SpectacularRedocView.as_view(url_name="api-schema")


def api_docs(request):
    """The Redoc page, kept to our own server: its bundle would fetch a logo from Redocly's CDN."""
    response = _redoc(request)
    response["Content-Security-Policy"] = (
        "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
        "script-src 'self' 'unsafe-inline' blob:; worker-src 'self' blob:; font-src 'self' data:"
    )
    return response


# Error answers: the API's in JSON (as its schema says), the pages' in the site's frame
# (templates/404.html, 403.html, and 500.html, which is static so that it cannot fail itself: it and
# 503.html extend templates/_static_error_page.html, block tags only).
def _wants_json(request) -> bool:
    return request.path.startswith("/api/")


def page_not_found(request, exception=None):
    if _wants_json(request):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


def permission_denied(request, exception=None):
    if _wants_json(request):
        return JsonResponse({"detail": "You do not have permission to do this."}, status=403)
    return defaults.permission_denied(request, exception)


# A request whose database connection died (PostgreSQL terminated it, a fail-over) is answered 503 with
# Retry-After, never 500: nothing of it was committed, and the next request reconnects (connections are
# health-checked before reuse, CONN_HEALTH_CHECKS, and one that failed is closed at the request's end).
# psycopg's own classes too: an error raised while Django closes a server-side cursor (the end of a
# form's choices, say) is not wrapped in Django's, and a 500 from it was seen in CI under load.
DATABASE_OUTAGES = (OperationalError, InterfaceError, psycopg.OperationalError, psycopg.InterfaceError)
DATABASE_RETRY_AFTER_SECONDS = 5


def is_database_outage(error: BaseException | None) -> bool:
    """Whether an uncaught error comes from a lost database connection, not from a fault of ours.

    Operational and interface errors always do. A lost connection can also surface as a plain
    DatabaseError (libpq's "error with status PGRES_TUPLES_OK and no message", seen once under load in
    CI as a 500), so a plain database error counts when a connection of this thread is no longer usable;
    programming, data and integrity errors are faults and stay 500. Errors raised while handling or
    because of a database error (a library wrapping it) are judged by that database error."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, DATABASE_OUTAGES):
            return True
        if type(error) in (DatabaseError, InternalError):
            return any(
                not connection.is_usable()
                for connection in connections.all(initialized_only=True)
                if connection.connection is not None
            )
        error = error.__cause__ or error.__context__
    return False


def database_unavailable(request) -> HttpResponse:
    if _wants_json(request):
        message = "The database is unreachable for a moment; try again in a few seconds."
        response: HttpResponse = JsonResponse({"detail": message, "code": "database_unavailable"}, status=503)
    else:
        response = HttpResponse(loader.get_template("503.html").render(), status=503)
    response["Retry-After"] = str(DATABASE_RETRY_AFTER_SECONDS)
    return response


def server_error(request):
    # Django calls this while handling the uncaught exception, which sys.exc_info() still holds.
    if is_database_outage(sys.exc_info()[1]):
        return database_unavailable(request)
    if _wants_json(request):
        return JsonResponse({"detail": "Server error; it has been logged. Please try again later."}, status=500)
    return defaults.server_error(request)


# Redoc's sidebar credit loads a logo from Redocly's CDN, which the site's CSP refuses (a console error
# on every visit); the credit keeps its words and gets an empty local image instead.
REDOC_CDN_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"
EMPTY_SVG = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E"


@lru_cache(maxsize=1)
def _redoc_bundle() -> bytes:
    path = finders.find("drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js")
    return Path(path).read_text(encoding="utf-8").replace(REDOC_CDN_LOGO, EMPTY_SVG).encode("utf-8")


def redoc_bundle(request):
    response = HttpResponse(_redoc_bundle(), content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "public, max-age=86400"
    return response
