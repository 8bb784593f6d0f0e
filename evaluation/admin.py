from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import models

from evaluation.engine.languages import BY_CODE, TARGET_CODES
from evaluation.engine.registry import METRICS
from evaluation.models import Dataset, EmbeddingModel, Item, Language, Run, Score
from evaluation.outbox import BrokerUnavailable
from evaluation.submissions import SubmissionRefused, requeue_on_current_engine

# Addresses typed without a scheme are taken as https, as Django 6.0 will take them; until then Django
# would take them as http and warn on every form holding a URL field.
HTTPS_BY_DEFAULT = {models.URLField: {"assume_scheme": "https"}}


def https_by_default(field: models.Field[Any, Any], **kwargs: Any) -> forms.Field | None:
    """A model field's form field, addresses without a scheme taken as https (HTTPS_BY_DEFAULT, for a
    form built outside the admin's own factory)."""
    if isinstance(field, models.URLField):
        kwargs = {**HTTPS_BY_DEFAULT[models.URLField], **kwargs}
    return field.formfield(**kwargs)


@admin.register(Language)
class LanguageAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "script", "family", "rtl", "is_source"]


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    formfield_overrides = HTTPS_BY_DEFAULT
    list_display = ["name", "version", "license", "is_demo", "created_at"]
    readonly_fields = ["content_hash", "source", "import_report", "created_at"]


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ["dataset", "item_id", "language", "description"]
    list_filter = ["dataset", "language"]
    search_fields = ["persona", "instruction"]
    list_select_related = ["dataset", "language"]


class EmbeddingModelForm(forms.ModelForm):
    """Staff edit the declared languages as ticks; stored as the list of ISO 639-3 codes."""

    declared_languages = forms.MultipleChoiceField(
        required=False,
        choices=[(code, BY_CODE[code].name) for code in TARGET_CODES],
        widget=forms.CheckboxSelectMultiple,
        help_text="Averages are taken over these languages and other cells are marked; none ticked means all.",
    )

    class Meta:
        model = EmbeddingModel
        # The admin subclasses this form before its factory adds its own callback, so the form needs
        # one of its own.
        formfield_callback = https_by_default
        fields = [
            "name",
            "display_name",
            "kind",
            "license",
            "parameter_count",
            "is_local",
            "created_at",
            "declared_languages",
            "embedding_dimension",
            "max_tokens",
            "memory_bytes_fp16",
            "hub_url",
            "release_date",
            "open_weights",
            "trained_on_nirdesha",
        ]

    def clean_declared_languages(self) -> list[str]:
        chosen = set(self.cleaned_data.get("declared_languages") or [])
        return [code for code in TARGET_CODES if code in chosen]


@admin.register(EmbeddingModel)
class EmbeddingModelAdmin(admin.ModelAdmin):
    form = EmbeddingModelForm
    formfield_overrides = HTTPS_BY_DEFAULT
    list_display = ["name", "display_name", "kind", "parameter_count", "declared_language_count", "is_local"]
    search_fields = ["name", "display_name"]

    @admin.display(description="declared languages")
    def declared_language_count(self, model: EmbeddingModel) -> str:
        return f"{len(model.declared_languages)} of {len(TARGET_CODES)}" if model.declared_languages else "all"


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["id", "model", "dataset", "origin", "status", "engine_version", "progress", "created_at"]
    list_filter = ["status", "origin", "dataset", "engine_version"]
    list_select_related = ["model", "dataset"]
    raw_id_fields = ["submitted_by"]
    actions = ["accept_submitter_claims", "requeue_on_current_engine"]

    @admin.action(description="Accept the submitters' claims about their models (languages, training, names)")
    def accept_submitter_claims(self, request, queryset) -> None:
        changed = {run.pk: run.accept_claims() for run in queryset.select_related("model")}
        accepted = [pk for pk, fields in changed.items() if fields]
        self.message_user(request, f"Claims written on the model of {len(accepted)} of {len(changed)} runs.")

    @admin.action(description="Re-queue older-engine runs on the current engine")
    def requeue_on_current_engine(self, request, queryset) -> None:
        queued, skipped = [], []
        for old in queryset.select_related("model", "dataset").order_by("pk"):
            try:
                queued.append(requeue_on_current_engine(request.user, old).pk)
            except BrokerUnavailable as pending:
                queued.append(pending.args[0].pk)
            except SubmissionRefused as refusal:
                skipped.append(f"run {old.pk}: {refusal.message}")
        if queued:
            self.message_user(request, f"Queued on the current engine: runs {', '.join(map(str, queued))}.")
        for reason in skipped:
            self.message_user(request, f"Skipped {reason}", level=messages.WARNING)


class MetricFilter(admin.SimpleListFilter):
    """The registry's metrics, rather than the distinct values of every score (0.18 s at 1.2 million)."""

    title = "metric"
    parameter_name = "metric__exact"

    def lookups(self, request, model_admin):
        return [(name, spec.label) for name, spec in METRICS.items()]

    def queryset(self, request, queryset):
        return queryset.filter(metric=self.value()) if self.value() else queryset


@admin.register(Score)
class ScoreAdmin(admin.ModelAdmin):
    list_display = ["run", "task", "source", "target", "metric", "value"]
    list_filter = ["task", MetricFilter]
    list_select_related = ["run__model", "run__dataset", "source", "target"]
    # Counting every score a second time (for "N total" beside a filtered count) took ~0.1 s at 1.2 million.
    show_full_result_count = False
    # Newest first by id, which the primary key's index gives at once: the model's own ordering goes
    # through each score's run and languages, and sorted all 1.2 million scores for a page of 100 (0.2 s).
    ordering = ["-pk"]

    def get_queryset(self, request):
        # A score's row names its run (model and version) only: the run's details and manifest, joined to
        # every one of a page's 100 scores, were decoded 100 times (and each run's version fetched alone).
        return (
            super()
            .get_queryset(request)
            .defer("run__details", "run__manifest", "run__lifecycle", "run__log_tail", "run__stage_timestamps")
        )
