"""django-filter filter sets of the read API."""

from __future__ import annotations

import django_filters
from django import forms

from evaluation.models import Run, Score, task_choices

# The largest id the database stores (a 64-bit signed integer); a larger number in a filter would
# overflow the database driver (a 500), so it is refused with a 400 that names the parameter.
MAX_ID = 2**63 - 1


class IdFilter(django_filters.NumberFilter):
    """A filter on a row id: a whole number from 1 to MAX_ID, else a clear 400."""

    field_class = forms.IntegerField

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(*args, **kwargs)


class RunFilter(django_filters.FilterSet):
    model = django_filters.CharFilter(field_name="model__name", help_text="Hugging Face id or baseline name")
    kind = django_filters.CharFilter(field_name="model__kind")
    dataset = IdFilter(field_name="dataset", help_text="Dataset id")

    class Meta:
        model = Run
        fields = ["dataset", "origin", "model", "kind"]


class ScoreFilter(django_filters.FilterSet):
    task = django_filters.MultipleChoiceFilter(choices=task_choices)
    metric = django_filters.CharFilter()
    source = django_filters.CharFilter(field_name="source_id", help_text="ISO 639-3 code")
    target = django_filters.CharFilter(field_name="target_id", help_text="ISO 639-3 code")
    monolingual = django_filters.BooleanFilter(field_name="target", lookup_expr="isnull")
    run = IdFilter(field_name="run", help_text="Run id")
    dataset = IdFilter(field_name="run__dataset", help_text="Dataset id")
    model = django_filters.CharFilter(field_name="run__model__name")
    origin = django_filters.ChoiceFilter(field_name="run__origin", choices=Run.Origin.choices)

    class Meta:
        model = Score
        fields = ["run", "task", "metric", "source", "target", "monolingual", "dataset", "model", "origin"]
