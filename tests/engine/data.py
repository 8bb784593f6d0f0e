"""Test data for the engine: the shared validation CSVs loaded into the database with the ORM.

The importer branch owns `manage.py import_dataset`; until it is merged these helpers create the same
rows (English originals as language `eng`, NFC-normalised text) so the engine can be tested on real data.
"""

from __future__ import annotations

import csv
import json
import unicodedata
from pathlib import Path

from evaluation.languages import BY_NAME
from evaluation.models import Dataset, Item

SHARED_DATA = (Path(__file__).resolve().parents[2] / ".." / "shared" / "data").resolve()
VALIDATION_DIR = SHARED_DATA / "nirdesha-validation"
VALIDATION_LANGUAGES = ("Hindi", "Marathi", "Bengali", "Tamil", "Urdu")


def read_validation_rows(language_name: str) -> list[dict]:
    with open(VALIDATION_DIR / f"{language_name}.csv", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _text(value: str) -> str:
    return unicodedata.normalize("NFC", value)


def create_validation_dataset(
    languages: tuple[str, ...] = VALIDATION_LANGUAGES,
    *,
    name: str = "nirdesha-validation",
    version: str = "test",
    limit: int | None = None,
    with_english: bool = True,
) -> Dataset:
    """A Dataset with the validation sample's items for `languages` (and English), optionally the first `limit`."""
    assert VALIDATION_DIR.is_dir(), f"shared data missing at {VALIDATION_DIR}"
    dataset = Dataset.objects.create(
        name=name, version=version, license="Apache-2.0", content_hash=f"validation-{version}"
    )
    items: list[Item] = []
    english: dict[int, dict] = {}
    for language_name in languages:
        code = BY_NAME[language_name.lower()].code
        for row in read_validation_rows(language_name)[:limit]:
            item_id = int(row["id"])
            translated = json.loads(row["indian_context"])
            english[item_id] = json.loads(row["ENG_indian_context"])
            items.append(
                Item(
                    dataset=dataset,
                    item_id=item_id,
                    language_id=code,
                    persona=_text(translated["indian_context_persona"]),
                    instruction=_text(translated["indian_context_instruction"]),
                    description=translated.get("description", "")[:200],
                )
            )
    if with_english:
        for item_id, original in sorted(english.items()):
            items.append(
                Item(
                    dataset=dataset,
                    item_id=item_id,
                    language_id="eng",
                    persona=_text(original["indian_context_persona"]),
                    instruction=_text(original["indian_context_instruction"]),
                    description=original.get("description", "")[:200],
                )
            )
    Item.objects.bulk_create(items, batch_size=2000)
    return dataset
