"""The named people of the test suite, built by small helpers."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser

PASSWORD = "correct horse battery staple"


def make_user(email: str, *, staff: bool = False, superuser: bool = False) -> AbstractUser:
    user_model = get_user_model()
    user = user_model.objects.create_user(
        username=email.split("@")[0], email=email, password=PASSWORD, is_staff=staff, is_superuser=superuser
    )
    # allauth logs people in by e-mail; give them a verified address as sign-up would.
    from allauth.account.models import EmailAddress

    EmailAddress.objects.create(user=user, email=email, verified=True, primary=True)
    return user


def make_admin() -> AbstractUser:
    return make_user("alice.admin@example.org", staff=True, superuser=True)


def make_researcher() -> AbstractUser:
    return make_user("rahul.researcher@example.org")


def make_outsider() -> AbstractUser:
    return make_user("oscar.outsider@example.org")
