"""The `jsonl` layout: a folder of `nirdesha_<iso639-3>_<Script>.jsonl` files, one JSON object a line.

Each object has `id`, `indian_context_persona`, `indian_context_instruction` and `description` (the full
dataset's format). English is read first so that every translation is checked against the English ids.
Plain Python, no Django.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from evaluation.engine.dataset_rows import (
    MAX_LINE_BYTES,
    DataFile,
    ItemRow,
    Problems,
    ScriptSample,
    decoded_lines,
    load_json_object,
    parse_item_id,
    record_fields,
)
from evaluation.engine.languages import BY_CODE, DATASET_FILE_PATTERN


def check_jsonl_name(path: Path, problems: Problems) -> DataFile | None:
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


def jsonl_dataset_rows(files: list[DataFile], problems: Problems) -> Iterator[ItemRow]:
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
    for number, text, has_newline in decoded_lines(data_file.path, problems):
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
        item_id = parse_item_id(record["id"])
        if isinstance(item_id, str):
            problems.add(name, number, item_id)
            continue
        fields = record_fields(record, name, number, problems)
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
