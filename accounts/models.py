"""What the site knows about a person beyond allauth's user: the Hugging Face account they proved is theirs."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from evaluation.engine.hub import HubIdentity


class HubAccount(models.Model):
    """A Hugging Face user name (and its organisations) that the Hub confirmed for a person's token.

    The token itself is used for that one request and never stored. Organisations are those the Hub
    reported when the account was linked; linking again refreshes them."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="hub_account")
    name = models.CharField(max_length=96)
    organisations = models.JSONField(default=list, blank=True)
    linked_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.name

    @property
    def identity(self) -> HubIdentity:
        return HubIdentity(name=self.name, organisations=tuple(self.organisations))


def hub_identity_of(user) -> HubIdentity | None:
    """The Hub identity a signed-in person linked, if any."""
    account = HubAccount.objects.filter(user_id=getattr(user, "pk", None)).first()
    return account.identity if account else None
