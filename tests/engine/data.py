"""Test data for the engine: the shared validation CSVs loaded into the database with the ORM.

The importer branch owns `manage.py import_dataset`; until it is merged this helper creates the same
rows (English originals as language `eng`, NFC-normalised text) so the engine can be tested on real data.
"""

from __future__ import annotations

from evaluation.models import Dataset, Item
from tests.engine.shared_csv import VALIDATION_LANGUAGES, validation_rows


def create_validation_dataset(
    languages: tuple[str, ...] = VALIDATION_LANGUAGES,
    *,
    name: str = "nirdesha-validation",
    version: str = "test",
    limit: int | None = None,
    with_english: bool = True,
) -> Dataset:
    """A Dataset with the validation sample's items for `languages` (and English), optionally the first `limit`."""
    dataset = Dataset.objects.create(
        name=name, version=version, license="Apache-2.0", content_hash=f"validation-{version}"
    )
    items = [
        Item(dataset=dataset, language_id=code, **row)
        for code, rows in validation_rows(languages, limit=limit, with_english=with_english).items()
        for row in rows
    ]
    Item.objects.bulk_create(items, batch_size=2000)
    return dataset
