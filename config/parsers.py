"""The API's JSON parser: strict (evaluation/engine/strict_json.py) instead of DRF's permissive default."""

from __future__ import annotations

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from evaluation.engine.strict_json import StrictJSONError, loads


class StrictJSONParser(JSONParser):
    """JSON bodies up to API_MAX_BODY_BYTES, nested at most API_MAX_JSON_DEPTH deep, without control characters."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.API_MAX_BODY_BYTES
        # Read one byte more than allowed, so that an oversized body is refused without reading it all.
        body = stream.read(limit + 1) if stream is not None else b""
        try:
            return loads(body, max_bytes=limit, max_depth=settings.API_MAX_JSON_DEPTH)
        except StrictJSONError as exc:
            raise ParseError(str(exc)) from None
