"""Middleware of our own: refusing control characters in parameters, and the Content-Security-Policy."""

from __future__ import annotations

import re

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse

# In a URL parameter no control character has a use; in a form field, tab and line breaks do.
_QUERY_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_FORM_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _offending(params, pattern: re.Pattern) -> str | None:
    for key in params:
        if pattern.search(key):
            return repr(key)
        if any(pattern.search(value) for value in params.getlist(key) if isinstance(value, str)):
            return repr(key)
    return None


class RefuseControlCharactersMiddleware:
    """Answer 400 with a clear message to a NUL or other control character in a parameter.

    PostgreSQL cannot store a NUL, and no page or form here has a use for control characters, so they
    are refused before any view (or database query) sees them.
    """

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        where = _offending(request.GET, _QUERY_CONTROL) or (_QUERY_CONTROL.search(request.path) and "the path")
        if (
            not where
            and request.method == "POST"
            and request.content_type
            in (
                "application/x-www-form-urlencoded",
                "multipart/form-data",
            )
        ):
            where = _offending(request.POST, _FORM_CONTROL)
        if where:
            message = f"The request contains a NUL or another control character (in {where}); remove it and try again."
            # The API answers in JSON, as its schema says; pages answer in plain text.
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": message}, status=400)
            return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


# Scripts, styles, fonts and images come from our own static files (plotly.js included); nothing is
# loaded from elsewhere, no inline script runs, and no other site may frame the pages. Inline styles
# stay allowed because plotly.js writes its own <style> element and style attributes.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


class ContentSecurityPolicyMiddleware:
    """Set the site's Content-Security-Policy on every response that has not set its own."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response
