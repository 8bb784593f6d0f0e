from django.urls import path

from evaluation import views

app_name = "evaluation"
urlpatterns = [
    path("submit/", views.submit, name="submit"),
    path("runs/<int:run_id>/", views.run_detail, name="run_detail"),
]
