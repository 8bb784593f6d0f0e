"""The data an evaluation reads: the items of each language, aligned by item id, checked and assembled.

`build_corpus` turns the rows of a dataset (from the database, or from dataset files for the command
line) into a `Corpus`; the runner (runner.py) and the unit methods (units.py) both read it, so it
lives apart from either of them and neither imports the other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from evaluation.engine.errors import DatasetError
from evaluation.engine.languages import BY_CODE

# The language the dataset was translated from: its originals are read by the multi-reference
# diagnostics, never evaluated as a language of their own.
SOURCE_LANGUAGE = "eng"


@dataclass(frozen=True)
class LanguageTexts:
    """The items of one language, sorted by item id."""

    code: str
    item_ids: np.ndarray
    personas: tuple[str, ...]
    instructions: tuple[str, ...]


@dataclass(frozen=True)
class Corpus:
    name: str
    version: str
    content_hash: str
    languages: dict[str, LanguageTexts]  # the evaluated (translated) languages, in order
    english: LanguageTexts | None = None

    @property
    def pool_size(self) -> int:
        return len(next(iter(self.languages.values())).item_ids) if self.languages else 0


def _preview(values: Iterable[object], limit: int = 8) -> str:
    values = list(values)
    shown = ", ".join(str(value) for value in values[:limit])
    return shown + (f" … ({len(values)} in all)" if len(values) > limit else "")


def build_corpus(
    rows_by_language: dict[str, list[tuple[int, str, str]]],
    *,
    requested_languages: list[str] | None,
    name: str = "",
    version: str = "",
    content_hash: str = "",
) -> Corpus:
    """Check the items and assemble a Corpus; DatasetError with a readable message when they don't fit.

    rows_by_language: language code → (item_id, persona, instruction) rows of the dataset.
    requested_languages: translated languages to evaluate; empty or None = all in the dataset.
    """
    label = f"{name} {version}".strip() or "the dataset"
    available = [code for code, rows in rows_by_language.items() if code != SOURCE_LANGUAGE and rows]
    requested = list(dict.fromkeys(requested_languages or []))
    if SOURCE_LANGUAGE in requested:
        raise DatasetError(
            "English (eng) is the source language, not a language to evaluate; its originals are used "
            "automatically by the multi-reference diagnostics when the dataset has them."
        )
    unknown = [code for code in requested if code not in BY_CODE]
    if unknown:
        raise DatasetError(f"Unknown language code(s): {', '.join(unknown)}. Use ISO 639-3 codes such as hin, tam.")
    if requested:
        missing = [code for code in requested if code not in available]
        if missing:
            names = ", ".join(f"{BY_CODE[code].name} ({code})" for code in missing)
            raise DatasetError(f"{label} has no items in {names}.")
        codes = requested
    else:
        codes = sorted(available, key=lambda code: BY_CODE[code].name if code in BY_CODE else code)
    if not codes:
        raise DatasetError(f"{label} has no items in any translated language.")

    def assemble(code: str) -> LanguageTexts:
        rows = sorted(rows_by_language[code], key=lambda row: row[0])
        ids = np.array([row[0] for row in rows], dtype=np.int64)
        duplicates = np.unique(ids[1:][ids[1:] == ids[:-1]])
        if len(duplicates):
            raise DatasetError(f"{label}: {code} has duplicate item ids: {_preview(duplicates.tolist())}.")
        empty = [row[0] for row in rows if not (row[1] or "").strip() or not (row[2] or "").strip()]
        if empty:
            raise DatasetError(f"{label}: {code} has items with an empty persona or instruction: {_preview(empty)}.")
        return LanguageTexts(code, ids, tuple(row[1] for row in rows), tuple(row[2] for row in rows))

    languages = {code: assemble(code) for code in codes}
    reference_code = codes[0]
    reference = set(languages[reference_code].item_ids.tolist())
    for code in codes[1:]:
        ids = set(languages[code].item_ids.tolist())
        if ids != reference:
            only_first, only_this = sorted(reference - ids), sorted(ids - reference)
            parts = []
            if only_first:
                parts.append(f"missing from {code}: {_preview(only_first)}")
            if only_this:
                parts.append(f"missing from {reference_code}: {_preview(only_this)}")
            raise DatasetError(
                f"{label}: item ids are not aligned across languages ({reference_code} has {len(reference)}, "
                f"{code} has {len(ids)}; {'; '.join(parts)}). Every language must hold the same items."
            )
    english = None
    if rows_by_language.get(SOURCE_LANGUAGE):
        english = assemble(SOURCE_LANGUAGE)
        if set(english.item_ids.tolist()) != reference:
            english = None  # Diagnostics need parallel English; plan_tasks says why they are skipped.
    return Corpus(name, version, content_hash, languages, english)
