from __future__ import annotations

from rest_framework import serializers

from annotation.models import Campaign, Rating


class CampaignSerializer(serializers.ModelSerializer):
    dataset = serializers.CharField(source="dataset.slug")
    language = serializers.CharField(source="language_id")
    items = serializers.IntegerField(source="item_count")
    ratings = serializers.IntegerField(source="rating_count")

    class Meta:
        model = Campaign
        fields = ["id", "name", "dataset", "language", "status", "origin", "ratings_per_item", "items", "ratings"]


class RatingSerializer(serializers.ModelSerializer):
    campaign = serializers.IntegerField(source="campaign_item.campaign_id")
    item_id = serializers.IntegerField(source="campaign_item.item.item_id")
    language = serializers.CharField(source="campaign_item.item.language_id")

    class Meta:
        model = Rating
        fields = ["id", "campaign", "item_id", "language", "judgement", "comment", "flag", "seconds", "submitted_at"]


class AgreementRowSerializer(serializers.Serializer):
    """One language's agreement (see annotation.reports.agreement_by_language)."""

    language = serializers.CharField()
    language_name = serializers.CharField()
    n = serializers.IntegerField()
    percent_agreement = serializers.FloatField(allow_null=True)
    kappa = serializers.FloatField(allow_null=True)
    kappa_ci_low = serializers.FloatField(allow_null=True)
    kappa_ci_high = serializers.FloatField(allow_null=True)
    kappa_ci_low_simple = serializers.FloatField(allow_null=True)
    kappa_ci_high_simple = serializers.FloatField(allow_null=True)
    kappa_band = serializers.CharField()
    alpha = serializers.FloatField(allow_null=True)
    ac1 = serializers.FloatField(allow_null=True)
    ac1_band = serializers.CharField()
    ac1_first_rater_marginals = serializers.FloatField(allow_null=True)
