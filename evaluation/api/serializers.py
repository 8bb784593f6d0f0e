"""Serializers of the submissions API; the run page's status endpoint reuses RunStatusSerializer."""

from __future__ import annotations

import re

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from config.serializers import DocumentedFieldsOnly
from evaluation.engine.languages import TARGET_CODES
from evaluation.models import Dataset, Run, Score
from evaluation.preflight import InvalidModelReference, validate_reference
from evaluation.redaction import public_log
from evaluation.submissions import Submission


class ScoreSerializer(serializers.ModelSerializer):
    source = serializers.CharField(source="source_id")
    target = serializers.CharField(source="target_id", allow_null=True)

    class Meta:
        model = Score
        fields = ["task", "source", "target", "metric", "value", "ci_low", "ci_high"]


class RunStatusSerializer(serializers.ModelSerializer):
    """What a person following a run needs: where it is, how far, and what it last said."""

    model = serializers.CharField(source="model.name")
    dataset = serializers.CharField(source="dataset.slug")
    status_label = serializers.CharField(source="get_status_display")
    failure_category_label = serializers.CharField(source="get_failure_category_display")
    queue_position = serializers.IntegerField(allow_null=True)
    is_terminal = serializers.BooleanField()
    url = serializers.CharField(source="get_absolute_url")
    elapsed_seconds = serializers.IntegerField(allow_null=True, read_only=True)
    stage_remaining_seconds = serializers.IntegerField(allow_null=True, read_only=True)

    def to_representation(self, instance: Run) -> dict:
        data = super().to_representation(instance)
        # Worker host names, process ids and server paths are for staff only (evaluation/redaction.py,
        # evaluation/public.py); everyone else, the submitter included, reads the public view.
        request = self.context.get("request")
        staff = self.context.get("staff", bool(request and request.user.is_staff))
        if not staff:
            for name in ("log_tail", "stage_detail"):
                if name in data:
                    data[name] = public_log(data[name])
            if "message" in data:
                data["message"] = instance.public_message
            data["model"] = instance.model.public_name
            if "manifest" in data:
                data["manifest"] = instance.public_manifest
        return data

    class Meta:
        model = Run
        fields = [
            "id",
            "url",
            "model",
            "dataset",
            "revision",
            "resolved_commit",
            "engine_version",
            "status",
            "status_label",
            "stage_detail",
            "progress",
            "elapsed_seconds",
            "stage_remaining_seconds",
            "queue_position",
            "is_terminal",
            "failure_category",
            "failure_category_label",
            "message",
            "log_tail",
            "stage_timestamps",
            "attempts",
            "created_at",
            "started_at",
            "finished_at",
        ]


class SubmissionDetailSerializer(RunStatusSerializer):
    """A submission with what its checks measured and, once done, its scores."""

    tokenizer_coverage = serializers.SerializerMethodField()
    scores = serializers.SerializerMethodField()

    class Meta(RunStatusSerializer.Meta):
        fields = [*RunStatusSerializer.Meta.fields, "note", "manifest", "tokenizer_coverage", "scores"]

    def get_tokenizer_coverage(self, run: Run) -> dict:
        return run.tokenizer_coverage

    def get_scores(self, run: Run) -> list[dict]:
        if run.status != Run.Status.DONE:
            return []
        return ScoreSerializer(Score.objects.for_run(run), many=True).data


# What the model field takes, stated in the schema and enforced as stated: a Hub id as huggingface_hub
# validates it (word characters, '-' and '.', no '--' or '..', not ending in .git), in ASCII, or (staff
# only) an absolute folder path without a '..' part; no control characters in either.
HUB_PART = r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?"
MODEL_REFERENCE = rf"^(?:(?!.*--)(?!.*\.\.)(?!.*\.git$){HUB_PART}/{HUB_PART}|(?!.*/\.\.(?:/|$))/[^\x00-\x1f\x7f]*)$"


@extend_schema_field({"type": "string", "maxLength": 300, "pattern": MODEL_REFERENCE})
class ModelReferenceField(serializers.CharField):
    pass


class SubmissionCreateSerializer(DocumentedFieldsOnly):
    model = ModelReferenceField(
        max_length=300, trim_whitespace=False, help_text="Hugging Face id (owner/name); staff: a folder path."
    )
    revision = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    display_name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    license = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    parameter_count = serializers.IntegerField(
        min_value=1, max_value=2**63 - 1, required=False, allow_null=True, default=None
    )
    note = serializers.CharField(max_length=2000, required=False, allow_blank=True, default="")
    declared_languages = serializers.ListField(
        child=serializers.ChoiceField(choices=list(TARGET_CODES)),
        required=False,
        default=list,
        help_text='ISO 639-3 codes of the languages the model supports (e.g. ["hin", "urd"]); empty: all. '
        "The leaderboard averages the model over these and marks its other cells.",
    )
    trained_on_nirdesha = serializers.BooleanField(
        required=False, default=False, help_text="The model was trained or tuned on Nirdesha data (shown as a marker)."
    )
    notify_by_email = serializers.BooleanField(
        required=False,
        default=False,
        help_text="E-mail me when the run ends (DONE, or FAILED with the reason).",
    )
    dataset = serializers.PrimaryKeyRelatedField(
        queryset=Dataset.objects.evaluable(),
        required=False,
        allow_null=True,
        default=None,
        help_text="Dataset id; empty means the newest full dataset (the demo when there is none).",
    )

    def validate_model(self, value: str) -> str:
        try:
            cleaned = validate_reference(value)
        except InvalidModelReference as exc:
            raise serializers.ValidationError(str(exc)) from None
        if not re.fullmatch(MODEL_REFERENCE, value):
            raise serializers.ValidationError(
                "Give a Hugging Face model id as owner/name in ASCII letters, digits, '_', '-' and '.' (staff: an "
                "absolute folder path), without spaces around it."
            )
        return cleaned

    def to_submission(self) -> Submission:
        data = dict(self.validated_data)
        chosen = set(data.pop("declared_languages", []) or [])
        return Submission(**data, declared_languages=tuple(code for code in TARGET_CODES if code in chosen))
