import importlib

import pytest

from tests.annotation.shared import load_validation_items


@pytest.fixture
def seeded_languages(transactional_db):
    """The 13 languages, seeded again by the project's own data migration.

    Transactional tests empty every table when they finish, so the rows the migration wrote are gone
    for the next one. serialized_rollback would restore them, but not in tests that drive Playwright:
    its sync API runs the test in another context, where Django's connection does not carry the
    serialized copy. Running the migration's seed function is the same data by the same code.
    """
    from django.apps import apps

    importlib.import_module("evaluation.migrations.0002_seed_languages").seed_languages(apps, None)


@pytest.fixture
def validation_dataset(db):
    """The five validation languages' items (and their English originals) as a dataset."""
    return load_validation_items()


@pytest.fixture
def hindi_dataset(db):
    return load_validation_items(("Hindi",))
