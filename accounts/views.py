"""The API token page: a signed-in person sees, creates or replaces their DRF token."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from rest_framework.authtoken.models import Token

from accounts.forms import DisplayNameForm
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
