"""The `validation-csv` layout: the human-validation workbook, one language-named CSV a language.

Each file (`Hindi.csv` ...) has columns `id`, `ENG_indian_context` and `indian_context` holding JSON
objects. The English originals repeated in every file become the `eng` items (checked to agree across
files); the expert columns are ignored here because the annotation app imports judgements. Plain
Python, no Django.
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from evaluation.engine.dataset_rows import (
    DataFile,
    ItemRow,
    Problems,
    ScriptSample,
    decoded_lines,
    load_json_object,
    parse_item_id,
    record_fields,
)
from evaluation.engine.languages import BY_CODE, BY_NAME

CSV_COLUMNS = ("id", "ENG_indian_context", "indian_context")
# The validation folder also holds the published agreement figures, which are not a language file.
NON_LANGUAGE_CSVS = frozenset({"expected_agreement.csv"})
ENGLISH = BY_CODE["eng"]


def check_csv_name(path: Path, problems: Problems) -> DataFile | None:
    language = BY_NAME.get(path.stem.lower())
    if language is None:
        problems.add(path.name, None, f"'{path.stem}' is not a language of the benchmark")
        return None
    if language.is_source:
        problems.add(path.name, None, "English items come from the ENG_indian_context column of each language file")
        return None
    return DataFile(path, language)


def _csv_records(data_file: DataFile, problems: Problems) -> Iterator[tuple[int, dict[str, str]]]:
    """(line where the record starts, record) for each CSV record, header checked."""
    lines = decoded_lines(data_file.path, problems)
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


def validation_csv_rows(files: list[DataFile], problems: Problems) -> Iterator[ItemRow]:
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
            item_id = parse_item_id(record.get("id") or "")
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
            english_fields = record_fields(english_record, name, line, problems)
            translation_fields = record_fields(translation_record, name, line, problems)
            if english_fields is None or translation_fields is None:
                continue
            inner_id = translation_record.get("id")
            if inner_id is not None and parse_item_id(inner_id) != item_id:
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
