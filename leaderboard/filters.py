"""The leaderboard's filter form: run filters through django-filter, language selection beside them."""

from __future__ import annotations

import functools

import django_filters
from django import forms
from django.db.models import QuerySet

from evaluation.engine.languages import BY_CODE, LANGUAGES
from evaluation.language_html import name_with_native_html
from evaluation.models import Dataset, EmbeddingModel, Run
from leaderboard.tables.selection import PAIR_MODES

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


LANGUAGE_CHOICES = [(lang.code, name_with_native_html(lang)) for lang in LANGUAGES]
SCRIPT_CHOICES = _unique((lang.script, lang.script_name) for lang in LANGUAGES)
FAMILY_CHOICES = _unique((lang.family, lang.family) for lang in LANGUAGES)


class BenchmarkChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Dataset) -> str:
        return obj.version_label


class LanguageSelectionForm(forms.Form):
    """Fields that choose what is averaged, not which runs are shown (so they are not filters)."""

    dataset = BenchmarkChoiceField(
        queryset=Dataset.objects.none(), required=False, empty_label=None, label="Benchmark version"
    )
    languages = forms.MultipleChoiceField(
        choices=LANGUAGE_CHOICES, required=False, widget=forms.CheckboxSelectMultiple, label="Languages"
    )
    # Checkboxes and radio buttons, shown as one-click chips: no Ctrl-click multi-selects.
    script = forms.MultipleChoiceField(
        choices=SCRIPT_CHOICES, required=False, label="Script", widget=forms.CheckboxSelectMultiple
    )
    family = forms.MultipleChoiceField(
        choices=FAMILY_CHOICES, required=False, label="Language family", widget=forms.CheckboxSelectMultiple
    )
    pairs = forms.ChoiceField(
        choices=[
            ("both", "both languages selected"),
            ("source", "query language selected"),
        ],
        required=False,
        label="Cross-lingual pairs",
        widget=forms.RadioSelect,
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

    def clean_pairs(self) -> str:
        value = self.cleaned_data.get("pairs") or "both"
        return value if value in PAIR_MODES else "both"

    def offer_only(self, available: list[str]) -> None:
        """Offer chips only for the languages (and their scripts and families) the version has.

        A chip for a language the version lacks selects nothing (the validation sample has 5 of 12);
        a code already chosen keeps its chip, so it can be unticked.
        """
        if not available:
            return
        chosen = set(self.data.getlist("languages")) if hasattr(self.data, "getlist") else set()
        have = set(available) | chosen
        self.fields["languages"].choices = [choice for choice in LANGUAGE_CHOICES if choice[0] in have]
        present = [BY_CODE[code] for code in available if code in BY_CODE]
        kept = {"script": {info.script for info in present}, "family": {info.family for info in present}}
        for name, values in kept.items():
            field = self.fields[name]
            picked = set(self.data.getlist(name)) if hasattr(self.data, "getlist") else set()
            field.choices = [choice for choice in field.choices if choice[0] in values | picked]


def licence_choices() -> list[tuple[str, str]]:
    licences = EmbeddingModel.objects.exclude(license="").values_list("license", flat=True).order_by().distinct()
    return [(name, name) for name in sorted(set(licences))]


class LeaderboardFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(
        method="filter_search",
        label="Search models",
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "model name", "autocomplete": "off"}),
    )
    origin = django_filters.ChoiceFilter(
        choices=Run.Origin.choices, label="Origin", empty_label="any", widget=forms.RadioSelect
    )
    kind = django_filters.ChoiceFilter(
        field_name="model__kind",
        choices=EmbeddingModel.Kind.choices,
        label="Model type",
        empty_label="any",
        widget=forms.RadioSelect,
    )
    size = django_filters.ChoiceFilter(
        choices=[(key, label) for key, (_, _, label) in SIZE_BANDS.items()],
        method="filter_size",
        label="Model size",
        empty_label="any",
        widget=forms.RadioSelect,
    )
    licence = django_filters.ChoiceFilter(
        field_name="model__license",
        choices=licence_choices,
        label="Licence",
        empty_label="any",
        widget=forms.RadioSelect,
    )
    weights = django_filters.ChoiceFilter(
        choices=[("open", "open weights only")],
        method="filter_weights",
        label="Weights",
        empty_label="any",
        widget=forms.RadioSelect,
    )
    nirdesha = django_filters.ChoiceFilter(
        choices=[("hide", "hide models trained on Nirdesha data")],
        method="filter_nirdesha",
        label="Trained on Nirdesha",
        empty_label="show all",
        widget=forms.RadioSelect,
    )

    class Meta:
        model = Run
        fields = ["q", "origin", "kind", "size", "licence", "weights", "nirdesha"]
        form = LanguageSelectionForm

    def filter_search(self, queryset: QuerySet[Run], name: str, value: str) -> QuerySet[Run]:
        return queryset.matching(value)

    def filter_weights(self, queryset: QuerySet[Run], name: str, value: str) -> QuerySet[Run]:
        return queryset.filter(model__open_weights=True) if value == "open" else queryset

    def filter_nirdesha(self, queryset: QuerySet[Run], name: str, value: str) -> QuerySet[Run]:
        return queryset.exclude(model__trained_on_nirdesha=True) if value == "hide" else queryset

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


@functools.cache
def form_parameters() -> frozenset[str]:
    """The query parameters the board's filter form reads: its run filters and its language fields.

    Every one is optional and the form checks only the values it is given, so a request that sets none
    of them cannot be refused; the read API then skips building the form (about 3 ms, most of what a
    cached answer costs)."""
    return frozenset(LeaderboardFilter.base_filters) | frozenset(LanguageSelectionForm.base_fields)
