"""Forms of the annotation pages. Validation of shapes only; the rules live in models and services."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model

from annotation.models import Campaign, Flag, Judgement
from evaluation.models import Dataset, Language


def target_languages():
    return Language.objects.filter(is_source=False).order_by("name")


class NativeLanguagesForm(forms.Form):
    native_languages = forms.ModelMultipleChoiceField(
        queryset=target_languages(),
        widget=forms.CheckboxSelectMultiple,
        required=False,
        label="Languages you read natively",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["native_languages"].queryset = target_languages()


class RatingForm(forms.Form):
    # A row id: bounded like the column, so that a forged huge number is a form error, not a database overflow.
    campaign_item = forms.IntegerField(widget=forms.HiddenInput, min_value=1, max_value=2**63 - 1)
    judgement = forms.ChoiceField(
        choices=Judgement.choices,
        widget=forms.RadioSelect,
        error_messages={"required": "Choose Completely Agree, Partially Agree or Do Not Agree."},
    )
    comment = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False, max_length=2000)
    flag = forms.ChoiceField(choices=Flag.choices, required=False, label="Flag a problem")


class CampaignForm(forms.Form):
    name = forms.CharField(max_length=200, initial="Validation round 1")
    dataset = forms.ModelChoiceField(
        queryset=Dataset.objects.none(),
        help_text="Only versions whose items are on this server can be sampled; a results-only version is not offered.",
        error_messages={"invalid_choice": "That version's items are not on this server, so it cannot be sampled."},
    )
    language = forms.ModelChoiceField(queryset=target_languages())
    ratings_per_item = forms.IntegerField(min_value=1, max_value=10, initial=2)
    # Bounded by the columns they are stored in (a larger number would overflow the database).
    sample_size = forms.IntegerField(min_value=1, max_value=2**31 - 1, initial=150)
    seed = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=2**63 - 1,
        help_text="Leave empty for a random seed (it is stored with the campaign).",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["language"].queryset = target_languages()
        self.fields["dataset"].queryset = Dataset.objects.evaluable().order_by("is_demo", "-created_at")


class CampaignStatusForm(forms.Form):
    status = forms.ChoiceField(choices=Campaign.Status.choices)


class ApprovalForm(forms.Form):
    annotator = forms.ModelChoiceField(queryset=get_user_model().objects.filter(is_active=True))
    language = forms.ModelChoiceField(queryset=target_languages())
    action = forms.ChoiceField(choices=[("approve", "Approve"), ("revoke", "Revoke")])


class AdjudicationForm(forms.Form):
    judgement = forms.ChoiceField(choices=Judgement.choices, widget=forms.RadioSelect, label="Final judgement")
    note = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False, max_length=4000)
