"""The API token page: a signed-in person sees, creates or replaces their DRF token."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from rest_framework.authtoken.models import Token


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
