"""Sign-up for annotators: allauth's e-mail sign-up plus the languages a person reads natively."""

from __future__ import annotations

from allauth.account.forms import SignupForm as AllauthSignupForm
from django import forms

from evaluation.engine.languages import BY_CODE
from evaluation.language_html import name_with_native_html
from evaluation.models import Language


class LanguageChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: Language) -> str:
        # The English name beside the name in the language's own script: 'Hindi · हिन्दी'.
        info = BY_CODE.get(obj.code)
        return name_with_native_html(info) if info else obj.name


class SignupForm(AllauthSignupForm):
    native_languages = LanguageChoiceField(
        queryset=Language.objects.filter(is_source=False).order_by("name"),
        widget=forms.CheckboxSelectMultiple,
        required=False,
        label="Languages you read natively",
        help_text="Only needed if you want to validate translations. Staff approve each language first.",
    )

    def save(self, request):
        # Imported here: the accounts app is loaded before the annotation app's models are ready.
        from annotation.services import set_native_languages

        user = super().save(request)
        set_native_languages(user, self.cleaned_data.get("native_languages") or [])
        return user


class DisplayNameForm(forms.Form):
    """The name others read beside one's runs (evaluation.people); empty: "user N"."""

    display_name = forms.CharField(
        max_length=150,
        required=False,
        label="Display name",
        help_text="Shown to others beside your runs. Leave it empty to be shown as “user N”.",
    )

    def clean_display_name(self) -> str:
        name = " ".join(self.cleaned_data["display_name"].split())
        if "@" in name:
            raise forms.ValidationError("A display name may not be an e-mail address.")
        return name


class HubTokenForm(forms.Form):
    """A Hugging Face access token, used once to ask the Hub whose it is, then discarded."""

    token = forms.CharField(
        label="Hugging Face access token",
        strip=True,
        max_length=200,
        widget=forms.PasswordInput(attrs={"autocomplete": "off"}),
        help_text=(
            "A read token from huggingface.co/settings/tokens. We ask the Hub whose it is and keep only the answer."
        ),
    )
