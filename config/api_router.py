"""One DRF router for the whole API. Each app adds its viewsets in its own `api/routes.py`."""

from rest_framework.routers import DefaultRouter

from annotation.api.routes import register as register_annotation
from evaluation.api.routes import register as register_evaluation
from leaderboard.api.routes import register as register_leaderboard

router = DefaultRouter()
register_evaluation(router)
register_leaderboard(router)
register_annotation(router)

app_name = "api"
urlpatterns = router.urls
