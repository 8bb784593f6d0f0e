"""django-filter filter sets of the read API."""

from __future__ import annotations

import django_filters
from drf_spectacular.utils import extend_schema_field

from config.filters import MAX_ID, IdFilter
from evaluation.engine.registry import TASK_IDS
from evaluation.models import Run, Score, task_choices

__all__ = ["MAX_ID", "IdFilter", "RunFilter", "ScoreFilter"]


# The choices are a callable (the registry's tasks), which the schema generator cannot read.
@extend_schema_field({"type": "string", "enum": list(TASK_IDS)})
class TaskFilter(django_filters.MultipleChoiceFilter):
    pass


def _of_model_named(queryset, name: str, value: str):
    """Runs of the named model (any case; a local folder by its display name only, never by its path)."""
    return queryset.filter(pk__in=Run.objects.of_model_named(value).values("pk")) if value else queryset


def _scores_of_model_named(queryset, name: str, value: str):
    return queryset.filter(run__in=Run.objects.of_model_named(value).values("pk")) if value else queryset


class RunFilter(django_filters.FilterSet):
    model = django_filters.CharFilter(
        method=_of_model_named, help_text="Hugging Face id (any case), baseline name or display name"
    )
    kind = django_filters.CharFilter(field_name="model__kind")
    dataset = IdFilter(field_name="dataset", help_text="Dataset id")

    class Meta:
        model = Run
        fields = ["dataset", "origin", "model", "kind"]


class ScoreFilter(django_filters.FilterSet):
    task = TaskFilter(choices=task_choices)
    metric = django_filters.CharFilter()
    source = django_filters.CharFilter(field_name="source_id", help_text="ISO 639-3 code")
    target = django_filters.CharFilter(field_name="target_id", help_text="ISO 639-3 code")
    monolingual = django_filters.BooleanFilter(field_name="target", lookup_expr="isnull")
    run = IdFilter(field_name="run", help_text="Run id")
    dataset = IdFilter(field_name="run__dataset", help_text="Dataset id")
    model = django_filters.CharFilter(method=_scores_of_model_named)
    origin = django_filters.ChoiceFilter(field_name="run__origin", choices=Run.Origin.choices)

    class Meta:
        model = Score
        fields = ["run", "task", "metric", "source", "target", "monolingual", "dataset", "model", "origin"]
