from __future__ import annotations

from pathlib import Path

import pytest

from tests.data import PUBLISHED_RESULTS_DIR, require_shared_data
from tests.leaderboard.factories import make_dataset, make_run


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


@pytest.fixture
def validation_with_bins():
    """A small second benchmark version with re-runs that carry reliability bins and coverage."""
    from evaluation.models import Item, Language

    dataset = make_dataset()
    coverage = {"Deva": {"tokens_per_word": 2.1, "unk_rate": 0.0}, "Arab": {"tokens_per_word": 4.4, "unk_rate": 0.04}}
    make_run(
        dataset, "org/alpha", display_name="Alpha", level=0.3, with_bins=True, details={"tokenizer_coverage": coverage}
    )
    make_run(dataset, "org/beta", display_name="Beta", level=0.22, with_bins=True)
    make_run(dataset, "bm25", display_name="BM25", level=0.1, kind="lexical", languages=("hin", "mar", "ben", "tam"))
    texts = {
        "hin": "ऑनलाइन आयकर रिटर्न कैसे भरें?",
        "urd": "آن لائن انکم ٹیکس ریٹرن کیسے جمع کریں؟",
        "eng": "How to file taxes?",
    }
    for code, text in texts.items():
        Item.objects.create(
            dataset=dataset, item_id=1, language=Language.objects.get(code=code), persona="p", instruction=text
        )
    return dataset
