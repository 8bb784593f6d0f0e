"""The leaderboard's filter form: run filters through django-filter, language selection beside them."""

from __future__ import annotations

import django_filters
from django import forms
from django.db.models import QuerySet

from evaluation.languages import LANGUAGES
from evaluation.models import Dataset, EmbeddingModel, Run
from leaderboard.tables import PAIR_MODES

# Parameter-count bands, in parameters. The edges split the published baselines into the small
# distilled model, the base-size encoders and the large ones.
SIZE_BANDS = {
    "small": (None, 200_000_000, "under 200M parameters"),
    "base": (200_000_000, 500_000_000, "200M–500M"),
    "large": (500_000_000, None, "500M and more"),
    "unknown": (None, None, "size not known"),
}


def _unique(pairs):
    seen: dict[str, str] = {}
    for key, label in pairs:
        seen.setdefault(key, label)
    return sorted(seen.items(), key=lambda pair: pair[1])


LANGUAGE_CHOICES = [(lang.code, lang.name) for lang in LANGUAGES]
SCRIPT_CHOICES = _unique((lang.script, lang.script_name) for lang in LANGUAGES)
FAMILY_CHOICES = _unique((lang.family, lang.family) for lang in LANGUAGES)


class BenchmarkChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Dataset) -> str:
        pool = obj.pool_size
        suffix = f" · pool {pool:,} per language" if pool else ""
        return f"{obj}{suffix}"


class LanguageSelectionForm(forms.Form):
    """Fields that choose what is averaged, not which runs are shown (so they are not filters)."""

    dataset = BenchmarkChoiceField(
        queryset=Dataset.objects.none(), required=False, empty_label=None, label="Benchmark version"
    )
    languages = forms.MultipleChoiceField(
        choices=LANGUAGE_CHOICES, required=False, widget=forms.CheckboxSelectMultiple, label="Languages"
    )
    script = forms.MultipleChoiceField(choices=SCRIPT_CHOICES, required=False, label="Script")
    family = forms.MultipleChoiceField(choices=FAMILY_CHOICES, required=False, label="Language family")
    pairs = forms.ChoiceField(
        choices=[
            ("both", "pairs with both languages selected"),
            ("source", "pairs with the query language selected"),
        ],
        required=False,
        label="Cross-lingual pairs",
    )
    common = forms.BooleanField(
        required=False,
        label="Common languages only",
        help_text="Average every model over the same languages: those all shown models declare.",
    )
    sort = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = Dataset.objects.with_finished_runs()
        self.fields["script"].widget.attrs["size"] = 4
        self.fields["family"].widget.attrs["size"] = 3

    def clean_pairs(self) -> str:
        value = self.cleaned_data.get("pairs") or "both"
        return value if value in PAIR_MODES else "both"


class LeaderboardFilter(django_filters.FilterSet):
    origin = django_filters.ChoiceFilter(choices=Run.Origin.choices, label="Origin", empty_label="published and re-run")
    kind = django_filters.ChoiceFilter(
        field_name="model__kind", choices=EmbeddingModel.Kind.choices, label="Model type", empty_label="any type"
    )
    size = django_filters.ChoiceFilter(
        choices=[(key, label) for key, (_, _, label) in SIZE_BANDS.items()],
        method="filter_size",
        label="Model size",
        empty_label="any size",
    )

    class Meta:
        model = Run
        fields = ["origin", "kind", "size"]
        form = LanguageSelectionForm

    def filter_size(self, queryset: QuerySet[Run], name: str, value: str) -> QuerySet[Run]:
        if value == "unknown":
            return queryset.filter(model__parameter_count__isnull=True)
        low, high, _ = SIZE_BANDS[value]
        if low is not None:
            queryset = queryset.filter(model__parameter_count__gte=low)
        if high is not None:
            queryset = queryset.filter(model__parameter_count__lt=high)
        return queryset

    def filter_queryset(self, queryset: QuerySet[Run]) -> QuerySet[Run]:
        # The form also carries the language selection; only the declared filters touch the runs.
        for name, value in self.form.cleaned_data.items():
            if name in self.filters:
                queryset = self.filters[name].filter(queryset, value)
        return queryset
