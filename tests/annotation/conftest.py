import pytest

from tests.validation import load_validation_items


@pytest.fixture
def validation_dataset(db):
    """The five validation languages' items (and their English originals) as a dataset."""
    return load_validation_items()


@pytest.fixture
def hindi_dataset(db):
    return load_validation_items(("Hindi",))
