"""The submission form: it validates and cleans; evaluation.submissions decides and records."""

from __future__ import annotations

from django import forms

from evaluation.engine.languages import BY_CODE, TARGET_CODES
from evaluation.models import Dataset
from evaluation.preflight import InvalidModelReference, is_local_reference, validate_reference
from evaluation.submissions import Submission


class DatasetChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Dataset) -> str:
        return str(obj)


class SubmissionForm(forms.Form):
    model = forms.CharField(
        label="Model",
        max_length=300,
        help_text="A Hugging Face model id, e.g. intfloat/multilingual-e5-small.",
        widget=forms.TextInput(attrs={"placeholder": "owner/name", "autocomplete": "off", "spellcheck": "false"}),
    )
    revision = forms.CharField(
        label="Revision",
        max_length=200,
        required=False,
        help_text="Branch, tag or commit. Empty means the default branch; we pin the commit it points to.",
    )
    display_name = forms.CharField(
        label="Display name",
        max_length=200,
        required=False,
        help_text="A suggestion kept with your run; staff set the name the leaderboard shows.",
    )
    license = forms.CharField(label="Licence", max_length=100, required=False, help_text="Empty: read from the card.")
    parameter_count = forms.IntegerField(
        label="Parameters",
        required=False,
        min_value=1,
        # The column is a 64-bit integer; a larger number would overflow the database.
        max_value=2**63 - 1,
        help_text="Empty: counted from the weights.",
    )
    declared_languages = forms.MultipleChoiceField(
        label="Supported languages",
        required=False,
        choices=[(code, BY_CODE[code].name) for code in TARGET_CODES],
        widget=forms.CheckboxSelectMultiple,
        help_text="The languages the model's card says it supports. The leaderboard averages the model over "
        "these and marks its other cells; none ticked means all languages.",
    )
    trained_on_nirdesha = forms.BooleanField(
        label="Trained on Nirdesha data",
        required=False,
        help_text="Tick if this model was trained or tuned on any Nirdesha data (including the validation "
        "sample); the leaderboard marks it, as MTEB does for models trained on its test sets.",
    )
    notify_by_email = forms.BooleanField(
        label="E-mail me when the run ends",
        required=False,
        help_text="One e-mail when it is done (with a link to its results) or has failed (with the reason).",
    )
    note = forms.CharField(label="Note", required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 3}))
    dataset = DatasetChoiceField(label="Dataset version", queryset=Dataset.objects.none(), required=False)

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        self.fields["dataset"].queryset = Dataset.objects.evaluable().order_by("is_demo", "-created_at")
        default = Dataset.objects.default_for_submissions()
        if default is not None:
            self.fields["dataset"].initial = default.pk
            self.fields["dataset"].empty_label = None
        if user.is_staff:
            self.fields["model"].help_text += " Staff may give an absolute path to a model folder on the workers' disk."

    def clean_model(self) -> str:
        try:
            name = validate_reference(self.cleaned_data["model"])
        except InvalidModelReference as exc:
            raise forms.ValidationError(str(exc), code="invalid") from None
        if is_local_reference(name) and not self.user.is_staff:
            raise forms.ValidationError("Only staff may submit a model folder on the workers' disk.", code="forbidden")
        return name

    def to_submission(self) -> Submission:
        data = self.cleaned_data
        return Submission(
            model=data["model"],
            revision=data["revision"],
            display_name=data["display_name"],
            license=data["license"],
            parameter_count=data["parameter_count"],
            note=data["note"],
            dataset=data["dataset"],
            declared_languages=tuple(code for code in TARGET_CODES if code in data.get("declared_languages", [])),
            trained_on_nirdesha=data["trained_on_nirdesha"],
            notify_by_email=data["notify_by_email"],
        )
