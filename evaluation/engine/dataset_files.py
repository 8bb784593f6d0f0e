"""Reading and checking Nirdesha dataset files. Plain Python, no Django, so it is testable on its own.

Two layouts are understood:

* `jsonl`: a folder of `nirdesha_<iso639-3>_<Script>.jsonl` files, one JSON object a line with `id`,
  `indian_context_persona`, `indian_context_instruction` and `description` (the full dataset's format).
* `validation-csv`: a folder of language-named CSVs (`Hindi.csv` ...) with columns `id`,
  `ENG_indian_context` and `indian_context` holding JSON objects, as in the human-validation sample.
  The English originals repeated in every file become the `eng` items; the expert columns are ignored
  here because the annotation app imports judgements.

Rows are streamed one at a time so that memory stays bounded whatever the file size. Every problem
is recorded with its file and line in a `Problems` collector; the caller decides when to fail.
"""

from __future__ import annotations

import csv
import hashlib
import json
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from evaluation.engine.languages import BY_CODE, BY_NAME, DATASET_FILE_PATTERN, LanguageInfo, dominant_script
from evaluation.engine.strict_json import CONTROL_CHARACTERS, StrictJSONError, nesting_depth
from evaluation.engine.strict_json import loads as strict_loads

PERSONA_KEY = "indian_context_persona"
INSTRUCTION_KEY = "indian_context_instruction"
DESCRIPTION_KEY = "description"
CSV_COLUMNS = ("id", "ENG_indian_context", "indian_context")
# The validation folder also holds the published agreement figures, which are not a language file.
NON_LANGUAGE_CSVS = frozenset({"expected_agreement.csv"})
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
ENGLISH = BY_CODE["eng"]
MAX_DESCRIPTION_LENGTH = 200  # Item.description's column width.
MAX_ITEM_ID = 2**31 - 1  # The largest value every supported database stores in Item.item_id.
DEFAULT_MAX_PROBLEMS = 50
# Limits on what an import reads, so that a hostile or broken file is refused with a message instead
# of exhausting memory or the parser's recursion: a persona or instruction is a few hundred
# characters; the full benchmark's largest language file is well under the file limit.
MAX_TEXT_CHARS = 20_000
MAX_LINE_BYTES = 1024 * 1024
MAX_FILE_BYTES = 2 * 1024**3
MAX_CARD_BYTES = 256 * 1024
# A record is an object of strings (a CSV column holds one such object): two levels are plenty.
MAX_RECORD_DEPTH = 4

# The script check reads every row at the start of a file, then every SCRIPT_SAMPLE_EVERY-th row:
# dominant_script() costs about 0.06 ms a row (validation texts), which for all 650,000 rows of the
# full set would still add some 40 s to the import, and 200 rows of a 50,000-row file are plenty to
# tell the script.
SCRIPT_SAMPLE_HEAD = 100
SCRIPT_SAMPLE_EVERY = 500
# A file passes when at least this share of its sampled rows is mostly in the file's script. Single
# rows below it (a brand name left in Latin letters) are reported as warnings, not errors.
SCRIPT_MATCH_THRESHOLD = 0.9

