from django.urls import path

from annotation import views

app_name = "annotation"
urlpatterns = [
    path("", views.home, name="home"),
    path("profile/", views.profile, name="profile"),
    path("campaigns/<int:campaign_id>/next/", views.next_item, name="next_item"),
    path("rate/<int:lease_id>/", views.rate, name="rate"),
    path("rate/<int:lease_id>/skip/", views.skip, name="skip"),
    path("campaigns/<int:campaign_id>/undo/", views.undo, name="undo"),
    path("agreement/", views.agreement, name="agreement"),
    path("staff/", views.staff_home, name="staff_home"),
    path("staff/annotators/", views.staff_annotators, name="staff_annotators"),
    path("staff/campaigns/new/", views.staff_campaign_new, name="staff_campaign_new"),
    path("staff/campaigns/<int:campaign_id>/", views.staff_campaign, name="staff_campaign"),
    path("staff/campaigns/<int:campaign_id>/status/", views.staff_campaign_status, name="staff_campaign_status"),
    path("staff/campaigns/<int:campaign_id>/disagreements/", views.staff_disagreements, name="staff_disagreements"),
    path(
        "staff/campaigns/<int:campaign_id>/export.<str:fmt>",
        views.staff_campaign_export,
        name="staff_campaign_export",
    ),
    path("staff/items/<int:campaign_item_id>/adjudicate/", views.staff_adjudicate, name="staff_adjudicate"),
]
