"""The one loader of the shared validation CSVs (located by tests/data.py), for every test and benchmark.

Three ways in, from the same files: `read_rows` (the CSV rows as they are), `validation_rows` /
`validation_triples` (parsed texts, no Django, for pure tests and benchmarks), and
`create_validation_dataset` (imported through the real `manage.py import_dataset`, as on a site:
translations in their language, English originals as `eng`). A subset of languages or items is
imported from a temporary folder holding copies of just those rows; the shared data itself is never
copied into the repository.
"""

from __future__ import annotations

import csv
import json
import tempfile
import unicodedata
from io import StringIO
from pathlib import Path

from tests.data import EXPECTED_AGREEMENT_CSV, VALIDATION_DIR, VALIDATION_LANGUAGES, require_shared_data

__all__ = [
    "VALIDATION_DIR",
    "VALIDATION_LANGUAGES",
    "create_validation_dataset",
    "expected_agreement",
    "load_validation_items",
    "read_rows",
    "validation_rows",
    "validation_triples",
]


def read_rows(language_name: str, *, limit: int | None = None) -> list[dict]:
    """The rows of one language's CSV (id, ENG_indian_context, indian_context, …), the first `limit` when given."""
    require_shared_data(VALIDATION_DIR)
    with open(VALIDATION_DIR / f"{language_name}.csv", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))[:limit]


def expected_agreement() -> dict[str, dict]:
    """The published agreement figures, keyed by language name ('Hindi' …)."""
    require_shared_data(EXPECTED_AGREEMENT_CSV)
    with open(EXPECTED_AGREEMENT_CSV, encoding="utf-8", newline="") as handle:
        return {
            row["file_name"].removesuffix(".csv"): {
                key: (value if key in ("file_name", "interpretation") else float(value)) for key, value in row.items()
            }
            for row in csv.DictReader(handle)
        }


def _text(value: str) -> str:
    return unicodedata.normalize("NFC", value)


def validation_rows(
    languages: tuple[str, ...] = VALIDATION_LANGUAGES, *, limit: int | None = None, with_english: bool = True
) -> dict[str, list[dict]]:
    """language code → rows {item_id, persona, instruction, description}; English originals as `eng`."""
    from evaluation.engine.languages import BY_NAME

    result: dict[str, list[dict]] = {}
    english: dict[int, dict] = {}
    for language_name in languages:
        code = BY_NAME[language_name.lower()].code
        for row in read_rows(language_name, limit=limit):
            item_id = int(row["id"])
            for target, blob in ((code, row["indian_context"]), ("eng", row["ENG_indian_context"])):
                fields = json.loads(blob)
                parsed = {
                    "item_id": item_id,
                    "persona": _text(fields["indian_context_persona"]),
                    "instruction": _text(fields["indian_context_instruction"]),
                    "description": fields.get("description", "")[:200],
                }
                if target == "eng":
                    english[item_id] = parsed
                else:
                    result.setdefault(code, []).append(parsed)
    if with_english:
        result["eng"] = [english[item_id] for item_id in sorted(english)]
    return result


def validation_triples(**kwargs) -> dict[str, list[tuple[int, str, str]]]:
    """The same rows as (item_id, persona, instruction) triples, the shape runner.build_corpus takes."""
    return {
        code: [(row["item_id"], row["persona"], row["instruction"]) for row in rows]
        for code, rows in validation_rows(**kwargs).items()
    }


def create_validation_dataset(
    languages: tuple[str, ...] = VALIDATION_LANGUAGES,
    *,
    name: str | None = "nirdesha-validation",
    version: str | None = "test",
    limit: int | None = None,
    with_english: bool = True,
):
    """Import the validation CSVs of `languages` (English originals included unless told not to).

    With name and version None the importer names the version itself, as `import_dataset` does for
    the shared folder.
    """
    from django.core.management import call_command

    from evaluation.models import Dataset

    require_shared_data(VALIDATION_DIR)
    options = ["--dataset", f"{name or ''}@{version or ''}"] if name or version else []
    with tempfile.TemporaryDirectory() as folder:
        for language_name in languages:
            source = VALIDATION_DIR / f"{language_name}.csv"
            with open(source, encoding="utf-8", newline="") as handle:
                rows = list(csv.reader(handle))
            with open(Path(folder) / source.name, "w", encoding="utf-8", newline="") as handle:
                csv.writer(handle).writerows(rows if limit is None else rows[: limit + 1])
        call_command("import_dataset", folder, *options, stdout=StringIO(), stderr=StringIO(), verbosity=0)
    datasets = Dataset.objects.filter(name=name or "nirdesha-validation")
    dataset = datasets.get(version=version) if version else datasets.order_by("-created_at").first()
    if not with_english:
        dataset.items.filter(language_id="eng").delete()
    return dataset


def load_validation_items(languages: tuple[str, ...] = VALIDATION_LANGUAGES):
    """The validation sample imported under the name and version the importer gives it (annotation tests)."""
    return create_validation_dataset(languages, name=None, version=None)
