"""Read-only API of the annotation app: campaigns, one's own ratings, agreement per language."""

from __future__ import annotations

import django_filters
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from annotation.api.serializers import AgreementRowSerializer, CampaignSerializer, RatingSerializer
from annotation.models import Campaign, Rating
from annotation.reports import agreement_by_language
from config.filters import IdFilter
from evaluation.engine.languages import TARGET_CODES
from evaluation.models import Dataset


class CampaignFilter(django_filters.FilterSet):
    # Choices rather than database lookups: a language or campaign with nothing to show is an empty
    # list, as for any other filter value the schema allows, not a 400.
    language = django_filters.ChoiceFilter(choices=[(code, code) for code in TARGET_CODES])
    status = django_filters.ChoiceFilter(choices=Campaign.Status.choices)

    class Meta:
        model = Campaign
        fields = ["language", "status"]


class RatingFilter(django_filters.FilterSet):
    campaign_item__campaign = IdFilter(field_name="campaign_item__campaign", help_text="Campaign id")

    class Meta:
        model = Rating
        fields = ["campaign_item__campaign"]


class CampaignViewSet(viewsets.ReadOnlyModelViewSet):
    """Staff see every campaign; annotators the active campaigns of the languages they are approved for."""

    serializer_class = CampaignSerializer
    permission_classes = [permissions.IsAuthenticated]
    filterset_class = CampaignFilter

    def get_queryset(self):
        campaigns = Campaign.objects.select_related("dataset").with_progress().order_by("pk")
        user = self.request.user
        return campaigns if user.is_staff else campaigns.filter(pk__in=Campaign.objects.open_to(user).values("pk"))


class RatingViewSet(viewsets.ReadOnlyModelViewSet):
    """Ratings are blind: annotators see only their own; staff see all."""

    serializer_class = RatingSerializer
    permission_classes = [permissions.IsAuthenticated]
    filterset_class = RatingFilter

    def get_queryset(self):
        return (
            Rating.objects.visible_to(self.request.user)
            .select_related("campaign_item__item")
            .order_by("campaign_item__campaign_id", "submitted_at", "id")
        )


# NAME@VERSION, both parts given, no control characters (what the view and the middleware accept).
DATASET_REFERENCE = r"^[^@\x00-\x1f\x7f]+@[^\x00-\x1f\x7f]+$"


class AgreementViewSet(viewsets.ViewSet):
    """Inter-annotator agreement per language of a dataset (public, aggregate figures only)."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "dataset",
                {"type": "string", "pattern": DATASET_REFERENCE},
                required=True,
                description="the dataset version as NAME@VERSION",
            )
        ],
        responses=AgreementRowSerializer(many=True),
    )
    def list(self, request):
        slug = request.query_params.get("dataset", "")
        name, _, version = slug.partition("@")
        if not name or not version:
            raise ValidationError({"dataset": "Give the dataset as name@version."})
        dataset = get_object_or_404(Dataset, name=name, version=version)
        return Response(AgreementRowSerializer(agreement_by_language(dataset), many=True).data)
