"""The leaderboard's one table of its own: the identity of the site's database, for the page cache."""

from __future__ import annotations

import uuid

from django.db import models


class SiteIdentity(models.Model):
    """A random identifier created with the database (by a migration), one row per database.

    Page-cache keys carry it (leaderboard/cache.py), so two sites or a site and a test run that share a
    cache by mistake never read each other's pages: their databases have different identities.
    """

    key = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "site identity"

    def __str__(self) -> str:
        return str(self.key)
