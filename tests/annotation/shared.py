"""Where the shared validation data lives, and a stand-in for the dataset importer.

`load_validation_items()` writes the validation CSVs' items through the ORM (translations in their
language, English originals as `eng`) until `manage.py import_dataset` is available on this branch.
"""

from __future__ import annotations

import csv
import json
import unicodedata
from pathlib import Path

from evaluation.languages import BY_NAME

ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = (ROOT / ".." / "shared" / "data").resolve()
VALIDATION_DIR = SHARED_DATA / "nirdesha-validation"
EXPECTED_AGREEMENT = VALIDATION_DIR / "expected_agreement.csv"
VALIDATION_LANGUAGES = ("Bengali", "Hindi", "Marathi", "Tamil", "Urdu")

assert VALIDATION_DIR.is_dir(), f"The shared validation data is missing: {VALIDATION_DIR}"


def read_rows(language_name: str) -> list[dict]:
    with open(VALIDATION_DIR / f"{language_name}.csv", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def expected_agreement() -> dict[str, dict[str, float]]:
    """The published figures, keyed by language name ('Hindi' …)."""
    with open(EXPECTED_AGREEMENT, encoding="utf-8", newline="") as handle:
        return {
            row["file_name"].removesuffix(".csv"): {
                key: (value if key in ("file_name", "interpretation") else float(value)) for key, value in row.items()
            }
            for row in csv.DictReader(handle)
        }


def load_validation_items(
    languages: tuple[str, ...] = VALIDATION_LANGUAGES, *, name: str = "nirdesha", version: str = "validation"
):
    from evaluation.models import Dataset, Item

    dataset, _ = Dataset.objects.get_or_create(name=name, version=version)
    english_done: set[int] = set()
    items = []
    for language_name in languages:
        code = BY_NAME[language_name.lower()].code
        for row in read_rows(language_name):
            item_id = int(row["id"])
            for lang, raw in ((code, row["indian_context"]), ("eng", row["ENG_indian_context"])):
                if lang == "eng":
                    if item_id in english_done:
                        continue
                    english_done.add(item_id)
                data = json.loads(raw)
                items.append(
                    Item(
                        dataset=dataset,
                        item_id=item_id,
                        language_id=lang,
                        persona=unicodedata.normalize("NFC", data["indian_context_persona"]),
                        instruction=unicodedata.normalize("NFC", data["indian_context_instruction"]),
                        description=data.get("description", ""),
                    )
                )
    Item.objects.bulk_create(items)
    return dataset
