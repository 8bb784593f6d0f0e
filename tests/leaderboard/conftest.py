from __future__ import annotations

from pathlib import Path

import pytest

from tests.data import PUBLISHED_RESULTS_DIR, require_shared_data


@pytest.fixture
def published_dir() -> Path:
    require_shared_data(PUBLISHED_RESULTS_DIR)
    return PUBLISHED_RESULTS_DIR


@pytest.fixture
def published(published_dir):
    """The reference's published results, imported through the real command."""
    from django.core.management import call_command

    call_command("import_published_results", str(published_dir), verbosity=0)
    from evaluation.models import Dataset

    return Dataset.objects.get(name="nirdesha", version="1.0")
