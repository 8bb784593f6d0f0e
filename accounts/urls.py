from django.urls import path

from accounts import views

app_name = "accounts"
urlpatterns = [
    path("api-token/", views.api_token, name="api_token"),
    path("name/", views.display_name, name="display_name"),
    path("hub/", views.hub_account, name="hub_account"),
]
