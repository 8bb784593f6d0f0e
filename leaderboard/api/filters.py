"""django-filter filter sets of the read API."""

from __future__ import annotations

import django_filters

from evaluation.models import Run, Score, task_choices


class RunFilter(django_filters.FilterSet):
    model = django_filters.CharFilter(field_name="model__name", help_text="Hugging Face id or baseline name")
    kind = django_filters.CharFilter(field_name="model__kind")

    class Meta:
        model = Run
        fields = ["dataset", "origin", "model", "kind"]


class ScoreFilter(django_filters.FilterSet):
    task = django_filters.MultipleChoiceFilter(choices=task_choices)
    metric = django_filters.CharFilter()
    source = django_filters.CharFilter(field_name="source_id", help_text="ISO 639-3 code")
    target = django_filters.CharFilter(field_name="target_id", help_text="ISO 639-3 code")
    monolingual = django_filters.BooleanFilter(field_name="target", lookup_expr="isnull")
    dataset = django_filters.NumberFilter(field_name="run__dataset")
    model = django_filters.CharFilter(field_name="run__model__name")
    origin = django_filters.ChoiceFilter(field_name="run__origin", choices=Run.Origin.choices)

    class Meta:
        model = Score
        fields = ["run", "task", "metric", "source", "target", "monolingual", "dataset", "model", "origin"]
