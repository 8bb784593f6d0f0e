"""Viewsets of this app, registered on the project's one router (config/api_router.py)."""

from rest_framework.routers import BaseRouter

from evaluation.api.views import SubmissionViewSet


def register(router: BaseRouter) -> None:
    """Add this app's viewsets to the shared router."""
    router.register("submissions", SubmissionViewSet, basename="submission")
