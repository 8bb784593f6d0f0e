from __future__ import annotations

from pathlib import Path

import pytest

from tests.data import PUBLISHED_RESULTS_DIR, require_shared_data


@pytest.fixture
def published_dir() -> Path:
    require_shared_data(PUBLISHED_RESULTS_DIR)
    return PUBLISHED_RESULTS_DIR


@pytest.fixture
def seeded_languages(db):
    """The 13 languages as the seed migration writes them.

    A transactional test (live server, browser) empties every table when it ends; when a later
    transactional test runs after database-backed tests its serialized rollback has not always put
    the migration's rows back, so the seed runs again here (it is idempotent)."""
    from importlib import import_module

    from django.apps import apps

    import_module("evaluation.migrations.0002_seed_languages").seed_languages(apps, None)


@pytest.fixture
def published(published_dir, seeded_languages):
    """The reference's published results, imported through the real command."""
    from django.core.management import call_command

    call_command("import_published_results", str(published_dir), verbosity=0)
    from evaluation.models import Dataset

    return Dataset.objects.get(name="nirdesha", version="1.0")
