"""Read-only API of the leaderboard: models, runs, scores, the leaderboard table and datasets."""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Q
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.reports import agreement_by_language
from evaluation.models import Dataset, EmbeddingModel, Run, Score
from leaderboard.api.filters import RunFilter, ScoreFilter
from leaderboard.api.serializers import (
    AgreementSerializer,
    DatasetSerializer,
    EmbeddingModelSerializer,
    RunDetailSerializer,
    RunSerializer,
    ScoreSerializer,
)
from leaderboard.cache import generation_key
from leaderboard.pages import overview_page
from leaderboard.responses import canonical_query


class EmbeddingModelViewSet(viewsets.ReadOnlyModelViewSet):
    """Models with at least one finished run."""

    serializer_class = EmbeddingModelSerializer
    filterset_fields = ["kind"]

    def get_queryset(self):
        return EmbeddingModel.objects.filter(runs__status=Run.Status.DONE).distinct().order_by("pk")


class RunViewSet(viewsets.ReadOnlyModelViewSet):
    """Finished runs (published results and runs evaluated here). Submissions have their own endpoint."""

    filterset_class = RunFilter

    def get_queryset(self):
        return Run.objects.finished().select_related("model", "dataset").order_by("pk")

    def get_serializer_class(self):
        return RunDetailSerializer if self.action == "retrieve" else RunSerializer


class ScoreViewSet(viewsets.ReadOnlyModelViewSet):
    """Every score of every finished run, one per task, language (or ordered pair) and metric.

    Values are fractions between 0 and 1; ci_low/ci_high are 95% bootstrap bounds (null for the
    published results)."""

    serializer_class = ScoreSerializer
    filterset_class = ScoreFilter

    def get_queryset(self):
        return Score.objects.filter(run__status=Run.Status.DONE).select_related("run__model").order_by("pk")


LEADERBOARD_PARAMETERS = [
    OpenApiParameter("dataset", OpenApiTypes.INT, description="benchmark version id (default: the full benchmark)"),
    OpenApiParameter("languages", OpenApiTypes.STR, many=True, description="ISO 639-3 codes to average over"),
    OpenApiParameter("script", OpenApiTypes.STR, many=True, description="ISO 15924 script codes"),
    OpenApiParameter("family", OpenApiTypes.STR, many=True, description="language families"),
    OpenApiParameter("pairs", OpenApiTypes.STR, enum=["both", "source"], description="which cross-lingual pairs count"),
    OpenApiParameter("origin", OpenApiTypes.STR, enum=["published", "rerun"]),
    OpenApiParameter("kind", OpenApiTypes.STR, enum=["dense", "lexical"]),
    OpenApiParameter("size", OpenApiTypes.STR, enum=["small", "base", "large", "unknown"]),
    OpenApiParameter("sort", OpenApiTypes.STR, description="column key, '-' for descending"),
]


class LeaderboardViewSet(viewsets.ViewSet):
    """The overview table as data: the same rows, filters and averages as the leaderboard page."""

    @extend_schema(parameters=LEADERBOARD_PARAMETERS, responses={200: OpenApiTypes.OBJECT})
    def list(self, request: Request) -> Response:
        key = generation_key("api", "leaderboard", canonical_query(request._request))
        body = cache.get(key)
        if body is None:
            page = overview_page(request.query_params)
            table = page.tables["overview"]
            context = page.context
            body = {
                "benchmark": str(context["dataset"]) if context["dataset"] else None,
                "benchmark_id": context["dataset"].pk if context["dataset"] else None,
                "languages": context["languages"],
                "pairs": context["pair_mode"],
                "errors": context["errors"],
                "averaging": "mean over the selected languages each model covers; missing languages are not zeros",
                "rows": [dict(zip(table.headers, row, strict=True)) for row in table.rows],
            }
            cache.set(key, body, settings.PUBLIC_PAGE_CACHE_SECONDS)
        return Response(body)


class DatasetViewSet(viewsets.ReadOnlyModelViewSet):
    """Benchmark versions with their cards."""

    serializer_class = DatasetSerializer

    def get_queryset(self):
        return Dataset.objects.annotate(
            item_count=Count("items", distinct=True),
            finished_runs=Count("runs", filter=Q(runs__status=Run.Status.DONE), distinct=True),
        ).order_by("pk")

    @extend_schema(responses={200: AgreementSerializer(many=True)})
    @action(detail=True)
    def agreement(self, request: Request, pk: str | None = None) -> Response:
        """Agreement of the native-speaker validation per language."""
        dataset = self.get_object()
        return Response(AgreementSerializer(agreement_by_language(dataset), many=True).data)
