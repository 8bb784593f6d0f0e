"""Page-cache keys carry the identity of the site's database: a cache shared by mistake never serves another's page."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client

from evaluation.models import EmbeddingModel
from leaderboard.cache import generation_key, site_identity
from leaderboard.models import SiteIdentity
from tests.factories import make_dataset, make_run

pytestmark = pytest.mark.django_db


def test_it_creates_one_random_identity_with_the_database():
    assert SiteIdentity.objects.count() == 1
    assert site_identity() == SiteIdentity.objects.get().key.hex
    assert site_identity() in generation_key("page", "overview")


def test_it_never_serves_a_page_cached_for_another_database():
    make_run(make_dataset(), "org/alpha", display_name="Alpha of site one")
    assert "Alpha of site one" in Client().get("/").content.decode()
    # Another database behind the same cache: different rows, and its own identity (its migration's).
    EmbeddingModel.objects.filter(display_name="Alpha of site one").update(display_name="Alpha of site two")
    SiteIdentity.objects.update(key=uuid.uuid4())
    SiteIdentity.objects.get().save()
    page = Client().get("/").content.decode()
    assert "Alpha of site two" in page and "Alpha of site one" not in page


def test_it_keeps_keys_short_for_long_queries():
    long_query = "q=" + "x" * 2000
    key = generation_key("page", "overview", long_query)
    assert len(key) < 250 and key != generation_key("page", "overview", long_query + "y")
