"""Viewsets of this app, registered on the project's one router (config/api_router.py)."""

from rest_framework.routers import BaseRouter

from annotation.api.views import AgreementViewSet, CampaignViewSet, RatingViewSet


def register(router: BaseRouter) -> None:
    """Add this app's viewsets to the shared router."""
    router.register("annotation/campaigns", CampaignViewSet, basename="annotation-campaign")
    router.register("annotation/ratings", RatingViewSet, basename="annotation-rating")
    router.register("annotation/agreement", AgreementViewSet, basename="annotation-agreement")