SourceFormat = Literal["jsonl", "validation-csv"]
# What to do with a bad row: "fail" refuses the import (the default); "skip" leaves the row out;
# "repair" keeps a complete JSON object followed by stray characters (the object is unambiguous)
# and still fails on anything it cannot repair. Skipped and repaired rows are recorded.
OnError = Literal["fail", "skip", "repair"]
ON_ERROR_CHOICES: tuple[OnError, ...] = ("fail", "skip", "repair")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input, located as precisely as the reader can."""

    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}, line {self.line}" if self.line is not None else self.file
        return f"{where}: {self.message}"


class DatasetFileError(Exception):
    """The dataset files cannot be imported; `problems` lists every reason found (up to the cap)."""

    def __init__(self, problems: list[Problem], *, stopped_early: bool = False) -> None:
        self.problems = list(problems)
        self.stopped_early = stopped_early
        super().__init__(self.render())

    def render(self) -> str:
        count = len(self.problems)
        heading = "1 problem" if count == 1 else f"{count} problems"
        if self.stopped_early:
            heading += " (stopped looking after this many)"
        lines = [f"The dataset files cannot be imported, {heading}:"]
        lines += [f"  - {problem}" for problem in self.problems]
        return "\n".join(lines)


@dataclass(frozen=True)
class RowDecision:
    """A row that was repaired or skipped under --on-error, for the dataset card."""

    file: str
    line: int
    column: int | None
    action: Literal["repaired", "skipped"]
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "action": self.action,
            "detail": self.detail,
        }

    def __str__(self) -> str:
        column = f", column {self.column}" if self.column is not None else ""
        return f"{self.file}, line {self.line}{column}: {self.action} ({self.detail})"


class Problems:
    """Collects problems while reading; raises at once when the cap is reached.

    Under on_error="skip" a problem located on a row is recorded as a skipped row instead (the
    reader has already left the row out); problems of a whole file still fail the import.
    """

    def __init__(self, cap: int = DEFAULT_MAX_PROBLEMS, on_error: OnError = "fail") -> None:
        self.cap = cap
        self.on_error = on_error
        self.items: list[Problem] = []
        self.warnings: list[str] = []
        self.decisions: list[RowDecision] = []

    def repaired(self, file: str, line: int, column: int | None, detail: str) -> None:
        self.decisions.append(RowDecision(file, line, column, "repaired", detail))

    def add(self, file: str, line: int | None, message: str, *, column: int | None = None) -> None:
        if self.on_error == "skip" and line is not None:
            if not any(d.file == file and d.line == line and d.action == "skipped" for d in self.decisions[-3:]):
                self.decisions.append(RowDecision(file, line, column, "skipped", message))
            return
        self.items.append(Problem(file, line, message))
        if len(self.items) >= self.cap:
            raise DatasetFileError(self.items, stopped_early=True)

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def count_in(self, file: str) -> int:
        return sum(1 for problem in self.items if problem.file == file)

    def __bool__(self) -> bool:
        return bool(self.items)

    def raise_if_any(self) -> None:
        if self.items:
            raise DatasetFileError(self.items)


@dataclass(frozen=True, slots=True)
class ItemRow:
    """One validated, NFC-normalised item, ready to be written."""

    item_id: int
    language: str
    persona: str
    instruction: str
    description: str
    file: str
    line: int


@dataclass(frozen=True)
class DataFile:
    path: Path
    # The file's language; None for a validation CSV's English column, which every file shares.
    language: LanguageInfo

    @property
    def name(self) -> str:
        return self.path.name


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
            yield from _jsonl_dataset_rows(self.files, problems)
        else:
            yield from _validation_csv_rows(self.files, problems)


def open_source(folder: Path) -> DatasetSource:
    """Find and check the dataset files in `folder` (names only); raise DatasetFileError if unusable."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DatasetFileError([Problem(str(folder), None, "no such folder")])
    problems = Problems(cap=10_000)
    entries = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        if not _inside(path, folder):
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
    jsonl = [path for path in entries if path.suffix.lower() == ".jsonl"]
    csvs = [path for path in entries if path.suffix.lower() == ".csv" and path.name not in NON_LANGUAGE_CSVS]
    card = read_card(folder / CARD_FILE, problems)
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
        files = [data_file for path in jsonl if (data_file := _check_jsonl_name(path, problems))]
        source_format: SourceFormat = "jsonl"
    else:
        files = [data_file for path in csvs if (data_file := _check_csv_name(path, problems))]
        source_format = "validation-csv"
    seen: dict[str, str] = {}
    for data_file in files:
        code = data_file.language.code
        if code in seen:
            problems.add(data_file.name, None, f"a second file for {data_file.language.name} (first: {seen[code]})")
        seen.setdefault(code, data_file.name)
    problems.raise_if_any()
    return DatasetSource(folder=folder, format=source_format, files=files, card=card)


def _inside(path: Path, folder: Path) -> bool:
    """True when path (a symbolic link followed) stays inside folder."""
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def read_card(path: Path, problems: Problems) -> dict[str, str]:
    """The optional dataset card: a JSON object whose keys are Dataset card fields."""
    if not path.exists() and not path.is_symlink():
        return {}
    if not _inside(path, path.parent):
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


def _check_jsonl_name(path: Path, problems: Problems) -> DataFile | None:
    match = DATASET_FILE_PATTERN.match(path.name)
    if not match:
        problems.add(path.name, None, "file name does not match nirdesha_<iso639-3>_<Script>.jsonl")
        return None
    code, script = match["code"], match["script"]
    language = BY_CODE.get(code)
    if language is None:
        problems.add(path.name, None, f"unknown language code '{code}'; known: {', '.join(sorted(BY_CODE))}")
        return None
    if script != language.script:
        problems.add(
            path.name,
            None,
            f"script '{script}' in the file name is not the script of {language.name} "
            f"({language.script}, {language.script_name}); expected nirdesha_{code}_{language.script}.jsonl",
        )
        return None
    return DataFile(path, language)


