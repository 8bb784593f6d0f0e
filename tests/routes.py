"""Every route of the URL configuration, found by walking it, with concrete URLs for its parameters.

Routes and parameters added later are found the same way: an `<int:thing_id>` parameter is filled
with the ids of an existing, a private and a non-existent row of the model named `Thing` (any app),
any other parameter with the values named below or, when it has none, with generic ones. Nothing
here lists the site's routes by hand.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.apps import apps
from django.http import QueryDict
from django.urls import URLPattern, URLResolver, get_resolver, reverse

# Django's admin is Django's own (staff only, tested upstream); the read API has its own property-based
# check against its schema (tests/foundation/test_it_satisfies_the_api_schema.py).
SKIPPED_PREFIXES = ("admin/",)
API_PREFIX = "api/"

# A row id that no table holds, and one too large for any integer column.
MISSING_ID = "2147483646"
OVERFLOWING_ID = "99999999999999999999999"

# The values a query parameter is tried with: huge, float, negative, control character, long, markup.
HOSTILE_VALUES = (
    OVERFLOWING_ID,
    "1e30",
    "-1",
    "-99999999999999999999999",
    "0.5",
    "NaN",
    "\x00",
    "x" * 10_240,
    "<script>alert(1)</script>",
    "",
)
# Values that open the branches of a view (an export format, an id, a language), so that parameters a
# view reads only in such a branch (`table` of a CSV export) are found and tried too.
PLAUSIBLE_VALUES = ("csv", "json", "1", "hin")


@dataclass(frozen=True)
class Route:
    template: str  # "results/<int:run_id>/" as the URL configuration writes it
    name: str  # "leaderboard:run_detail", for reverse()
    parameters: tuple[tuple[str, str], ...]  # (name, kind): kind is the converter ("int", "str") or "regex"
    callback: Callable

    @property
    def is_api(self) -> bool:
        return self.template.startswith(API_PREFIX) and getattr(self.callback, "cls", None) is not None


_CONVERTER = re.compile(r"<(?:(?P<kind>[^>:]+):)?(?P<name>\w+)>")
_GROUP = re.compile(r"\(\?P<(?P<name>\w+)>")


def _walk(patterns, prefix: str, namespace: str) -> Iterator[Route]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from _walk(entry.url_patterns, prefix + str(entry.pattern), inner)
        elif isinstance(entry, URLPattern) and entry.name:
            template = prefix + str(entry.pattern)
            parameters = [(m["name"], m["kind"] or "str") for m in _CONVERTER.finditer(template)]
            parameters += [(m["name"], "regex") for m in _GROUP.finditer(template)]
            yield Route(template, namespace + entry.name, tuple(parameters), entry.callback)


def every_route() -> list[Route]:
    """Every named route, the admin's left out; each name once (format-suffix twins of the API dropped)."""
    found: dict[tuple[str, tuple], Route] = {}
    for route in _walk(get_resolver().url_patterns, "", ""):
        if route.template.startswith(SKIPPED_PREFIXES):
            continue
        key = (route.name, tuple(name for name, _ in route.parameters if name != "format"))
        if any(name == "format" for name, _ in route.parameters):
            continue
        found.setdefault(key, route)
    return list(found.values())


def html_routes() -> list[Route]:
    return [route for route in every_route() if not route.is_api]


def model_for_parameter(name: str):
    """The model a route parameter names: `run_id` → Run, `campaign_item_id` → CampaignItem, `run_a` → Run.

    The whole name (without `_id`) is tried first, then each of its words, so that a view of a pair
    (`<int:run_a>/<int:run_b>`) is given the same existing, private and missing runs.
    """
    words = [word for word in name.split("_") if word and word != "id"]
    candidates = ["".join(words), *words] if name.endswith("_id") else words
    models = {model._meta.model_name: model for model in apps.get_models()}
    for candidate in candidates:
        if candidate in models:
            return models[candidate]
    return None


def parameter_values(route: Route, named: dict[str, list[str]]) -> list[dict[str, str]]:
    """Concrete values for a route's parameters: each value of each parameter, the others at their first."""
    choices = {}
    for name, kind in route.parameters:
        if name in named:
            choices[name] = named[name]
        elif kind == "int" or name == "pk":
            choices[name] = ["1", MISSING_ID, OVERFLOWING_ID]
        else:
            choices[name] = ["x1", "y" * 300]
    if not choices:
        return [{}]
    first = {name: values[0] for name, values in choices.items()}
    combinations = [first]
    for name, values in choices.items():
        combinations += [{**first, name: value} for value in values[1:]]
    return combinations


def url_for(route: Route, values: dict[str, str]) -> str:
    return reverse(route.name, kwargs=values or None)


def body_text(response) -> str:
    """The text of a response, the members of a zip archive included (an export is a zip)."""
    content = b"".join(response.streaming_content) if response.streaming else response.content
    texts = [content.decode("utf-8", errors="replace")]
    if content[:2] == b"PK":
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            texts += [archive.read(member).decode("utf-8", errors="replace") for member in archive.namelist()]
    return "\n".join(texts)


class ParameterLog:
    """The names of the query parameters that views look up, request by request."""

    def __init__(self) -> None:
        self.current: set[str] | None = None

    @contextmanager
    def installed(self) -> Iterator[ParameterLog]:
        """Record every key looked up in any QueryDict (request.GET, and the cleaned copies views make of it).

        A view reads a parameter with get(), getlist(), [] or `in`, on request.GET or on a QueryDict made
        from it (leaderboard.responses.known_parameters), or through a form or filter set bound to it;
        each of those ends in one of these four methods.
        """
        names = ("__getitem__", "get", "getlist", "__contains__")
        own = {name: QueryDict.__dict__.get(name) for name in names}
        log = self

        def wrap(original):
            def method(self, key, *args, **kwargs):
                if log.current is not None and isinstance(key, str):
                    log.current.add(key)
                return original(self, key, *args, **kwargs)

            return method

        for name in names:
            setattr(QueryDict, name, wrap(getattr(QueryDict, name)))
        try:
            yield self
        finally:
            for name, original in own.items():
                if original is None:
                    delattr(QueryDict, name)
                else:
                    setattr(QueryDict, name, original)

    @contextmanager
    def reads(self) -> Iterator[set[str]]:
        """The parameters looked up while the block runs."""
        self.current = set()
        try:
            yield self.current
        finally:
            self.current = None
