"""Reading and checking Nirdesha dataset files. Plain Python, no Django, so it is testable on its own.

Two formats are understood, with their files at any depth of the folder (the Hugging Face Hub's
layout puts them under `data/`; a dataset_card.json sits at the top or beside them):

* `jsonl`: a folder of `nirdesha_<iso639-3>_<Script>.jsonl` files, one JSON object a line with `id`,
  `indian_context_persona`, `indian_context_instruction` and `description` (the full dataset's format).
* `validation-csv`: a folder of language-named CSVs (`Hindi.csv` ...) with columns `id`,
  `ENG_indian_context` and `indian_context` holding JSON objects, as in the human-validation sample.
  The English originals repeated in every file become the `eng` items; the expert columns are ignored
  here because the annotation app imports judgements.

Rows are streamed one at a time so that memory stays bounded whatever the file size. Every problem
is recorded with its file and line in a `Problems` collector; the caller decides when to fail.

This module finds and checks the files of a folder (`open_source`) and its dataset card; the rows are
read by dataset_jsonl.py and dataset_csv.py, with what both share (Problems, ItemRow, the value and
script checks) in dataset_rows.py. The names callers use are importable from here.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from evaluation.engine.dataset_csv import NON_LANGUAGE_CSVS, check_csv_name, validation_csv_rows
from evaluation.engine.dataset_jsonl import check_jsonl_name, jsonl_dataset_rows
from evaluation.engine.dataset_rows import (
    DEFAULT_MAX_PROBLEMS,
    MAX_RECORD_DEPTH,
    MAX_TEXT_CHARS,
    ON_ERROR_CHOICES,
    DataFile,
    DatasetFileError,
    ItemRow,
    OnError,
    Problem,
    Problems,
)
from evaluation.engine.strict_json import StrictJSONError
from evaluation.engine.strict_json import loads as strict_loads

__all__ = [
    "CARD_FIELDS",
    "CARD_FILE",
    "DEFAULT_MAX_PROBLEMS",
    "MAX_CARD_BYTES",
    "MAX_FILE_BYTES",
    "MAX_TEXT_CHARS",
    "ON_ERROR_CHOICES",
    "DatasetFileError",
    "DatasetSource",
    "Fingerprint",
    "ItemRow",
    "OnError",
    "Problem",
    "Problems",
    "SourceFormat",
    "open_source",
    "read_card",
]

CARD_FILE = "dataset_card.json"
CARD_FIELDS = (
    "name",
    "version",
    "license",
    "description",
    "provenance",
    "translation_pipeline",
    "citation",
    "homepage",
)
# Limits on what an import reads (the limits on rows are in dataset_rows.py).
MAX_FILE_BYTES = 2 * 1024**3
MAX_CARD_BYTES = 256 * 1024
# A dataset folder holds a few dozen files; walking far more than this means it is not one (e.g. "/").
MAX_FOLDER_ENTRIES = 10_000
# The name a version gets when neither the options nor the card name it, by format: the validation
# CSVs are a 150-item sample that must never share a name with the full benchmark, whose published
# scores were computed on 50,000-item pools.
DEFAULT_NAMES = {"jsonl": "nirdesha", "validation-csv": "nirdesha-validation"}

SourceFormat = Literal["jsonl", "validation-csv"]


@dataclass
class Fingerprint:
    content_hash: str
    # Rows expected, for a progress bar; None where lines are not rows (CSV fields span lines).
    expected_rows: int | None


@dataclass
class DatasetSource:
    """A folder of dataset files whose names have been checked; rows are read on demand."""

    folder: Path
    format: SourceFormat
    files: list[DataFile]
    card: dict[str, str] = field(default_factory=dict)

    @property
    def default_name(self) -> str:
        """The dataset's name when its card does not give one, told from its files (see DEFAULT_NAMES)."""
        return DEFAULT_NAMES[self.format]

    def fingerprint(self) -> Fingerprint:
        """SHA-256 over the data files in name order: each file's name, its size, then its bytes."""
        digest = hashlib.sha256()
        newlines = 0
        for data_file in sorted(self.files, key=lambda f: f.name):
            size = data_file.path.stat().st_size
            digest.update(f"{data_file.name}\0{size}\0".encode())
            last = b"\n"
            with data_file.path.open("rb") as handle:
                while chunk := handle.read(1 << 20):
                    digest.update(chunk)
                    newlines += chunk.count(b"\n")
                    last = chunk[-1:]
            if last != b"\n":
                newlines += 1  # A last line without a newline is still a row (or a truncated one).
        expected = newlines if self.format == "jsonl" else None
        return Fingerprint(digest.hexdigest(), expected)

    def rows(self, problems: Problems) -> Iterator[ItemRow]:
        """Every valid row of every file; each bad row is recorded in `problems` and skipped."""
        if self.format == "jsonl":
            yield from jsonl_dataset_rows(self.files, problems)
        else:
            yield from validation_csv_rows(self.files, problems)