def _check_csv_name(path: Path, problems: Problems) -> DataFile | None:
    language = BY_NAME.get(path.stem.lower())
    if language is None:
        problems.add(path.name, None, f"'{path.stem}' is not a language of the benchmark")
        return None
    if language.is_source:
        problems.add(path.name, None, "English items come from the ENG_indian_context column of each language file")
        return None
    return DataFile(path, language)


# --- reading lines ------------------------------------------------------------------------------


def _decoded_lines(path: Path, problems: Problems) -> Iterator[tuple[int, str, bool]]:
    """(line number, text, ends with a newline) for each line; stops at the first non-UTF-8 line.

    A file in another encoding would produce one error per line; one error naming the first bad
    byte says the same thing more clearly.
    """
    offset = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                bad = raw[error.start : error.start + 1].hex().upper()
                problems.add(
                    path.name,
                    number,
                    f"not valid UTF-8: byte 0x{bad} at byte offset {offset + error.start} of the file "
                    "(save the file as UTF-8)",
                )
                return
            if number == 1:
                text = text.removeprefix("\ufeff")
            offset += len(raw)
            yield number, text, raw.endswith(b"\n")


def load_json_object(
    text: str, file: str, line: int, problems: Problems, *, where: str = "", column_offset: int = 0
) -> Any:
    """The JSON value in `text`, or None after recording why it is unusable.

    Under on_error="repair", a complete JSON object followed by stray characters is kept (the
    characters are dropped and the repair recorded): the object itself is unambiguous.
    """
    try:
        # Lines too long or nested too deep are refused before json parses them (it would recurse).
        if len(text) > MAX_LINE_BYTES or nesting_depth(text, MAX_RECORD_DEPTH) > MAX_RECORD_DEPTH:
            strict_loads(text, max_bytes=MAX_LINE_BYTES, max_depth=MAX_RECORD_DEPTH, allow_control=True)
        return json.loads(text)
    except StrictJSONError as error:
        problems.add(file, line, f"{where.strip() + ': ' if where else ''}{error}")
        return None
    except json.JSONDecodeError as error:
        if problems.on_error == "repair" and error.msg == "Extra data":
            stripped = text.lstrip()
            try:
                value, end = json.JSONDecoder().raw_decode(stripped)
            except json.JSONDecodeError:
                value = None
            if isinstance(value, dict):
                stray = stripped[end:].strip()
                column = len(text) - len(stripped) + end + 1 + column_offset
                problems.repaired(
                    file,
                    line,
                    column,
                    f"kept the JSON object{where}, dropped {len(stray)} stray character(s) {stray[:20]!r} after it",
                )
                return value
        problems.add(file, line, f"invalid JSON{where}: {error.msg} (column {error.colno})", column=error.colno)
        return None


# --- validating values --------------------------------------------------------------------------


def _item_id(value: Any) -> int | str:
    """The id as an int, or a message saying why it is not one."""
    if isinstance(value, bool):
        return f"id must be a whole number, got {json.dumps(value)}"
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        number = int(value.strip())
    else:
        return f"id must be a whole number, got {json.dumps(value, ensure_ascii=False)[:40]}"
    if not 0 <= number <= MAX_ITEM_ID:
        return f"id {number} is out of range (0 to {MAX_ITEM_ID})"
    return number


def _text(record: dict[str, Any], key: str, *, required: bool = True) -> str | Problem:
    """The NFC-normalised text at `key`; a Problem (with no place yet) when it is unusable."""
    if key not in record:
        if required:
            return Problem("", None, f"missing required key '{key}'")
        return ""
    value = record[key]
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        return Problem("", None, f"'{key}' must be a string, got {type(value).__name__}")
    text = unicodedata.normalize("NFC", value)
    if required and not text.strip():
        return Problem("", None, f"'{key}' is empty")
    if "\x00" in text:
        return Problem("", None, f"'{key}' contains a NUL character")
    if CONTROL_CHARACTERS.search(text):
        return Problem("", None, f"'{key}' contains a control character")
    if len(text) > MAX_TEXT_CHARS:
        return Problem("", None, f"'{key}' is {len(text):,} characters long; at most {MAX_TEXT_CHARS:,} are accepted")
    return text


