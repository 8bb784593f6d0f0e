"""The API schema's error answers: drf-spectacular documents the successes, the views also answer these.

Without them the schema said that a filter with a bad value, an unknown id or a missing log-in could
not happen; clients (and the property-based tests of the schema) read what the API really answers.
"""

from __future__ import annotations

# Errors carry a sentence under "detail", or (a bad parameter or field) a list of sentences per name.
ERROR_BODY = {
    "type": "object",
    "additionalProperties": True,
    "properties": {"detail": {"type": "string"}},
}


def _error(description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": ERROR_BODY}}}


def document_error_responses(result: dict, generator, request, public) -> dict:
    """A drf-spectacular post-processing hook adding the error answers every operation can give."""
    for path, methods in result.get("paths", {}).items():
        for method, operation in methods.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            responses = operation["responses"]
            has_query = any(parameter.get("in") == "query" for parameter in operation.get("parameters", []))
            if has_query or "requestBody" in operation or "{" in path:
                responses.setdefault("400", _error("A parameter or field is malformed; the answer names it."))
            if "{" in path:
                responses.setdefault("404", _error("No such object, or not one this person may see."))
            anonymous_allowed = {} in operation.get("security", [{}])
            if method != "get" or not anonymous_allowed:
                responses.setdefault("401", _error("Not signed in: send an API token or sign in."))
                responses.setdefault("403", _error("Signed in, but not allowed (or a session request without CSRF)."))
    return result
