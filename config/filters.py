"""Filters the API's filter sets share."""

from __future__ import annotations

import django_filters
from django import forms
from drf_spectacular.utils import extend_schema_field

# The largest id the database stores (a 64-bit signed integer); a larger number in a filter would
# overflow the database driver (a 500), so it is refused with a 400 that names the parameter.
MAX_ID = 2**63 - 1


@extend_schema_field({"type": "integer", "minimum": 1, "maximum": MAX_ID})
class IdFilter(django_filters.NumberFilter):
    """A filter on a row id: a whole number from 1 to MAX_ID, else a clear 400."""

    field_class = forms.IntegerField

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(*args, **kwargs)
