"""Strict JSON reading for untrusted input: a size limit, a nesting limit, and no control characters.

Used for API request bodies (config/parsers.py) and for imported files (evaluation/engine/dataset_files.py).
Python's json module recurses once per nesting level, so a deeply nested document is refused here,
before it is parsed, by one linear scan. No Django import.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 32
# Control characters other than tab, line feed and carriage return (which are ordinary in texts).
CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class StrictJSONError(ValueError):
    """The document is not acceptable; the message says why, for the person who sent it."""


def nesting_depth(text: str, limit: int) -> int:
    """The deepest nesting of arrays and objects, or limit + 1 as soon as it is exceeded."""
    depth = deepest = 0
    in_string = escaped = False
    # Only brackets matter; scanning for the few interesting characters keeps this fast.
    for match in re.finditer(r'[\[\]{}"\\]', text):
        char = match.group(0)
        if in_string:
            if escaped:
                escaped = False
                # An escaped character right after a backslash: skip it unless the backslash was
                # itself escaped (handled by toggling).
                continue
            if char == "\\":
                escaped = match.end() < len(text) and text[match.end()] in '"\\'
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif char in "]}":
            depth -= 1
    return deepest


def _find_control(value: object, path: str = "") -> str | None:
    if isinstance(value, str):
        return path if CONTROL_CHARACTERS.search(value) else None
    if isinstance(value, dict):
        for key, inner in value.items():
            if CONTROL_CHARACTERS.search(key):
                return f"{path}/{key!r}"
            found = _find_control(inner, f"{path}/{key}")
            if found is not None:
                return found
    elif isinstance(value, list):
        for position, inner in enumerate(value):
            found = _find_control(inner, f"{path}/{position}")
            if found is not None:
                return found
    return None


def loads(text: str | bytes, *, max_bytes: int, max_depth: int = MAX_DEPTH, allow_control: bool = False) -> Any:
    """Parse text as JSON, refusing what is too large, too deeply nested, or holds control characters."""
    size = len(text) if isinstance(text, bytes) else len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise StrictJSONError(f"The JSON document is {size:,} bytes; at most {max_bytes:,} are accepted.")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StrictJSONError(f"The JSON document is not valid UTF-8 (byte {exc.start}).") from None
    if not allow_control and "\x00" in text:
        raise StrictJSONError("The JSON document contains a NUL character.")
    if nesting_depth(text, max_depth) > max_depth:
        raise StrictJSONError(f"The JSON document is nested more than {max_depth} levels deep.")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StrictJSONError(f"Not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}).") from None
    except RecursionError:
        raise StrictJSONError(f"The JSON document is nested more than {max_depth} levels deep.") from None
    if not allow_control:
        where = _find_control(value)
        if where is not None:
            raise StrictJSONError(f"The JSON document contains a control character (at {where or 'the top'}).")
    return value
