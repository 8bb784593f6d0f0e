"""Test data for the engine: the shared validation CSVs imported with the real `manage.py import_dataset`.

A subset (some languages, the first `limit` items) is imported from a temporary folder holding copies of
just those CSVs (the shared data itself is never copied into the repository).
"""

from __future__ import annotations

import csv
import tempfile
from io import StringIO
from pathlib import Path

from django.core.management import call_command

from evaluation.models import Dataset
from tests.data import VALIDATION_DIR, VALIDATION_LANGUAGES, require_shared_data


def create_validation_dataset(
    languages: tuple[str, ...] = VALIDATION_LANGUAGES,
    *,
    name: str = "nirdesha-validation",
    version: str = "test",
    limit: int | None = None,
    with_english: bool = True,
) -> Dataset:
    """Import the validation sample's CSVs for `languages` (English originals included unless told not to)."""
    require_shared_data(VALIDATION_DIR)
    with tempfile.TemporaryDirectory() as folder:
        for language_name in languages:
            source = VALIDATION_DIR / f"{language_name}.csv"
            with open(source, encoding="utf-8", newline="") as handle:
                rows = list(csv.reader(handle))
            with open(Path(folder) / source.name, "w", encoding="utf-8", newline="") as handle:
                csv.writer(handle).writerows(rows if limit is None else rows[: limit + 1])
        call_command("import_dataset", folder, "--name", name, "--version", version, stdout=StringIO(), verbosity=0)
    dataset = Dataset.objects.get(name=name, version=version)
    if not with_english:
        dataset.items.filter(language_id="eng").delete()
    return dataset
