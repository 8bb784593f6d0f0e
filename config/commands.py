"""What every management command of the project shares: its spellings, and no Django option shadowed.

A dataset version is always `--dataset NAME@VERSION` and a person always `--by USERNAME`. Django's
own `--version` (print Django's version and exit 0) stays Django's; but given beside other
arguments it is almost always someone naming a dataset version (`evaluate … --version 1.0`), and
argparse would print "5.2.19" and exit 0 having done nothing. Such a call is refused instead, with
the option to use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

DATASET_HELP = "The dataset version, as NAME@VERSION (e.g. nirdesha@1.0)."
BY_HELP = "Username of the staff account acting (see manage.py createsuperuser)."
VERSION_REFUSAL = (
    "--version prints Django's version and takes nothing beside it; name a dataset version with --dataset NAME@VERSION."
)


class GuardedParser(CommandParser):
    """Django's parser, refusing `--version` among other arguments instead of printing Django's version."""

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        given = [str(arg) for arg in (args or [])]
        if len(given) > 1 and any(arg == "--version" or arg.startswith("--version=") for arg in given):
            self.error(VERSION_REFUSAL)
        return super().parse_args(args, namespace)


class ProjectCommand(BaseCommand):
    """The base of the project's commands (see the module's docstring)."""

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.__class__ = GuardedParser
        return parser


def split_dataset(reference: str) -> tuple[str, str]:
    """(name, version) of NAME@VERSION; either part may be empty ("@1.0", "nirdesha")."""
    name, _, version = reference.strip().partition("@")
    return name.strip(), version.strip()


def staff_member(username: str | None, *, required: bool = True):
    """The active staff account with this username (--by); refused with what to change otherwise."""
    users = get_user_model().objects.filter(is_active=True, is_staff=True)
    if username:
        user = users.filter(username=username).first()
        if user is None:
            raise CommandError(f"{username!r} is not a staff account; give an active staff username with --by.")
        return user
    if required:
        raise CommandError("Say who acts with --by USERNAME (a staff account).")
    return None
