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
            # An id in the path, or one in a parameter (a dataset version), may name nothing this person may see.
            responses.setdefault("404", _error("No such object, or not one this person may see."))
            anonymous_allowed = {} in operation.get("security", [{}])
            if method != "get" or not anonymous_allowed:
                responses.setdefault("401", _error("Not signed in: send an API token or sign in."))
                responses.setdefault("403", _error("Signed in, but not allowed (or a session request without CSRF)."))
    return result


# What the server refuses in every parameter and field (config/middleware.py, evaluation/engine/strict_json.py):
# no control character in a query or path parameter; in a body field, tab and line breaks only.
NO_CONTROL_IN_PARAMETERS = r"^[^\x00-\x1f\x7f]*$"
NO_CONTROL_IN_FIELDS = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$"


def _with_rule(schema: dict, rule: str) -> None:
    """Give a free string schema the pattern `rule`."""
    # A field with a pattern of its own states its characters itself (e.g. the model reference).
    if schema.get("type") != "string" or "enum" in schema or "pattern" in schema or "format" in schema:
        return
    schema["pattern"] = rule


def state_enforced_constraints(result: dict, generator, request, public) -> dict:
    """A drf-spectacular post-processing hook stating constraints the server enforces on every operation.

    Control characters are refused everywhere, so every free string says so; a one-valued choice
    may be left empty (no filter); a path id is a row id
    from 1; a request body takes only the fields it documents (the serializers refuse any other,
    config/serializers.py), so it says `additionalProperties: false`.
    """
    bodies: set[str] = set()
    for methods in result.get("paths", {}).values():
        for operation in methods.values():
            if not isinstance(operation, dict):
                continue
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema", {})
                items = schema.get("items") if schema.get("type") == "array" else None
                _with_rule(items if isinstance(items, dict) else schema, NO_CONTROL_IN_PARAMETERS)
                if parameter.get("in") == "path" and schema.get("type") == "integer":
                    schema.setdefault("minimum", 1)
                # A one-valued choice left empty (`?kind=`) is no filter, as in the site's forms.
                if (
                    parameter.get("in") == "query"
                    and schema.get("type") == "string"
                    and "" not in schema.get("enum", [""])
                ):
                    schema["enum"] = [*schema["enum"], ""]
            for content in operation.get("requestBody", {}).get("content", {}).values():
                reference = content.get("schema", {}).get("$ref", "")
                if reference.startswith("#/components/schemas/"):
                    bodies.add(reference.rsplit("/", 1)[1])
    components = result.get("components", {}).get("schemas", {})
    for name in bodies:
        body = components.get(name, {})
        body["additionalProperties"] = False
        for field in body.get("properties", {}).values():
            items = field.get("items") if field.get("type") == "array" else None
            _with_rule(items if isinstance(items, dict) else field, NO_CONTROL_IN_FIELDS)
    return result
