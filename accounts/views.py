"""A signed-in person's own pages: their API token, their display name, their linked Hugging Face account."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from rest_framework.authtoken.models import Token

from accounts.forms import DisplayNameForm, HubTokenForm
from accounts.models import HubAccount
from evaluation.engine import hub
from evaluation.engine.errors import HubUnreachableError, SubmitterError
from evaluation.people import public_person_name


@never_cache
@login_required
def api_token(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        # Creating and replacing are one action: the old key stops working at once.
        with transaction.atomic():
            replaced, _ = Token.objects.filter(user=request.user).delete()
            Token.objects.create(user=request.user)
        if replaced:
            messages.success(request, "Your new API token is below; the previous one no longer works.")
        else:
            messages.success(request, "Your API token is below.")
        return redirect("accounts:api_token")
    token = Token.objects.filter(user=request.user).first()
    return render(request, "account/api_token.html", {"token": token})


@never_cache
@login_required
def display_name(request: HttpRequest) -> HttpResponse:
    """The name others read beside one's runs; kept in the user's first_name (sign-up leaves it empty)."""
    form = DisplayNameForm(request.POST or None, initial={"display_name": request.user.first_name})
    if request.method == "POST" and form.is_valid():
        request.user.first_name = form.cleaned_data["display_name"]
        request.user.save(update_fields=["first_name"])
        messages.success(request, f"Others now see you as “{public_person_name(request.user)}”.")
        return redirect("accounts:display_name")
    return render(request, "account/display_name.html", {"form": form, "shown_as": public_person_name(request.user)})


@never_cache
@login_required
@sensitive_post_parameters("token")
def hub_account(request: HttpRequest) -> HttpResponse:
    """Link the Hugging Face account whose models one owns: the Hub says whose a pasted token is.

    A run of a pull request or another branch stands for a model on the board only when its owner (or
    staff) submitted it; the Hub's answer for the token is what makes a person the owner."""
    form = HubTokenForm(request.POST or None)
    if request.method == "POST" and request.POST.get("action") == "unlink":
        HubAccount.objects.filter(user=request.user).delete()
        messages.success(request, "Your Hugging Face account is no longer linked.")
        return redirect("accounts:hub_account")
    if request.method == "POST" and form.is_valid():
        try:
            identity = hub.whoami(form.cleaned_data["token"], endpoint=settings.HF_ENDPOINT)
        except (SubmitterError, HubUnreachableError) as error:
            form.add_error("token", str(error))
        else:
            HubAccount.objects.update_or_create(
                user=request.user, defaults={"name": identity.name, "organisations": list(identity.organisations)}
            )
            messages.success(request, f"Linked to the Hugging Face account “{identity.name}”.")
            return redirect("accounts:hub_account")
    account = HubAccount.objects.filter(user=request.user).first()
    return render(request, "account/hub_account.html", {"form": form, "account": account})
