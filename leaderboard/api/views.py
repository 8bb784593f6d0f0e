"""Read-only API of the leaderboard: models, runs, scores, the leaderboard table and datasets."""

from __future__ import annotations

import json
from collections.abc import Callable

from django.conf import settings
from django.db.models import Count, Q
from django.http import HttpResponse, HttpResponseBase, QueryDict
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.api.serializers import AgreementRowSerializer
from annotation.reports import agreement_by_language
from evaluation.models import Dataset, EmbeddingModel, Run, Score
from leaderboard.api.filters import RunFilter, ScoreFilter
from leaderboard.api.serializers import (
    DatasetSerializer,
    EmbeddingModelSerializer,
    RunDetailSerializer,
    RunSerializer,
    ScoreSerializer,
)
from leaderboard.cache import generation_key, get_or_rebuild, latest_of
from leaderboard.compression import compressed_hit, negotiated
from leaderboard.filters import (
    FAMILY_CHOICES,
    LANGUAGE_CHOICES,
    SCRIPT_CHOICES,
    SIZE_BANDS,
    LeaderboardFilter,
    form_parameters,
)
from leaderboard.pages.overview import overview_page
from leaderboard.pages.selection import Page
from leaderboard.parameters import invalid_filters, normalised
from leaderboard.responses import canonical_params, canonical_query, known_parameters
from leaderboard.tables.selection import PAIR_MODES


def cached_json(request: Request, key: str, compute: Callable[[], Response | object]) -> HttpResponseBase:
    """Serve a read response from the cache, stored as rendered JSON under the page generation.

    `key` is a generation key (leaderboard.cache.generation_key); its latest copy is kept beside it, so
    that after a change of results the response is rebuilt once while its callers get that copy
    (leaderboard.cache.get_or_rebuild). JSON clients get the stored bytes as they are (no serializer,
    no renderer on a hit); the browsable API renders the same data. A non-200 response is passed
    through and not stored.
    """

    def build() -> bytes:
        result = compute()
        if isinstance(result, Response):
            if result.status_code != 200:
                raise _NotStored(result)
            result = result.data
        return JSONRenderer().render(result)

    as_stored = getattr(request, "accepted_renderer", None) is None or request.accepted_renderer.format == "json"
    if as_stored:
        compressed = compressed_hit(request, key, JSON)
        if compressed is not None:
            return compressed
    try:
        served = get_or_rebuild(key, latest_of(key), build, settings.PUBLIC_PAGE_CACHE_SECONDS)
    except _NotStored as refused:
        return refused.response
    if as_stored:
        return negotiated(request, HttpResponse(served.value, content_type=JSON), key, keep=served.fresh)
    return Response(json.loads(served.value))


