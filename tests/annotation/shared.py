"""The shared validation data (located by tests/data.py) and how annotation tests load its items.

Items always come in through the real importer (`manage.py import_dataset`), exactly as on a site:
translations in their language, English originals as `eng`.
"""

from __future__ import annotations

import csv
import shutil
import tempfile
from io import StringIO
from pathlib import Path

from tests.data import EXPECTED_AGREEMENT_CSV, VALIDATION_DIR, VALIDATION_LANGUAGES, require_shared_data

require_shared_data(VALIDATION_DIR, EXPECTED_AGREEMENT_CSV)

__all__ = ["VALIDATION_DIR", "VALIDATION_LANGUAGES", "expected_agreement", "load_validation_items", "read_rows"]


def read_rows(language_name: str) -> list[dict]:
    with open(VALIDATION_DIR / f"{language_name}.csv", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def expected_agreement() -> dict[str, dict]:
    """The published figures, keyed by language name ('Hindi' …)."""
    with open(EXPECTED_AGREEMENT_CSV, encoding="utf-8", newline="") as handle:
        return {
            row["file_name"].removesuffix(".csv"): {
                key: (value if key in ("file_name", "interpretation") else float(value)) for key, value in row.items()
            }
            for row in csv.DictReader(handle)
        }


def load_validation_items(languages: tuple[str, ...] = VALIDATION_LANGUAGES):
    """Import the validation CSVs of `languages` with `manage.py import_dataset` and return the dataset.

    A subset is imported from a temporary folder holding copies of just those files (outside the
    repository, removed afterwards).
    """
    from django.core.management import call_command

    from evaluation.models import Dataset

    with tempfile.TemporaryDirectory() as folder:
        source = VALIDATION_DIR
        if tuple(languages) != VALIDATION_LANGUAGES:
            source = Path(folder)
            for language in languages:
                shutil.copy(VALIDATION_DIR / f"{language}.csv", source / f"{language}.csv")
        call_command("import_dataset", str(source), verbosity=0, stdout=StringIO(), stderr=StringIO())
    return Dataset.objects.get(name="nirdesha-validation")
