"""Read the shared validation CSVs into plain rows (no Django), for pure tests and the benchmarks."""

from __future__ import annotations

import csv
import json
import unicodedata

from evaluation.languages import BY_NAME
from tests.data import VALIDATION_DIR, VALIDATION_LANGUAGES, require_shared_data


def _text(value: str) -> str:
    return unicodedata.normalize("NFC", value)


def validation_rows(
    languages: tuple[str, ...] = VALIDATION_LANGUAGES, *, limit: int | None = None, with_english: bool = True
) -> dict[str, list[dict]]:
    """language code → rows {item_id, persona, instruction, description}; English originals as `eng`."""
    require_shared_data(VALIDATION_DIR)
    result: dict[str, list[dict]] = {}
    english: dict[int, dict] = {}
    for language_name in languages:
        code = BY_NAME[language_name.lower()].code
        with open(VALIDATION_DIR / f"{language_name}.csv", encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))[:limit]
        for row in rows:
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
