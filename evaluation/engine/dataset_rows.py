"""What the readers of dataset files share: the problems collector, the validated row, and the checks.

`Problems` records every problem with its file and line (the caller decides when to fail); the JSON
reader, the value checks and the script sample are used by both layouts (dataset_jsonl.py,
dataset_csv.py). Plain Python, no Django.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from evaluation.engine.languages import LanguageInfo, dominant_script
from evaluation.engine.strict_json import CONTROL_CHARACTERS, StrictJSONError, nesting_depth
from evaluation.engine.strict_json import loads as strict_loads

PERSONA_KEY = "indian_context_persona"
INSTRUCTION_KEY = "indian_context_instruction"
DESCRIPTION_KEY = "description"
MAX_DESCRIPTION_LENGTH = 200  # Item.description's column width.
MAX_ITEM_ID = 2**31 - 1  # The largest value every supported database stores in Item.item_id.
DEFAULT_MAX_PROBLEMS = 50
# Limits on what an import reads, so that a hostile or broken file is refused with a message instead
# of exhausting memory or the parser's recursion: a persona or instruction is a few hundred
# characters (the limits on whole files are in dataset_files.py).
MAX_TEXT_CHARS = 20_000
MAX_LINE_BYTES = 1024 * 1024
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


# --- reading lines ------------------------------------------------------------------------------


def decoded_lines(path: Path, problems: Problems) -> Iterator[tuple[int, str, bool]]:
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


def parse_item_id(value: Any) -> int | str:
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


def record_text(record: dict[str, Any], key: str, *, required: bool = True) -> str | Problem:
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


def record_fields(record: Any, file: str, line: int, problems: Problems) -> tuple[str, str, str] | None:
    """(persona, instruction, description) from one JSON object, or None after recording problems."""
    if not isinstance(record, dict):
        problems.add(file, line, f"expected a JSON object, got {type(record).__name__}")
        return None
    values = [
        record_text(record, PERSONA_KEY),
        record_text(record, INSTRUCTION_KEY),
        record_text(record, DESCRIPTION_KEY, required=False),
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
