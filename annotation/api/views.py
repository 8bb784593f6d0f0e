"""Read-only API of the annotation app: campaigns, one's own ratings, agreement per language."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from annotation.api.serializers import AgreementRowSerializer, CampaignSerializer, RatingSerializer
from annotation.models import Campaign, Rating
from annotation.reports import agreement_by_language
from evaluation.models import Dataset


class CampaignViewSet(viewsets.ReadOnlyModelViewSet):
    """Staff see every campaign; annotators the active campaigns of the languages they are approved for."""

    serializer_class = CampaignSerializer
    permission_classes = [permissions.IsAuthenticated]
    filterset_fields = ["language", "status"]

    def get_queryset(self):
        campaigns = Campaign.objects.select_related("dataset").with_progress().order_by("pk")
        user = self.request.user
        return campaigns if user.is_staff else campaigns.filter(pk__in=Campaign.objects.open_to(user).values("pk"))


class RatingViewSet(viewsets.ReadOnlyModelViewSet):
    """Ratings are blind: annotators see only their own; staff see all."""

    serializer_class = RatingSerializer
    permission_classes = [permissions.IsAuthenticated]
    filterset_fields = ["campaign_item__campaign"]

    def get_queryset(self):
        return (
            Rating.objects.visible_to(self.request.user)
            .select_related("campaign_item__item")
            .order_by("campaign_item__campaign_id", "submitted_at", "id")
        )


class AgreementViewSet(viewsets.ViewSet):
    """Inter-annotator agreement per language of a dataset (public, aggregate figures only)."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(
        parameters=[OpenApiParameter("dataset", str, required=True, description="name@version")],
        responses=AgreementRowSerializer(many=True),
    )
    def list(self, request):
        slug = request.query_params.get("dataset", "")
        name, _, version = slug.partition("@")
        if not name or not version:
            raise ValidationError({"dataset": "Give the dataset as name@version."})
        dataset = get_object_or_404(Dataset, name=name, version=version)
        return Response(AgreementRowSerializer(agreement_by_language(dataset), many=True).data)
