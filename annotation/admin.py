"""Admin pages for campaigns, annotators (with approval action and progress) and ratings."""

from __future__ import annotations

import statistics

from django.contrib import admin, messages
from django.db.models import Count

from annotation import services
from annotation.models import (
    Adjudication,
    AnnotatorProfile,
    Campaign,
    CampaignItem,
    LanguageApproval,
    Lease,
    Rating,
)


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "dataset", "language", "status", "origin", "ratings_per_item", "items", "ratings"]
    list_filter = ["status", "origin", "language", "dataset"]
    search_fields = ["name"]
    readonly_fields = ["seed", "origin", "sample_size", "created_by", "created_at", "progress_summary"]
    fields = ["name", "dataset", "language", "ratings_per_item", "status", *readonly_fields]
    actions = ["activate", "pause", "close"]

    def get_queryset(self, request):
        return super().get_queryset(request).with_progress()

    def has_add_permission(self, request) -> bool:
        # A campaign is a sample drawn by create_campaign; the staff page does that, not a bare form.
        return False

    def get_readonly_fields(self, request, obj=None):
        # The sample belongs to the dataset and language it was drawn from.
        return [*self.readonly_fields, "dataset", "language", "ratings_per_item"] if obj else self.readonly_fields

    @admin.display(ordering="item_count")
    def items(self, campaign: Campaign) -> int:
        return campaign.item_count

    @admin.display(ordering="rating_count")
    def ratings(self, campaign: Campaign) -> str:
        return f"{campaign.rating_count} / {campaign.item_count * campaign.ratings_per_item}"

    @admin.display(description="Progress")
    def progress_summary(self, campaign: Campaign) -> str:
        p = campaign.progress()
        return (
            f"{p['ratings']} of {p['ratings_needed']} ratings, {p['complete_items']} of {p['items']} items complete, "
            f"{p['active_leases']} leased now"
        )

    def _set_status(self, request, queryset, status: str) -> None:
        for campaign in queryset:
            campaign.set_status(status)
        self.message_user(request, f"{len(queryset)} campaigns are now {Campaign.Status(status).label.lower()}.")

    @admin.action(description="Activate (annotators may rate)")
    def activate(self, request, queryset):
        self._set_status(request, queryset, Campaign.Status.ACTIVE)

    @admin.action(description="Pause")
    def pause(self, request, queryset):
        self._set_status(request, queryset, Campaign.Status.PAUSED)

    @admin.action(description="Close")
    def close(self, request, queryset):
        self._set_status(request, queryset, Campaign.Status.CLOSED)


@admin.register(AnnotatorProfile)
class AnnotatorProfileAdmin(admin.ModelAdmin):
    """Annotators with their progress: ratings given and median seconds per item."""

    list_display = ["__str__", "native", "approved", "rating_count", "median_seconds", "created_at"]
    list_filter = ["native_languages"]
    search_fields = ["user__email"]
    filter_horizontal = ["native_languages"]
    actions = ["approve_native_languages"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("user")
            .prefetch_related("native_languages")
            .annotate(n_ratings=Count("user__annotation_ratings", distinct=True))
        )

    @admin.display(description="Native languages")
    def native(self, profile: AnnotatorProfile) -> str:
        return ", ".join(language.name for language in profile.native_languages.all())

    @admin.display(description="Approved for")
    def approved(self, profile: AnnotatorProfile) -> str:
        return ", ".join(language.name for language in profile.approved_languages())

    @admin.display(description="Ratings", ordering="n_ratings")
    def rating_count(self, profile: AnnotatorProfile) -> int:
        return profile.n_ratings

    @admin.display(description="Median seconds per item")
    def median_seconds(self, profile: AnnotatorProfile) -> str:
        seconds = list(
            Rating.objects.filter(annotator=profile.user, seconds__isnull=False).values_list("seconds", flat=True)
        )
        return f"{statistics.median(seconds):.0f}" if seconds else "—"

    @admin.action(description="Approve for the languages they read natively")
    def approve_native_languages(self, request, queryset):
        count = 0
        for profile in queryset:
            for language in profile.native_languages.all():
                services.approve(profile.user, language, by=request.user)
                count += 1
        self.message_user(request, f"{count} language approvals granted.", messages.SUCCESS)


@admin.register(LanguageApproval)
class LanguageApprovalAdmin(admin.ModelAdmin):
    list_display = ["annotator", "language", "approved_by", "approved_at"]
    list_filter = ["language"]
    search_fields = ["annotator__email"]
    autocomplete_fields = ["annotator"]
    readonly_fields = ["approved_by", "approved_at"]

    def save_model(self, request, obj, form, change):
        if not change:
            obj.approved_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(Rating)
class RatingAdmin(admin.ModelAdmin):
    """Raw ratings are evidence: they can be read and filtered here but not edited."""

    list_display = ["campaign_item", "annotator", "judgement", "flag", "seconds", "submitted_at"]
    list_filter = ["campaign_item__campaign", "judgement", "flag"]
    search_fields = ["annotator__email", "comment"]
    list_select_related = ["campaign_item__campaign", "campaign_item__item", "annotator"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(CampaignItem)
class CampaignItemAdmin(admin.ModelAdmin):
    list_display = ["campaign", "position", "item", "stratum"]
    list_filter = ["campaign"]
    list_select_related = ["campaign", "item"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Lease)
class LeaseAdmin(admin.ModelAdmin):
    list_display = ["campaign_item", "annotator", "started_at", "expires_at"]
    list_select_related = ["campaign_item__campaign", "campaign_item__item", "annotator"]


@admin.register(Adjudication)
class AdjudicationAdmin(admin.ModelAdmin):
    list_display = ["campaign_item", "judgement", "adjudicated_by", "adjudicated_at"]
    list_filter = ["campaign_item__campaign", "judgement"]
    list_select_related = ["campaign_item__campaign", "campaign_item__item", "adjudicated_by"]
