"""What the API's input serializers share: only documented fields are taken, and null means null."""

from __future__ import annotations

from django.http import QueryDict
from rest_framework import serializers


class DocumentedFieldsOnly(serializers.Serializer):
    """Refuse fields the serializer does not declare, naming them, instead of silently ignoring them;
    read a form-encoded "null" as null in a nullable field.

    The schema says `additionalProperties: false` for every request body (config/schema.py): a
    misspelt field (`revison`) is a 400 that says so, not a submission made without it.
    """

    def to_internal_value(self, data):
        keys = data.keys() if hasattr(data, "keys") else []
        unknown = sorted(str(key) for key in keys if key not in self.fields)
        if unknown:
            shown = ", ".join(repr(key[:40]) for key in unknown[:5])
            raise serializers.ValidationError(
                {"non_field_errors": [f"Unknown field(s) {shown}; the fields are {', '.join(self.fields)}."]}
            )
        if isinstance(data, QueryDict):
            # In a form-encoded body every value is text: a nullable field's null is spelt "null"
            # (as the schema's null is sent), which DRF reads as null when it is empty.
            data = data.copy()
            for name, field in self.fields.items():
                if field.allow_null and [value.strip().lower() for value in data.getlist(name)] == ["null"]:
                    data[name] = ""
        return super().to_internal_value(data)
