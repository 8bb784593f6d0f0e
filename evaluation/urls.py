from django.urls import path

from evaluation import views

app_name = "evaluation"
urlpatterns = [
    path("submit/", views.submit_model, name="submit"),
    path("runs/", views.my_runs, name="my_runs"),
    path("runs/<int:run_id>/", views.run_detail, name="run_detail"),
    path("runs/<int:run_id>/status/", views.run_status, name="run_status"),
    path("runs/<int:run_id>/cancel/", views.cancel_run, name="run_cancel"),
    path("runs/<int:run_id>/requeue/", views.requeue_run, name="run_requeue"),
    path("runs/<int:run_id>/withdraw/", views.withdraw_run, name="run_withdraw"),
    path("runs/<int:run_id>/restore/", views.restore_run, name="run_restore"),
]
