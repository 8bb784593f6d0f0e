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
from urllib.parse import quote

from django.conf import settings
from django.contrib import messages
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.html import format_html, format_html_join

from evaluation.engine.registry import METRICS
from evaluation.safe_text import csv_text
from leaderboard.cache import generation_key, get_or_rebuild, latest_key
from leaderboard.compression import compressed_hit, negotiated
from leaderboard.pages.selection import FILTER_PARAMS, ExportTable, Page, refused_filters
from leaderboard.parameters import invalid_filters, normalised, search_finds_nothing

EXPORT_FORMATS = ("csv", "json")
# The filter chips ask for the page's main content only (no header, footer, styles or scripts) with
# this header, and swap it in place: a small fetch instead of a full reload.
FRAGMENT_HEADER = "X-Page-Fragment"
# The content type of a whole page (Django's default for an HttpResponse).
HTML = "text/html; charset=utf-8"


# The parameters public pages read (the filter form's, leaderboard/pages/selection.py FILTER_PARAMS, and the
# views' own). Anything else is dropped before the page is built and before the cache key is made, so
# made-up parameters neither change a page nor fill the cache with copies of it.
PAGE_PARAMETERS = frozenset(FILTER_PARAMS) | frozenset(
    {"dataset", "languages", "script", "family", "pairs", "sort", "origin", "kind", "size", "run", "runs", "ranks"}
    | {"task", "metric", "format", "table", "query_language", "document_language", "language_pair"}
)
# A view's own state beyond the filter form, in the order a download's file name lists it.
VIEW_PARAMS = ("task", "metric", "run", "runs", "query_language", "document_language", "language_pair", "sort")
MAX_VALUES_PER_PARAMETER = 20
MAX_VALUE_LENGTH = 200


def known_parameters(params: QueryDict, allowed: frozenset[str] = PAGE_PARAMETERS) -> QueryDict:
    """Only the allowed parameters (in the order given), each value once, overlong values dropped."""
    kept = QueryDict(mutable=True)
    for key in [key for key in params if key in allowed]:
        values = list(dict.fromkeys(value for value in params.getlist(key) if len(value) <= MAX_VALUE_LENGTH))
        if values:
            kept.setlist(key, values[:MAX_VALUES_PER_PARAMETER])
    kept._mutable = False
    return kept


def canonical_query(request: HttpRequest, allowed: frozenset[str] = PAGE_PARAMETERS) -> str:
    """The known parameters in a fixed order, so equivalent URLs share a cache entry."""
    return canonical_params(request.GET, allowed)


def canonical_params(params: QueryDict, allowed: frozenset[str] = PAGE_PARAMETERS) -> str:
    """canonical_query of a request with these parameters."""
    kept = known_parameters(params, allowed)
    items = sorted((key, value) for key in kept for value in kept.getlist(key))
    # Percent-encoded, so that free text (the model search) makes a valid key for every cache backend.
    return "&".join(f"{quote(key, safe='')}={quote(value, safe='')}" for key, value in items)


def export_filename(page: Page, view: str, table: str, params) -> str:
    """`nirdesha-<version>-<view>-<filters>.csv`: what a downloaded file holds, readable from its name.

    The filters are the form's non-default values in a fixed order ("all" when there are none).
    """
    dataset = page.context.get("dataset") or getattr(page.context.get("run"), "dataset", None)
    version = _slug(f"{dataset.name}-{dataset.version}") if dataset is not None else "no-version"
    if not version.startswith("nirdesha"):
        version = f"nirdesha-{version}"
    parts = []
    for name in FILTER_PARAMS:
        values = [value for value in params.getlist(name) if value] if name != "dataset" else []
        if values:
            parts.append(f"{name}-{'-'.join(sorted(values))}")
    # The view's own choices (model, task, metric, pair, runs, sort) name the file too: two views of
    # one page never download under the same name.
    for name in VIEW_PARAMS:
        values = [value for value in params.getlist(name) if value]
        if values:
            parts.append(f"{name}-{'-'.join(values)}")
    filters = _slug("_".join(parts)) or "all"
    view_part = view if table in ("", view) or view.endswith(table) else f"{view}-{table}"
    return f"{version}-{_slug(view_part)}-{filters}.csv"


