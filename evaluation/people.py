"""How a person is named on pages others read: never by any part of their e-mail address.

Sign-up makes the username from the e-mail's local part ("jane.doe.1987"), so neither the address
nor the username is a name to show. A person's chosen display name (the user's `first_name`, which
sign-up leaves empty) is shown when they set one; otherwise "user N".
"""

from __future__ import annotations


def public_person_name(user) -> str:
    if user is None:
        return ""
    chosen = (getattr(user, "first_name", "") or "").strip()
    if chosen and "@" not in chosen:
        return chosen
    return f"user {user.pk}"
