"""Read-only representations of the leaderboard's data."""

from __future__ import annotations

from django.urls import reverse
from rest_framework import serializers

from evaluation.models import Dataset, EmbeddingModel, Run, Score


class EmbeddingModelSerializer(serializers.ModelSerializer):
    # A local folder is named by its folder name (evaluation/public.py), never by the server's path.
    name = serializers.CharField(source="public_name", read_only=True)
    label = serializers.CharField(read_only=True)

    class Meta:
        model = EmbeddingModel
        fields = ["id", "name", "display_name", "label", "kind", "license", "parameter_count", "declared_languages"]


class DatasetBriefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Dataset
        fields = ["id", "name", "version", "is_demo"]


class RunSerializer(serializers.ModelSerializer):
    model = EmbeddingModelSerializer(read_only=True)
    dataset = DatasetBriefSerializer(read_only=True)
    page = serializers.SerializerMethodField()

    class Meta:
        model = Run
        fields = [
            "id",
            "model",
            "dataset",
            "origin",
            "status",
            "revision",
            "resolved_commit",
            "engine_version",
            "tasks",
            "languages",
            "created_at",
            "finished_at",
            "page",
        ]

    def get_page(self, run: Run) -> str:
        return reverse("leaderboard:run_detail", args=[run.pk])


class RunDetailSerializer(RunSerializer):
    """A run with its manifest and results as the public reads them (evaluation/public.py), for everyone."""

    manifest = serializers.JSONField(source="public_manifest", read_only=True)
    details = serializers.JSONField(source="public_details", read_only=True)

    class Meta(RunSerializer.Meta):
        fields = [*RunSerializer.Meta.fields, "manifest", "details"]


class ScoreSerializer(serializers.ModelSerializer):
    run = serializers.PrimaryKeyRelatedField(read_only=True)
    model = serializers.CharField(source="run.model.public_name", read_only=True)
    source = serializers.CharField(source="source_id", read_only=True)
    target = serializers.CharField(source="target_id", read_only=True, allow_null=True)

    class Meta:
        model = Score
        fields = ["id", "run", "model", "task", "source", "target", "metric", "value", "ci_low", "ci_high"]


class DatasetSerializer(serializers.ModelSerializer):
    item_count = serializers.IntegerField(read_only=True)
    finished_runs = serializers.IntegerField(read_only=True)

    class Meta:
        model = Dataset
        fields = [
            "id",
            "name",
            "version",
            "license",
            "description",
            "provenance",
            "translation_pipeline",
            "citation",
            "homepage",
            "content_hash",
            "declared_pool_size",
            "is_demo",
            "item_count",
            "finished_runs",
        ]