LONG_VALUE_COLUMNS = ("value", "ci_low", "ci_high")
# What an export of an empty selection holds: a sentence saying so, never a header alone that reads
# like a broken file.
EMPTY_EXPORT = (
    "No rows: nothing on this page matches the chosen filters, so there is nothing to download. "
    "Widen the selection on the page and download again.\r\n"
)
# Where every export column is described (leaderboard.export_vocabulary).
COLUMNS_PAGE = "/exports/columns/"
# Excel on Windows reads a CSV as the local code page unless it starts with a UTF-8 byte-order mark;
# with it, Indic model and language names open intact. pandas and Python's csv (utf-8-sig) skip it.
BYTE_ORDER_MARK = "\ufeff"


def _shown(metric_name: str, value: object) -> object:
    spec = METRICS.get(metric_name)
    if spec is None or not isinstance(value, int | float) or isinstance(value, bool):
        return None
    # As the page shows it: rounded once from the stored value by the one helper (MetricSpec.shown);
    # the stored value itself, every digit, is in the column beside it.
    return spec.shown(value)


def _unit(metric_name: str) -> str:
    spec = METRICS.get(metric_name)
    if spec is None:
        return ""
    return "%" if spec.unit == "%" else "documents" if spec.scale == "rank" else ""


def with_page_units(table: ExportTable) -> tuple[list[str], list[list]]:
    """The table with the stored values and, beside each score column, the same value in the units the
    page shows (percentages for fractions), the unit named in the header: both, so nothing is lost.

    A wide table names its score columns' metrics; a long table has a `metric` column.
    """
    headers = list(table.headers)
    if "metric" in headers and all(column in headers for column in LONG_VALUE_COLUMNS[:1]):
        where = headers.index("metric")
        present = [column for column in LONG_VALUE_COLUMNS if column in headers]
        positions = [headers.index(column) for column in present]
        rows = [
            [*row, *[_shown(row[where], row[index]) for index in positions], _unit(row[where])] for row in table.rows
        ]
        return [*headers, *[f"{column}_as_shown" for column in present], "unit_as_shown"], rows
    if table.metrics:
        wide = [(index, header) for index, header in enumerate(headers) if header in table.metrics]
        # Named by the one vocabulary (leaderboard.export_vocabulary): `<column>_as_shown`.
        extra = [f"{header}_as_shown" for _, header in wide]
        rows = [[*row, *[_shown(table.metrics[header], row[index]) for index, header in wide]] for row in table.rows]
        return [*headers, *extra], rows
    return headers, table.rows


def _slug(text: str) -> str:
    """Lower case, letters, digits, dots and underscores kept (versions like 1.0 stay readable), the rest '-'."""
    return re.sub(r"[^a-z0-9._]+", "-", text.lower()).strip("-")


def _export(page: Page, fmt: str, table_name: str | None, filename: str, params=None) -> dict:
    if fmt == "json":
        body = {
            "title": page.title,
            "values": "fractions between 0 and 1 (multiply by 100 for the percentages shown on the page)",
            "columns": COLUMNS_PAGE,
            "tables": {
                name: [dict(zip(table.headers, row, strict=True)) for row in table.rows]
                for name, table in page.tables.items()
            },
        }
        if not any(table.rows for table in page.tables.values()):
            body["note"] = EMPTY_EXPORT.strip()
        return {"kind": "json", "body": json.dumps(body, ensure_ascii=False, default=str)}
    name = table_name if table_name in page.tables else next(iter(page.tables), None)
    body = EMPTY_EXPORT
    if name is not None and page.tables[name].rows:
        # Formula-safe cells: a display name such as =HYPERLINK(...) is shown as text by spreadsheets.
        body = csv_text(*with_page_units(page.tables[name]))
    return {
        "kind": "csv",
        "body": body,
        "filename": export_filename(page, filename, name or "", params if params is not None else QueryDict()),
    }


def _is_anonymous_without_messages(request: HttpRequest) -> bool:
    """True when the whole page, header included, is the same for this request as for any other."""
    return not request.user.is_authenticated and not len(messages.get_messages(request))


def page_keys(name: str, fmt: str, query: str) -> tuple[str, str]:
    """The cache key of a page's payload (under the generation) and of its latest copy."""
    return generation_key("page", name, fmt, query), latest_key("page", name, fmt, query)


def page_payload(build: Callable[[], Page], name: str, template: str, fmt: str, params: QueryDict) -> dict:
    """What is cached of a public page: its rendered main content, or its CSV/JSON export."""
    page = build()
    if fmt == "html":
        return {"kind": "html", "title": page.title, "body": render_to_string(template, page.context)}
    return _export(page, fmt, params.get("table"), name, params)


