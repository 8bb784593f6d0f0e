"""Viewsets of this app, registered on the project's one router (config/api_router.py)."""

from rest_framework.routers import BaseRouter


def register(router: BaseRouter) -> None:
    """Add this app's viewsets to the shared router."""
