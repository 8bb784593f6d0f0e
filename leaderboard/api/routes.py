"""Viewsets of this app, registered on the project's one router (config/api_router.py)."""

from rest_framework.routers import BaseRouter

from leaderboard.api.views import (
    DatasetViewSet,
    EmbeddingModelViewSet,
    LeaderboardViewSet,
    RunViewSet,
    ScoreViewSet,
)


def register(router: BaseRouter) -> None:
    """Add this app's viewsets to the shared router."""
    router.register("models", EmbeddingModelViewSet, basename="model")
    router.register("runs", RunViewSet, basename="run")
    router.register("scores", ScoreViewSet, basename="score")
    router.register("leaderboard", LeaderboardViewSet, basename="leaderboard")
    router.register("datasets", DatasetViewSet, basename="dataset")
