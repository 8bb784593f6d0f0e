from django.urls import path

from leaderboard import views

app_name = "leaderboard"
urlpatterns = [
    path("", views.overview, name="overview"),
    path("tasks/<str:task>/", views.task_detail, name="task"),
    path("crosslingual/", views.crosslingual, name="crosslingual"),
    path("compare/", views.compare, name="compare"),
    path("diagnostics/", views.diagnostics, name="diagnostics"),
    path("results/<int:run_id>/", views.run_detail, name="run_detail"),
    path("results/<int:run_id>/errors/", views.run_errors, name="run_errors"),
    path("compare/errors/", views.compare_errors, name="compare_errors"),
    path("results/<int:run_id>/files/<str:name>", views.run_artefact, name="run_artefact"),
    path("reproduce/", views.reproduce, name="reproduce"),
    path("results/<int:run_id>/artefacts.zip", views.run_artefact_archive, name="run_artefact_archive"),
    path("results/<int:run_id>/mteb.zip", views.run_mteb_export, name="run_mteb_export"),
    path("models/<str:slug>/", views.model_detail, name="model_detail"),
    path("exports/columns/", views.export_columns, name="export_columns"),
    path("datasets/", views.dataset_list, name="dataset_list"),
    path("datasets/<int:dataset_id>/", views.dataset_detail, name="dataset_detail"),
    path("datasets/<int:dataset_id>/files.zip", views.dataset_files, name="dataset_files"),
]
