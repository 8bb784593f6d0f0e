"""Reading and writing judgements in the validation CSV format. Pure Python, no Django.

The format (one file per language, named after the language, e.g. `Hindi.csv`): columns `id`,
`ENG_indian_context` (JSON with `indian_context_persona`, `indian_context_instruction`, `description`),
`indian_context` (the translation: the same keys plus `id`) and one column per rater, `expert_1`,
`expert_2` …, holding `Completely Agree`, `Partially Agree` or `Do Not Agree` (empty: not rated).
"""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from evaluation.engine.languages import BY_NAME
from evaluation.engine.strict_json import StrictJSONError
from evaluation.engine.strict_json import loads as strict_loads
from evaluation.safe_text import write_csv

# The largest cell of texts read from a judgement file (a persona, an instruction and a description).
MAX_CELL_BYTES = 256 * 1024

RATER_COLUMN = re.compile(r"^expert_\d+$")
TEXT_KEYS = ("indian_context_persona", "indian_context_instruction", "description")
SCALE = ("Completely Agree", "Partially Agree", "Do Not Agree")
MAX_ERRORS = 50


@dataclass(frozen=True)
class Texts:
    persona: str
    instruction: str
    description: str


@dataclass(frozen=True)
class JudgementRow:
    line: int
    item_id: int
    # None when the file's text cell could not be read (only when reading ratings alone, see below).
    translation: Texts | None
    english: Texts | None
    judgements: dict[str, str]  # rater column -> scale label, only the cells that were filled in


@dataclass
class JudgementFile:
    path: Path
    language_code: str
    raters: list[str]
    rows: list[JudgementRow] = field(default_factory=list)
    # Text cells that could not be read when only the ratings were needed: "file, line, column: why".
    unreadable_texts: list[str] = field(default_factory=list)


class JudgementFileError(Exception):
    """Everything wrong with the files, one line per problem (file and line named)."""

    def __init__(self, errors: list[str]):
        self.errors = errors
        shown = errors[:MAX_ERRORS]
        more = f"\n… and {len(errors) - MAX_ERRORS} more" if len(errors) > MAX_ERRORS else ""
        super().__init__("\n".join(shown) + more)


def normalise_label(value: str) -> str | None:
    """The scale label as written in the guidelines, or None when the cell is not one of them."""
    wanted = " ".join(value.split()).casefold()
    for label in SCALE:
        if label.casefold() == wanted:
            return label
    return None


def _texts(raw: str, where: str, errors: list[str], *, need_description: bool = False) -> Texts | None:
    try:
        # Strict: a cell is a small object of texts; deep nesting or control characters are refused.
        data = strict_loads(raw, max_bytes=MAX_CELL_BYTES, max_depth=4)
    except StrictJSONError as exc:
        errors.append(f"{where}: {exc}")
        return None
    if not isinstance(data, dict):
        errors.append(f"{where}: expected a JSON object.")
        return None
    missing = [key for key in TEXT_KEYS[:2] if not str(data.get(key) or "").strip()]
    if missing:
        errors.append(f"{where}: missing {', '.join(missing)}.")
        return None
    return Texts(
        persona=unicodedata.normalize("NFC", data["indian_context_persona"]),
        instruction=unicodedata.normalize("NFC", data["indian_context_instruction"]),
        description=unicodedata.normalize("NFC", str(data.get("description") or "")),
    )


def language_of(path: Path) -> str | None:
    """The ISO 639-3 code of the language a file is named after (`Hindi.csv` -> `hin`), if any."""
    info = BY_NAME.get(path.stem.strip().lower())
    return info.code if info and not info.is_source else None