class _NotStored(Exception):
    """A response other than 200, which is answered as it is and never cached."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.status_code)
        self.response = response


def leaderboard_key(query: str) -> str:
    """The cache key of /api/leaderboard/ for a canonical query string (leaderboard.responses)."""
    return generation_key("api", "leaderboard", query)


def leaderboard_body(params: QueryDict, page: Page | None = None) -> bytes:
    """/api/leaderboard/ as the JSON bytes cached_json stores; from `page` when the overview of these
    parameters is already built (leaderboard.refresh builds both after a run finishes)."""
    return JSONRenderer().render(LeaderboardViewSet.table(params, page))


API_PARAMETERS = frozenset({"limit", "offset", "format"})
# The content type of the stored JSON responses.
JSON = "application/json"


class CachedReadMixin:
    """Serve list and detail responses from the cache, under the generation of the public pages.

    The read API shows the same public data as the pages, whoever asks, so a response is stored per
    host (pagination links are absolute), path and query string until the next import or finished run.
    """

    def _known(self) -> frozenset[str]:
        filterset = getattr(self, "filterset_class", None)
        names = set(filterset.base_filters) if filterset else set(getattr(self, "filterset_fields", []))
        return API_PARAMETERS | names

    def list(self, request: Request, *args, **kwargs) -> HttpResponseBase:
        return self._cached(request, lambda: super(CachedReadMixin, self).list(request, *args, **kwargs))

    def retrieve(self, request: Request, *args, **kwargs) -> HttpResponseBase:
        return self._cached(request, lambda: super(CachedReadMixin, self).retrieve(request, *args, **kwargs))

    def _cached(self, request: Request, compute) -> HttpResponseBase:
        # Only parameters the view reads make the key (unknown ones do not change the answer).
        key = generation_key("api", request.get_host(), request.path, canonical_query(request._request, self._known()))
        return cached_json(request, key, compute)


class EmbeddingModelViewSet(CachedReadMixin, viewsets.ReadOnlyModelViewSet):
    """Models with at least one finished run."""

    serializer_class = EmbeddingModelSerializer
    filterset_fields = ["kind"]

    def get_queryset(self):
        return EmbeddingModel.objects.filter(runs__in=Run.objects.public()).distinct().order_by("pk")


class RunViewSet(CachedReadMixin, viewsets.ReadOnlyModelViewSet):
    """Finished runs (published results and runs evaluated here). Submissions have their own endpoint."""

    filterset_class = RunFilter

    def get_queryset(self):
        # The public rule of Run.objects.visible_to: the same answer for everyone, so it can be cached.
        return Run.objects.public().select_related("model", "dataset").order_by("pk")

    def get_serializer_class(self):
        return RunDetailSerializer if self.action == "retrieve" else RunSerializer


class ScoreViewSet(CachedReadMixin, viewsets.ReadOnlyModelViewSet):
    """Every score of every finished run, one per task, language (or ordered pair) and metric.

    Values are fractions between 0 and 1; ci_low/ci_high are 95% percentile bootstrap bounds (null for the
    published results); for the ECE metrics the plain percentile interval of the resampled ECEs, not
    bias-corrected (it can lie above the upward-biased ECE)."""

    serializer_class = ScoreSerializer
    filterset_class = ScoreFilter

    def get_queryset(self):
        return Score.objects.filter(run__in=Run.objects.public()).select_related("run__model").order_by("pk")


def _keys(choices) -> list[str]:
    return [str(key) for key, _ in choices]


# The values the page's own form and filters accept (leaderboard/filters.py), so that the schema
# states exactly what the server takes; anything else is a 400 naming the parameter.
COMMON_VALUES = ["on", "off", "true", "false", "1", "0", ""]
LEADERBOARD_PARAMETERS = [
    OpenApiParameter(
        "dataset",
        {"type": "integer", "minimum": 1},
        description="benchmark version id, one with finished runs (default: the full benchmark)",
    ),
    OpenApiParameter(
        "languages", OpenApiTypes.STR, many=True, enum=_keys(LANGUAGE_CHOICES), description="ISO 639-3 codes"
    ),
    OpenApiParameter("script", OpenApiTypes.STR, many=True, enum=_keys(SCRIPT_CHOICES), description="ISO 15924"),
    OpenApiParameter("family", OpenApiTypes.STR, many=True, enum=_keys(FAMILY_CHOICES), description="families"),
    OpenApiParameter("pairs", OpenApiTypes.STR, enum=list(PAIR_MODES), description="which cross-lingual pairs count"),
    OpenApiParameter(
        "common",
        OpenApiTypes.STR,
        enum=COMMON_VALUES,
        description="average every model over the selected languages all shown models declare (default: each "
        "model over the selected languages it declares)",
    ),
    OpenApiParameter("origin", OpenApiTypes.STR, enum=_keys(Run.Origin.choices)),
    OpenApiParameter("kind", OpenApiTypes.STR, enum=_keys(EmbeddingModel.Kind.choices)),
    OpenApiParameter("size", OpenApiTypes.STR, enum=list(SIZE_BANDS)),
    OpenApiParameter("sort", OpenApiTypes.STR, description="column key, '-' for descending"),
]


def validate_leaderboard_parameters(params: QueryDict) -> None:
    """Refuse what the board's form would ignore: a 404 for a version without runs, else a 400 naming the parameter."""
    if form_parameters().isdisjoint(params):
        return
    filterset = LeaderboardFilter(params, queryset=Run.objects.none())
    form = filterset.form
    errors = {name: list(messages) for name, messages in form.errors.items()} if not form.is_valid() else {}
    for value in params.getlist("common"):
        if value.lower() not in COMMON_VALUES:
            errors["common"] = [f"Give one of {', '.join(value for value in COMMON_VALUES if value)}, or nothing."]
    if set(errors) == {"dataset"} and all(value.isascii() and value.isdigit() for value in params.getlist("dataset")):
        raise NotFound("No benchmark version with finished runs has this id.")
    if errors:
        raise ValidationError(errors)


