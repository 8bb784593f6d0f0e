from allauth.account.decorators import secure_admin_login
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from config.views import api_docs, healthz, redoc_bundle

# The admin's own log-in form has no rate limit; staff sign in through allauth's form, which has one
# (ACCOUNT_RATE_LIMITS), and come back to the admin.
admin.site.login = secure_admin_login(admin.site.login)

urlpatterns = [
    path("", include("leaderboard.urls")),
    path("evaluation/", include("evaluation.urls")),
    path("annotate/", include("annotation.urls")),
    path("accounts/", include("accounts.urls")),
    path("accounts/", include("allauth.urls")),
    path("admin/", admin.site.urls),
    path("api/", include("config.api_router")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", api_docs, name="api-docs"),
    path("api/docs/redoc/bundles/redoc.standalone.js", redoc_bundle, name="api-docs-bundle"),
    path("healthz", healthz, name="healthz"),
]

handler404 = "config.views.page_not_found"
handler403 = "config.views.permission_denied"
handler500 = "config.views.server_error"
