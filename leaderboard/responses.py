"""Rendering public pages from the cache, and their CSV/JSON downloads.

A public page's main content does not depend on who is looking, so it is rendered once per
(page, query string) and cached under the current generation (leaderboard.cache); the surrounding
layout with the account links is rendered per request around it. For anonymous visitors with no
pending message the complete page is the same for everyone and is cached as a whole.
`?format=csv|json` returns the page's tables instead, cached the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from django.conf import settings
from django.contrib import messages
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.text import slugify

from evaluation.safe_text import csv_text
from leaderboard.cache import generation_key
from leaderboard.pages import Page

EXPORT_FORMATS = ("csv", "json")


# The parameters public pages read (leaderboard/pages.py, leaderboard/filters.py) and their exports'.
# Anything else is dropped before the page is built and before the cache key is made, so that made-up
# parameters neither change a page nor fill the cache with copies of it.
PAGE_PARAMETERS = frozenset(
    {"dataset", "languages", "script", "family", "pairs", "sort", "origin", "kind", "size", "run", "runs"}
    | {"task", "metric", "format", "table"}
)
# A value that could be a language, script, column key, id or choice; others are dropped too.
_PLAIN_VALUE = re.compile(r"[\w@.:+-]{1,80}")
MAX_VALUES_PER_PARAMETER = 20


def known_parameters(params: QueryDict, allowed: frozenset[str] = PAGE_PARAMETERS) -> QueryDict:
    """Only the allowed parameters with plain values, each value once."""
    kept = QueryDict(mutable=True)
    # In the order given (pages build links from it); canonical_query orders them for the key.
    for key in [key for key in params if key in allowed]:
        # Values keep their order (a page may show languages or runs in the order asked), once each.
        values = list(dict.fromkeys(value for value in params.getlist(key) if _PLAIN_VALUE.fullmatch(value)))
        if values:
            kept.setlist(key, values[:MAX_VALUES_PER_PARAMETER])
    kept._mutable = False
    return kept


def canonical_query(request: HttpRequest, allowed: frozenset[str] = PAGE_PARAMETERS) -> str:
    """The known parameters in a fixed order, so equivalent URLs share a cache entry."""
    kept = known_parameters(request.GET, allowed)
    return "&".join(f"{key}={value}" for key in sorted(kept) for value in sorted(kept.getlist(key)))


def _export(page: Page, fmt: str, table_name: str | None, filename: str) -> dict:
    if fmt == "json":
        body = {
            "title": page.title,
            "values": "fractions between 0 and 1 (multiply by 100 for the percentages shown on the page)",
            "tables": {
                name: [dict(zip(table.headers, row, strict=True)) for row in table.rows]
                for name, table in page.tables.items()
            },
        }
        return {"kind": "json", "body": json.dumps(body, ensure_ascii=False, default=str)}
    name = table_name if table_name in page.tables else next(iter(page.tables), None)
    # Formula-safe cells: a display name such as =HYPERLINK(...) is shown as text by spreadsheets.
    body = csv_text(page.tables[name].headers, page.tables[name].rows) if name is not None else ""
    return {
        "kind": "csv",
        "body": body,
        "filename": f"{slugify(filename)}-{name or 'empty'}.csv",
    }


def _is_anonymous_without_messages(request: HttpRequest) -> bool:
    """True when the whole page, header included, is the same for this request as for any other."""
    return not request.user.is_authenticated and not len(messages.get_messages(request))


def public_page(request: HttpRequest, name: str, template: str, build: Callable[[], Page]) -> HttpResponse:
    # The page is built from the same parameters its cache key is made of (the builders read
    # request.GET), so a cached entry is always the page its key names.
    request.GET = known_parameters(request.GET)
    fmt = request.GET.get("format", "")
    fmt = fmt if fmt in EXPORT_FORMATS else "html"
    query = canonical_query(request)
    # Most visitors are anonymous: for them the complete page is cached, so that a hit costs two
    # cache reads and no template rendering at all.
    whole_page_key = None
    if fmt == "html" and _is_anonymous_without_messages(request):
        whole_page_key = generation_key("whole-page", name, query)
        html = cache.get(whole_page_key)
        if html is not None:
            return HttpResponse(html)
    key = generation_key("page", name, fmt, query)
    payload = cache.get(key)
    if payload is None:
        page = build()
        if fmt == "html":
            payload = {"kind": "html", "title": page.title, "body": render_to_string(template, page.context)}
        else:
            payload = _export(page, fmt, request.GET.get("table"), name)
        cache.set(key, payload, settings.PUBLIC_PAGE_CACHE_SECONDS)
    if payload["kind"] == "json":
        return HttpResponse(payload["body"], content_type="application/json; charset=utf-8")
    if payload["kind"] == "csv":
        response = HttpResponse(payload["body"], content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{payload["filename"]}"'
        return response
    response = render(request, "leaderboard/shell.html", {"title": payload["title"], "body": payload["body"]})
    if whole_page_key is not None:
        cache.set(whole_page_key, response.content.decode(), settings.PUBLIC_PAGE_CACHE_SECONDS)
    return response