class LeaderboardViewSet(viewsets.ViewSet):
    """The overview table as data: the same rows, filters and averages as the leaderboard page."""

    @extend_schema(parameters=LEADERBOARD_PARAMETERS, responses={200: OpenApiTypes.OBJECT})
    def list(self, request: Request) -> HttpResponseBase:
        validate_leaderboard_parameters(request.query_params)
        # Values the table ignores are dropped before the key is made; refused filters are a 400 with the
        # table and its errors, never cached (leaderboard.parameters).
        params = normalised(known_parameters(request.query_params))
        if invalid_filters(params):
            return Response(self.table(params), status=400)
        return cached_json(request, leaderboard_key(canonical_params(params)), lambda: self.table(params))

    @staticmethod
    def table(params: QueryDict, page: Page | None = None) -> dict:
        # Built from the parameters its cache key is made of.
        page = page or overview_page(known_parameters(params))
        table = page.tables["overview"]
        context = page.context
        return {
            "benchmark": str(context["dataset"]) if context["dataset"] else None,
            "benchmark_id": context["dataset"].pk if context["dataset"] else None,
            "languages": context["languages"],
            "pairs": context["pair_mode"],
            "errors": context["errors"],
            "averaging": (
                "mean over the selected languages every shown model declares (common languages only)"
                if context.get("common")
                else "mean over the selected languages each model declares (all when it declares none), as in "
                "the paper; languages without results are left out, never zeros"
            ),
            "ranking": "a rank compares models measured on the same languages (each row's ranked_over): models "
            "declaring every selected language are ranked together; models declaring fewer, and re-runs of an "
            "older engine version (older_engine), have null ranks; with common=on every current-engine model is "
            "ranked over the languages all shown models declare",
            # Whether rank_best..rank_worst hold per model or all at once (ranks=simultaneous).
            "rank_intervals": context["table"].rank_kind,
            "intervals": "re-runs: the engine's joint bootstrap of the average (a T4 average over only some of the "
            "run's languages: the mean of the per-language bounds, not joint); published Recall@k: Wilson 95% "
            "from the published value and the pool size, averages carrying the mean of those bounds",
            # Each column's chance (or majority) baseline, a fraction like the values (null where undefined).
            "chance_levels": context.get("chance_levels", {}),
            "rows": [dict(zip(table.headers, row, strict=True)) for row in table.rows],
        }


class DatasetViewSet(CachedReadMixin, viewsets.ReadOnlyModelViewSet):
    """Benchmark versions with their cards."""

    serializer_class = DatasetSerializer

    def get_queryset(self):
        return Dataset.objects.annotate(
            item_count=Count("items", distinct=True),
            finished_runs=Count("runs", filter=Q(runs__status=Run.Status.DONE), distinct=True),
        ).order_by("pk")

    # A dataset has one row per language: the list is whole, never paged, and the schema says so.
    @extend_schema(responses={200: AgreementRowSerializer(many=True)})
    @action(detail=True, pagination_class=None)
    def agreement(self, request: Request, pk: str | None = None) -> Response:
        """Agreement of the native-speaker validation per language."""
        dataset = self.get_object()
        return Response(AgreementRowSerializer(agreement_by_language(dataset), many=True).data)