def _record_fields(record: Any, file: str, line: int, problems: Problems) -> tuple[str, str, str] | None:
    """(persona, instruction, description) from one JSON object, or None after recording problems."""
    if not isinstance(record, dict):
        problems.add(file, line, f"expected a JSON object, got {type(record).__name__}")
        return None
    values = [
        _text(record, PERSONA_KEY),
        _text(record, INSTRUCTION_KEY),
        _text(record, DESCRIPTION_KEY, required=False),
    ]
    ok = True
    for value in values:
        if isinstance(value, Problem):
            problems.add(file, line, value.message)
            ok = False
    if not ok:
        return None
    # Every value is a text by now; the filter says so to the type checker.
    persona, instruction, description = [value for value in values if isinstance(value, str)]
    if len(description) > MAX_DESCRIPTION_LENGTH:
        problems.add(file, line, f"'description' is longer than {MAX_DESCRIPTION_LENGTH} characters")
        return None
    return persona, instruction, description


class ScriptSample:
    """Checks on a sample of rows that a file's text is written in the script its name says."""

    def __init__(self, data_file: DataFile) -> None:
        self.file = data_file.name
        self.language = data_file.language
        self.seen = 0
        self.sampled = 0
        self.found: dict[str, int] = {}
        self.mismatched_lines: list[tuple[int, str]] = []

    def consider(self, line: int, persona: str, instruction: str) -> None:
        index = self.seen
        self.seen += 1
        if index >= SCRIPT_SAMPLE_HEAD and index % SCRIPT_SAMPLE_EVERY:
            return
        script = dominant_script(f"{persona} {instruction}") or "none"
        self.sampled += 1
        self.found[script] = self.found.get(script, 0) + 1
        if script != self.language.script:
            self.mismatched_lines.append((line, script))

    def finish(self, problems: Problems) -> None:
        if not self.sampled:
            return
        matched = self.found.get(self.language.script, 0)
        lines = ", ".join(f"line {line} ({script})" for line, script in self.mismatched_lines[:5])
        if matched / self.sampled < SCRIPT_MATCH_THRESHOLD:
            mostly = max(self.found.items(), key=lambda pair: pair[1])[0]
            problems.add(
                self.file,
                self.mismatched_lines[0][0] if self.mismatched_lines else None,
                f"the text is not in {self.language.name}'s script {self.language.script}: only {matched} of "
                f"{self.sampled} sampled rows are mostly {self.language.script}, most are {mostly} (e.g. {lines})",
            )
        elif self.mismatched_lines:
            problems.warn(
                f"{self.file}: {len(self.mismatched_lines)} of {self.sampled} sampled rows are mostly in another "
                f"script than {self.language.script}: {lines}"
            )


# --- the JSONL layout ---------------------------------------------------------------------------


def _jsonl_dataset_rows(files: list[DataFile], problems: Problems) -> Iterator[ItemRow]:
    # English goes first so that every translation can be checked against the English ids.
    ordered = sorted(files, key=lambda f: (not f.language.is_source, f.name))
    english_ids: set[int] | None = None
    for data_file in ordered:
        ids: set[int] = set()
        before = len(problems.items)
        for row in _jsonl_file_rows(data_file, problems):
            ids.add(row.item_id)
            if english_ids is not None and row.item_id not in english_ids:
                problems.add(row.file, row.line, f"id {row.item_id} has no English original in the English file")
                continue
            yield row
        if data_file.language.is_source:
            # After a broken English file the comparison would only repeat its problems.
            english_ids = ids if len(problems.items) == before else None
        elif english_ids is not None and (missing := len(english_ids - ids)):
            problems.warn(f"{data_file.name}: {missing} English items have no {data_file.language.name} row")
    if english_ids is None and not any(f.language.is_source for f in files):
        problems.warn("no English file (nirdesha_eng_Latn.jsonl): cross-lingual tasks will have no source items")


