"""Revoking an account's API tokens and other sessions when its password is reset or its e-mail changes.

Whoever held the account before (say, someone who registered another person's address first) must
not keep a way in after the owner takes it back: a reset password ends the other sessions (Django
already refuses their old password hash, but the rows stay) and, unlike a session, an API token
would keep working. The session of the person acting stays, so that changing one's own e-mail
does not log one out.
"""

from __future__ import annotations

from allauth.account.signals import password_reset
from django.contrib.sessions.models import Session
from django.db import transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token


def revoke_access(user, *, keep_session: str | None = None) -> int:
    """Delete the user's API token and every live session of theirs but `keep_session`; return how many went."""
    with transaction.atomic():
        revoked, _ = Token.objects.filter(user=user).delete()
        owner = str(user.pk)
        sessions = Session.objects.filter(expire_date__gt=timezone.now())
        if keep_session:
            sessions = sessions.exclude(session_key=keep_session)
        theirs = [
            session.session_key
            for session in sessions.iterator()
            if session.get_decoded().get("_auth_user_id") == owner
        ]
        revoked += Session.objects.filter(session_key__in=theirs).delete()[0]
    return revoked


def _current_session(request) -> str | None:
    session = getattr(request, "session", None)
    return getattr(session, "session_key", None)


def revoke_on_credentials_change(sender, request=None, user=None, **kwargs) -> None:
    """Receiver of allauth's password_reset, password_changed, password_set and email_changed signals."""
    if user is None:
        return
    # A reset proves control of the address, not of any session: every session ends, the acting one too.
    reset = kwargs.get("signal") is password_reset
    revoke_access(user, keep_session=None if reset else _current_session(request))
