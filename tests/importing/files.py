"""Dataset folders for the importer tests, built from the demo sample so that the text is real."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from evaluation.importing import DEMO_DIR

HINDI_FILE = "nirdesha_hin_Deva.jsonl"
ENGLISH_FILE = "nirdesha_eng_Latn.jsonl"


def demo_copy(folder: Path, *, with_card: bool = False) -> Path:
    """A copy of the demo JSONL files in `folder`, to be altered by a test."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in DEMO_DIR.glob("*.jsonl"):
        shutil.copyfile(path, folder / path.name)
    if with_card:
        shutil.copyfile(DEMO_DIR / "dataset_card.json", folder / "dataset_card.json")
    return folder


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_rows(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def edit_row(path: Path, line: int, **changes: object) -> dict:
    """Change (or, with value None, remove) keys of the row on `line` (1-based); returns the new row."""
    rows = read_rows(path)
    row = rows[line - 1]
    for key, value in changes.items():
        if value is None:
            row.pop(key, None)
        else:
            row[key] = value
    write_rows(path, rows)
    return row


def truncate_last_line(path: Path, keep_chars: int = 40) -> int:
    """Cut the last line after `keep_chars` characters, as an interrupted download would; its line number."""
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[-1] = lines[-1][:keep_chars]
    path.write_text("\n".join(lines), encoding="utf-8")
    return len(lines)