def _jsonl_file_rows(data_file: DataFile, problems: Problems) -> Iterator[ItemRow]:
    name = data_file.name
    code = data_file.language.code
    seen: dict[int, int] = {}
    sample = ScriptSample(data_file)
    for number, text, has_newline in _decoded_lines(data_file.path, problems):
        if not text.strip():
            continue
        if not has_newline and len(text) <= MAX_LINE_BYTES:
            try:
                json.loads(text)
            except json.JSONDecodeError as error:
                if error.msg != "Extra data":
                    problems.add(name, number, f"invalid JSON: the last line is truncated ({error.msg})")
                    continue
        record = load_json_object(text, name, number, problems)
        if record is None:
            continue
        if not isinstance(record, dict):
            problems.add(name, number, f"expected a JSON object, got {type(record).__name__}")
            continue
        if "id" not in record:
            problems.add(name, number, "missing required key 'id'")
            continue
        item_id = _item_id(record["id"])
        if isinstance(item_id, str):
            problems.add(name, number, item_id)
            continue
        fields = _record_fields(record, name, number, problems)
        if fields is None:
            continue
        if item_id in seen:
            problems.add(name, number, f"duplicate id {item_id} (first on line {seen[item_id]})")
            continue
        seen[item_id] = number
        persona, instruction, description = fields
        sample.consider(number, persona, instruction)
        yield ItemRow(item_id, code, persona, instruction, description, name, number)
    if not seen and not problems.count_in(name):
        problems.add(name, None, "the file holds no rows")
    sample.finish(problems)


# --- the validation CSV layout ------------------------------------------------------------------


def _csv_records(data_file: DataFile, problems: Problems) -> Iterator[tuple[int, dict[str, str]]]:
    """(line where the record starts, record) for each CSV record, header checked."""
    lines = _decoded_lines(data_file.path, problems)
    text_lines: Iterable[str] = (text for _, text, _ in lines)
    reader = csv.DictReader(text_lines)
    try:
        header = reader.fieldnames or []
    except csv.Error as error:
        problems.add(data_file.name, 1, f"unreadable CSV header: {error}")
        return
    missing = [column for column in CSV_COLUMNS if column not in header]
    if missing:
        if header:  # No header at all means the file was empty or not UTF-8, already reported.
            problems.add(data_file.name, 1, f"missing columns {missing}; found {header}")
        elif not problems.count_in(data_file.name):
            problems.add(data_file.name, None, "the file is empty")
        return
    start = reader.line_num + 1
    while True:
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            problems.add(data_file.name, start, f"unreadable CSV: {error}")
            return
        yield start, record
        start = reader.line_num + 1


def _validation_csv_rows(files: list[DataFile], problems: Problems) -> Iterator[ItemRow]:
    # item id -> (digest of the English texts, file, line): enough to spot a conflict without
    # keeping every English text in memory.
    english: dict[int, tuple[bytes, str, int]] = {}
    english_sample = ScriptSample(DataFile(files[0].path, ENGLISH)) if files else None
    for data_file in sorted(files, key=lambda f: f.name):
        name = data_file.name
        code = data_file.language.code
        seen: dict[int, int] = {}
        sample = ScriptSample(data_file)
        for line, record in _csv_records(data_file, problems):
            item_id = _item_id(record.get("id") or "")
            if isinstance(item_id, str):
                problems.add(name, line, item_id)
                continue
            if item_id in seen:
                problems.add(name, line, f"duplicate id {item_id} (first on line {seen[item_id]})")
                continue
            seen[item_id] = line
            parsed = []
            for column in ("ENG_indian_context", "indian_context"):
                value = load_json_object(record.get(column) or "", name, line, problems, where=f" in column {column}")
                if value is not None:
                    parsed.append(value)
            if len(parsed) < 2:
                continue
            english_record, translation_record = parsed
            english_fields = _record_fields(english_record, name, line, problems)
            translation_fields = _record_fields(translation_record, name, line, problems)
            if english_fields is None or translation_fields is None:
                continue
            inner_id = translation_record.get("id")
            if inner_id is not None and _item_id(inner_id) != item_id:
                problems.add(name, line, f"indian_context has id {inner_id!r} but the row's id is {item_id}")
                continue
            english_digest = hashlib.sha256("\0".join(english_fields).encode()).digest()
            if item_id in english:
                first_digest, first_file, first_line = english[item_id]
                if first_digest != english_digest:
                    problems.add(
                        name,
                        line,
                        f"the English text of id {item_id} differs from {first_file} line {first_line}",
                    )
                    continue
            else:
                english[item_id] = (english_digest, name, line)
                assert english_sample is not None
                english_sample.consider(line, english_fields[0], english_fields[1])
                yield ItemRow(item_id, ENGLISH.code, *english_fields, file=name, line=line)
            sample.consider(line, translation_fields[0], translation_fields[1])
            yield ItemRow(item_id, code, *translation_fields, file=name, line=line)
        sample.finish(problems)
    if english_sample is not None:
        english_sample.file = "ENG_indian_context columns"
        english_sample.finish(problems)
