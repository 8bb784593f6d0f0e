from functools import lru_cache
from pathlib import Path

from django.contrib.staticfiles import finders
from django.http import HttpResponse, JsonResponse
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
# (templates/404.html, 403.html, and 500.html, which is static so that it cannot fail itself).
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


def server_error(request):
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