def open_source(folder: Path, *, trusted_root: Path | None = None) -> DatasetSource:
    """Find and check the dataset files in `folder` (names only); raise DatasetFileError if unusable.

    Files may sit at any depth; hidden files and folders (.git, .cache) are left out. A symbolic link
    must stay inside `trusted_root` (default: the folder itself): a Hub snapshot's files are links
    into its cache's blobs folder, so its caller trusts the repository's cache folder.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise DatasetFileError([Problem(str(folder), None, "no such folder")])
    root = Path(trusted_root or folder)
    problems = Problems(cap=10_000)
    entries = []
    for path in _walk(folder, problems):
        if not _inside(path, root):
            # A link out of the folder could make the import read any file the process can.
            problems.add(path.name, None, "is a symbolic link to outside the folder; copy the file in instead")
            continue
        if path.is_file():
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                problems.add(path.name, None, f"is {size:,} bytes; at most {MAX_FILE_BYTES:,} are accepted")
                continue
            entries.append(path)
    problems.raise_if_any()
    jsonl = _shallowest(folder, [path for path in entries if path.suffix.lower() == ".jsonl"])
    csvs = _shallowest(
        folder, [path for path in entries if path.suffix.lower() == ".csv" and path.name not in NON_LANGUAGE_CSVS]
    )
    card = read_card(_card_path(folder, jsonl or csvs), problems, root)
    if jsonl and csvs:
        problems.add(str(folder), None, "mixes JSONL and CSV files; a dataset folder holds one format")
        problems.raise_if_any()
    if not jsonl and not csvs:
        problems.add(
            str(folder),
            None,
            "no dataset files found (expected nirdesha_<iso639-3>_<Script>.jsonl files or <Language>.csv files)",
        )
        problems.raise_if_any()
    if jsonl:
        files = [data_file for path in jsonl if (data_file := check_jsonl_name(path, problems))]
        source_format: SourceFormat = "jsonl"
    else:
        files = [data_file for path in csvs if (data_file := check_csv_name(path, problems))]
        source_format = "validation-csv"
    seen: dict[str, str] = {}
    for data_file in files:
        code = data_file.language.code
        if code in seen:
            problems.add(data_file.name, None, f"a second file for {data_file.language.name} (first: {seen[code]})")
        seen.setdefault(code, data_file.name)
    problems.raise_if_any()
    return DatasetSource(folder=folder, format=source_format, files=files, card=card)


def _walk(folder: Path, problems: Problems) -> list[Path]:
    """Every entry below `folder` but hidden ones, in path order; folders followed only when real."""
    found: list[Path] = []
    pending = [folder]
    while pending:
        for path in sorted(pending.pop().iterdir()):
            if path.name.startswith("."):
                continue
            found.append(path)
            if len(found) > MAX_FOLDER_ENTRIES:
                problems.add(str(folder), None, f"holds more than {MAX_FOLDER_ENTRIES:,} entries; not a dataset folder")
                return []
            if path.is_dir() and not path.is_symlink():
                pending.append(path)
    return sorted(found)


def _shallowest(folder: Path, paths: list[Path]) -> list[Path]:
    """The files nearest the top: those at the top win over copies in subfolders (a backup, an older
    export); a Hub repository's files, all under data/, are found there."""
    if not paths:
        return []
    depth = min(len(path.relative_to(folder).parts) for path in paths)
    return [path for path in paths if len(path.relative_to(folder).parts) == depth]


def _card_path(folder: Path, data_files: list[Path]) -> Path:
    """The dataset card at the top of the folder, else beside the data files when they share a folder."""
    top = folder / CARD_FILE
    parents = {path.parent for path in data_files}
    if top.exists() or top.is_symlink() or len(parents) != 1:
        return top
    return parents.pop() / CARD_FILE


def _inside(path: Path, folder: Path) -> bool:
    """True when path (a symbolic link followed) stays inside folder."""
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def read_card(path: Path, problems: Problems, trusted_root: Path | None = None) -> dict[str, str]:
    """The optional dataset card: a JSON object whose keys are Dataset card fields."""
    if not path.exists() and not path.is_symlink():
        return {}
    if not _inside(path, trusted_root or path.parent):
        problems.add(path.name, None, "is a symbolic link to outside the folder; copy the file in instead")
        return {}
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_CARD_BYTES + 1)
        card = strict_loads(raw, max_bytes=MAX_CARD_BYTES, max_depth=MAX_RECORD_DEPTH)
    except StrictJSONError as error:
        problems.add(path.name, None, str(error))
        return {}
    if not isinstance(card, dict):
        problems.add(path.name, None, "must hold a JSON object")
        return {}
    unknown = sorted(set(card) - set(CARD_FIELDS))
    if unknown:
        problems.add(path.name, None, f"unknown keys {unknown}; allowed: {list(CARD_FIELDS)}")
    clean: dict[str, str] = {}
    for key in CARD_FIELDS:
        if key not in card:
            continue
        if not isinstance(card[key], str):
            problems.add(path.name, None, f"'{key}' must be a string")
            continue
        clean[key] = unicodedata.normalize("NFC", card[key]).strip()
    return clean