def public_page(request: HttpRequest, name: str, template: str, build: Callable[[], Page]) -> HttpResponse:
    # The page is built from the same parameters its cache key is made of (the builders read
    # request.GET), so a cached entry is always the page its key names. Values the pages ignore are
    # dropped first (leaderboard.parameters), so that junk values share the canonical page's entry.
    request.GET = normalised(known_parameters(request.GET))
    fmt = request.GET.get("format", "")
    fmt = fmt if fmt in EXPORT_FORMATS else "html"
    fragment = fmt == "html" and request.headers.get(FRAGMENT_HEADER) == "1"
    refused = invalid_filters(request.GET)
    if refused:
        # A 400 that names the refused values above the page for the other filters (the refused ones
        # take their defaults), which comes from the cache like any page: a malformed link never builds
        # a board of its own (0.7 s at 1,000 models), and makes no cache entry of its own.
        refusals = refused_filters(request.GET)
        request.GET = known_parameters(request.GET, PAGE_PARAMETERS - frozenset(refused))
        payload = get_or_rebuild(
            *page_keys(name, fmt, canonical_query(request)),
            lambda: page_payload(build, name, template, fmt, request.GET),
            settings.PUBLIC_PAGE_CACHE_SECONDS,
        ).value
        if payload["kind"] == "html":
            payload = {**payload, "body": refusal_notice(refusals) + payload["body"]}
        return _respond(request, payload, fragment, status=400)
    if search_finds_nothing(request.GET):
        # A search that finds nothing anywhere is a cheap page (no rows) and, made up, would be a cache
        # entry of its own per spelling: it is built for this request alone.
        return _respond(request, page_payload(build, name, template, fmt, request.GET), fragment)
    query = canonical_query(request)
    # Most visitors are anonymous: for them the complete page is cached, so that a hit costs two
    # cache reads and no template rendering at all.
    whole_page_key = None
    if fmt == "html" and not fragment and _is_anonymous_without_messages(request):
        whole_page_key = generation_key("whole-page", name, query)
        compressed = compressed_hit(request, whole_page_key, HTML)
        if compressed is not None:
            return compressed
        html = cache.get(whole_page_key)
        if html is not None:
            return negotiated(request, HttpResponse(html), whole_page_key, keep=True)

    # Stale-while-revalidate: a page the last change of results invalidated is served as its latest copy
    # while it is rebuilt once (leaderboard.cache.get_or_rebuild).
    served = get_or_rebuild(
        *page_keys(name, fmt, query),
        lambda: page_payload(build, name, template, fmt, request.GET),
        settings.PUBLIC_PAGE_CACHE_SECONDS,
    )
    payload = served.value
    response = _respond(request, payload, fragment)
    # A latest copy served while the page is rebuilt is never stored as this generation's whole page.
    if whole_page_key is not None and payload["kind"] == "html":
        if served.fresh:
            cache.set(whole_page_key, response.content.decode(), settings.PUBLIC_PAGE_CACHE_SECONDS)
        return negotiated(request, response, whole_page_key, keep=served.fresh)
    return response


def refusal_notice(messages: list[str]) -> str:
    """The refused filters, as the filter form lists its errors, announced to screen readers (the alert
    is a box around the list: a list that is itself an alert is no list to assistive technology)."""
    items = format_html_join("", '<li class="error">{}</li>', ((message,) for message in messages))
    return format_html('<div role="alert"><ul class="messages">{}</ul></div>', items) if messages else ""


def _respond(request: HttpRequest, payload: dict, fragment: bool, status: int = 200) -> HttpResponse:
    """The response for a page's payload: its export, its main content alone, or the whole page."""
    if payload["kind"] == "json":
        return HttpResponse(payload["body"], content_type="application/json; charset=utf-8", status=status)
    if payload["kind"] == "csv":
        response = HttpResponse(
            BYTE_ORDER_MARK + payload["body"], content_type="text/csv; charset=utf-8", status=status
        )
        response["Content-Disposition"] = f'attachment; filename="{payload["filename"]}"'
        return response
    if fragment:
        response = HttpResponse(payload["body"], status=status)
    else:
        context = {"title": payload["title"], "body": payload["body"]}
        response = render(request, "leaderboard/shell.html", context, status=status)
    response["Vary"] = FRAGMENT_HEADER
    return response