def read_judgement_file(path: Path, *, ratings_only: bool = False) -> JudgementFile:
    """Parse one language's CSV, collecting every problem before failing.

    ratings_only: a judgement needs only the row's id and its rating cells, so a text cell that is
    not valid JSON (the published files hold one with stray characters after the object) is noted in
    `unreadable_texts` and its row keeps its ratings, instead of failing the file.
    """
    errors: list[str] = []
    code = language_of(path)
    if code is None:
        raise JudgementFileError([f"{path.name}: the file name is not a benchmark language (e.g. Hindi.csv)."])
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise JudgementFileError([f"{path.name}, line {line}: not UTF-8 (byte offset {exc.start})."]) from exc
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    raters = [column for column in header if RATER_COLUMN.match(column)]
    for needed in ("id",) if ratings_only else ("id", "indian_context"):
        if needed not in header:
            errors.append(f"{path.name}: the column {needed!r} is missing.")
    if not raters:
        errors.append(f"{path.name}: no rater columns (expert_1, expert_2 …).")
    if errors:
        raise JudgementFileError(errors)

    parsed = JudgementFile(path=path, language_code=code, raters=raters)
    seen: dict[int, int] = {}
    for row in reader:
        line = reader.line_num
        where = f"{path.name}, line {line}"
        raw_id = (row.get("id") or "").strip()
        if not raw_id.isdigit():
            errors.append(f"{where}: id {raw_id!r} is not a whole number.")
            continue
        item_id = int(raw_id)
        if item_id in seen:
            errors.append(f"{where}: id {item_id} appears again (first on line {seen[item_id]}).")
            continue
        seen[item_id] = line
        text_errors = parsed.unreadable_texts if ratings_only else errors
        translation = None
        if not ratings_only or (row.get("indian_context") or "").strip():
            translation = _texts(row.get("indian_context") or "", f"{where}, indian_context", text_errors)
        english = None
        if (row.get("ENG_indian_context") or "").strip():
            english = _texts(row["ENG_indian_context"], f"{where}, ENG_indian_context", text_errors)
        judgements: dict[str, str] = {}
        for rater in raters:
            cell = (row.get(rater) or "").strip()
            if not cell:
                continue
            label = normalise_label(cell)
            if label is None:
                errors.append(f"{where}, {rater}: {cell!r} is not one of {', '.join(SCALE)}.")
                continue
            judgements[rater] = label
        if translation is not None or ratings_only:
            parsed.rows.append(
                JudgementRow(
                    line=line, item_id=item_id, translation=translation, english=english, judgements=judgements
                )
            )
    if not seen and not errors:
        errors.append(f"{path.name}: no rows.")
    if errors:
        raise JudgementFileError(errors)
    return parsed


def read_judgement_folder(folder: Path, *, ratings_only: bool = False) -> tuple[list[JudgementFile], list[str]]:
    """Every language file of a folder, and the names of the CSV files that were not language files."""
    if not folder.is_dir():
        raise JudgementFileError([f"{folder}: not a folder."])
    files, skipped, errors = [], [], []
    for path in sorted(folder.glob("*.csv")):
        if language_of(path) is None:
            skipped.append(path.name)
            continue
        try:
            files.append(read_judgement_file(path, ratings_only=ratings_only))
        except JudgementFileError as exc:
            errors.extend(exc.errors)
    if errors:
        raise JudgementFileError(errors)
    if not files:
        raise JudgementFileError([f"{folder}: no language files (Hindi.csv, Tamil.csv …) found."])
    return files, skipped


def _json_texts(texts: Texts, item_id: int | None = None) -> str:
    data: dict = {
        "indian_context_persona": texts.persona,
        "indian_context_instruction": texts.instruction,
        "description": texts.description,
    }
    if item_id is not None:
        data["id"] = item_id
    return json.dumps(data, ensure_ascii=False)


def write_judgement_csv(handle: TextIO, rows: Iterable[JudgementRow], raters: list[str]) -> None:
    """Write rows in the validation CSV format (the reverse of read_judgement_file)."""
    # Through the formula-safe writer that every export uses (evaluation/safe_text.py).
    write_csv(
        handle,
        ["id", "ENG_indian_context", "indian_context", *raters],
        (
            [
                row.item_id,
                _json_texts(row.english) if row.english else "",
                _json_texts(row.translation, row.item_id),
                *(row.judgements.get(rater, "") for rater in raters),
            ]
            for row in rows
        ),
        lineterminator="\n",
    )
