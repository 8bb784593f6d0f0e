"""The file reader on its own: no database, just files in a temporary folder."""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from evaluation.engine.dataset_files import DatasetFileError, Problems, open_source
from tests.data import REPO_ROOT, VALIDATION_DIR, require_shared_data
from tests.importing.files import ENGLISH_FILE, HINDI_FILE, demo_copy, edit_row, read_rows, write_rows


def read_all(folder: Path, cap: int = 50) -> tuple[list, Problems]:
    problems = Problems(cap=cap)
    rows = list(open_source(folder).rows(problems))
    return rows, problems


def messages(problems: Problems) -> list[str]:
    return [str(problem) for problem in problems.items]


def test_it_reads_the_demo_sample_as_six_aligned_languages(tmp_path):
    rows, problems = read_all(demo_copy(tmp_path))
    assert not problems
    by_language: dict[str, set[int]] = {}
    for row in rows:
        by_language.setdefault(row.language, set()).add(row.item_id)
    assert sorted(by_language) == ["ben", "eng", "hin", "mar", "tam", "urd"]
    assert all(ids == set(range(1, 37)) for ids in by_language.values())


def test_it_reads_english_first_so_translations_can_be_checked_against_it(tmp_path):
    rows, _ = read_all(demo_copy(tmp_path))
    assert {row.language for row in rows[:36]} == {"eng"}


def test_it_rejects_file_names_outside_the_pattern_and_unknown_languages(tmp_path):
    folder = demo_copy(tmp_path)
    (folder / HINDI_FILE).rename(folder / "nirdesha_hindi.jsonl")
    (folder / "nirdesha_tam_Taml.jsonl").rename(folder / "nirdesha_xyz_Taml.jsonl")
    (folder / "nirdesha_mar_Deva.jsonl").rename(folder / "nirdesha_mar_Beng.jsonl")
    with pytest.raises(DatasetFileError) as caught:
        open_source(folder)
    text = str(caught.value)
    assert "nirdesha_hindi.jsonl: file name does not match nirdesha_<iso639-3>_<Script>.jsonl" in text
    assert "nirdesha_xyz_Taml.jsonl: unknown language code 'xyz'" in text
    assert "nirdesha_mar_Beng.jsonl: script 'Beng' in the file name is not the script of Marathi (Deva" in text


def test_it_rejects_a_folder_without_dataset_files_or_with_two_formats(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetFileError, match="no dataset files found"):
        open_source(tmp_path / "empty")
    mixed = demo_copy(tmp_path / "mixed")
    (mixed / "Hindi.csv").write_text("id,ENG_indian_context,indian_context\n", encoding="utf-8")
    with pytest.raises(DatasetFileError, match="mixes JSONL and CSV files"):
        open_source(mixed)
    with pytest.raises(DatasetFileError, match="no such folder"):
        open_source(tmp_path / "missing")


def test_it_reports_every_bad_row_with_its_file_and_line(tmp_path):
    folder = demo_copy(tmp_path)
    edit_row(folder / HINDI_FILE, 3, indian_context_instruction=None)
    edit_row(folder / HINDI_FILE, 5, id="five")
    edit_row(folder / HINDI_FILE, 7, id=6)
    edit_row(folder / HINDI_FILE, 9, indian_context_persona="   ")
    edit_row(folder / HINDI_FILE, 11, indian_context_persona=42)
    edit_row(folder / HINDI_FILE, 13, description="x" * 201)
    edit_row(folder / ENGLISH_FILE, 2, id=None)
    _, problems = read_all(folder)
    assert messages(problems) == [
        f"{ENGLISH_FILE}, line 2: missing required key 'id'",
        f"{HINDI_FILE}, line 3: missing required key 'indian_context_instruction'",
        f'{HINDI_FILE}, line 5: id must be a whole number, got "five"',
        f"{HINDI_FILE}, line 7: duplicate id 6 (first on line 6)",
        f"{HINDI_FILE}, line 9: 'indian_context_persona' is empty",
        f"{HINDI_FILE}, line 11: 'indian_context_persona' must be a string, got int",
        f"{HINDI_FILE}, line 13: 'description' is longer than 200 characters",
    ]


def test_it_tells_a_truncated_last_line_from_a_broken_line_in_the_middle(tmp_path):
    folder = demo_copy(tmp_path)
    path = folder / HINDI_FILE
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[9] = lines[9].replace('", "', '" "', 1)
    lines[-1] = lines[-1][:50]
    path.write_text("\n".join(lines), encoding="utf-8")  # No newline after the cut last line.
    # json counts columns from 1 and stops at the character where the comma should be: after the space.
    column = lines[9].index('" "') + 3
    _, problems = read_all(folder)
    assert messages(problems) == [
        f"{HINDI_FILE}, line 10: invalid JSON: Expecting ',' delimiter (column {column})",
        f"{HINDI_FILE}, line 36: invalid JSON: the last line is truncated (Unterminated string starting at)",
    ]


def test_it_names_the_line_and_byte_offset_of_the_first_non_utf8_byte(tmp_path):
    folder = demo_copy(tmp_path)
    path = folder / ENGLISH_FILE
    raw = path.read_bytes().split(b"\n")
    raw[3] = raw[3].replace(b"Lucknow", "Lucknôw".encode("latin-1"))  # Latin-1 writes ô as the byte 0xF4.
    path.write_bytes(b"\n".join(raw))
    offset = sum(len(line) + 1 for line in raw[:3]) + raw[3].index(b"\xf4")
    _, problems = read_all(folder)
    assert messages(problems) == [
        f"{ENGLISH_FILE}, line 4: not valid UTF-8: byte 0xF4 at byte offset {offset} of the file "
        "(save the file as UTF-8)"
    ]


def test_it_normalises_text_to_nfc(tmp_path):
    folder = demo_copy(tmp_path)
    decomposed = unicodedata.normalize("NFD", "கொல்லம் café")
    assert decomposed != unicodedata.normalize("NFC", decomposed)
    edit_row(folder / "nirdesha_tam_Taml.jsonl", 1, indian_context_persona=decomposed)
    rows, problems = read_all(folder)
    assert not problems
    persona = next(row.persona for row in rows if row.language == "tam" and row.item_id == 1)
    assert persona == unicodedata.normalize("NFC", decomposed)
    assert persona != decomposed


def test_it_rejects_a_file_whose_text_is_in_another_script_than_its_name_says(tmp_path):
    folder = demo_copy(tmp_path)
    # Tamil text in the Hindi file: the name is right, the content is not.
    write_rows(folder / HINDI_FILE, read_rows(folder / "nirdesha_tam_Taml.jsonl"))
    _, problems = read_all(folder)
    (problem,) = problems.items
    assert problem.file == HINDI_FILE and problem.line == 1
    assert "the text is not in Hindi's script Deva: only 0 of 36 sampled rows are mostly Deva, most are Taml" in str(
        problem
    )


def test_it_only_warns_about_a_few_rows_in_another_script(tmp_path):
    folder = demo_copy(tmp_path)
    english = read_rows(folder / ENGLISH_FILE)
    edit_row(folder / HINDI_FILE, 4, indian_context_persona=english[3]["indian_context_persona"])
    edit_row(
        folder / HINDI_FILE,
        4,
        indian_context_instruction=english[3]["indian_context_instruction"],
    )
    _, problems = read_all(folder)
    assert not problems
    assert problems.warnings == [
        f"{HINDI_FILE}: 1 of 36 sampled rows are mostly in another script than Deva: line 4 (Latn)"
    ]


def test_it_rejects_translation_ids_without_an_english_original(tmp_path):
    folder = demo_copy(tmp_path)
    edit_row(folder / "nirdesha_urd_Arab.jsonl", 36, id=99)
    _, problems = read_all(folder)
    assert messages(problems) == ["nirdesha_urd_Arab.jsonl, line 36: id 99 has no English original in the English file"]
    assert problems.warnings == ["nirdesha_urd_Arab.jsonl: 1 English items have no Urdu row"]


def test_it_stops_collecting_at_the_cap(tmp_path):
    folder = demo_copy(tmp_path)
    rows = read_rows(folder / HINDI_FILE)
    write_rows(folder / HINDI_FILE, [{**row, "id": "x"} for row in rows])
    with pytest.raises(DatasetFileError) as caught:
        read_all(folder, cap=5)
    assert len(caught.value.problems) == 5
    assert "5 problems (stopped looking after this many)" in str(caught.value)


def test_it_hashes_names_and_bytes_so_any_change_changes_the_hash(tmp_path):
    first = open_source(demo_copy(tmp_path / "a")).fingerprint()
    same = open_source(demo_copy(tmp_path / "b")).fingerprint()
    assert first.content_hash == same.content_hash and len(first.content_hash) == 64
    assert first.expected_rows == 6 * 36
    edited = demo_copy(tmp_path / "c")
    edit_row(edited / HINDI_FILE, 1, description="0-shot instruction data synthesis")
    assert open_source(edited).fingerprint().content_hash != first.content_hash
    renamed = demo_copy(tmp_path / "d")
    (renamed / "nirdesha_urd_Arab.jsonl").unlink()
    assert open_source(renamed).fingerprint().content_hash != first.content_hash


def test_it_reads_the_card_and_rejects_unknown_keys(tmp_path):
    folder = demo_copy(tmp_path, with_card=True)
    assert open_source(folder).card["name"] == "nirdesha-demo"
    (folder / "dataset_card.json").write_text(json.dumps({"licence": "MIT", "citation": 3}), encoding="utf-8")
    with pytest.raises(DatasetFileError) as caught:
        open_source(folder)
    assert "dataset_card.json: unknown keys ['licence']" in str(caught.value)
    assert "dataset_card.json: 'citation' must be a string" in str(caught.value)


def test_it_reads_the_shared_validation_csvs_with_english_once_per_id():
    require_shared_data(VALIDATION_DIR)
    source = open_source(VALIDATION_DIR)
    assert source.format == "validation-csv"
    assert sorted(f.name for f in source.files) == ["Bengali.csv", "Hindi.csv", "Marathi.csv", "Tamil.csv", "Urdu.csv"]
    problems = Problems()
    counts: dict[str, int] = {}
    for row in source.rows(problems):
        counts[row.language] = counts.get(row.language, 0) + 1
    assert not problems and not problems.warnings
    assert counts == {"eng": 150, "ben": 150, "hin": 150, "mar": 150, "tam": 150, "urd": 150}


def test_it_reports_english_originals_that_differ_between_csv_files(tmp_path):
    require_shared_data(VALIDATION_DIR)
    first_lines = {}
    for name in ("Hindi.csv", "Urdu.csv"):
        lines = (VALIDATION_DIR / name).read_text(encoding="utf-8").split("\n")
        first_lines[name] = next(number for number, line in enumerate(lines, start=1) if line.startswith("7,"))
        if name == "Urdu.csv":
            # The English column comes first on the record's line; change its persona.
            index = first_lines[name] - 1
            lines[index] = lines[index].replace(
                'indian_context_persona"": ""', 'indian_context_persona"": ""Changed: ', 1
            )
        (tmp_path / name).write_text("\n".join(lines), encoding="utf-8")
    _, problems = read_all(tmp_path)
    assert messages(problems) == [
        f"Urdu.csv, line {first_lines['Urdu.csv']}: the English text of id 7 differs from "
        f"Hindi.csv line {first_lines['Hindi.csv']}"
    ]


def test_it_rejects_an_empty_file(tmp_path):
    folder = demo_copy(tmp_path)
    (folder / HINDI_FILE).write_bytes(b"")
    _, problems = read_all(folder)
    assert messages(problems) == [f"{HINDI_FILE}: the file holds no rows"]


def test_it_reports_csv_problems_with_the_line_where_the_record_starts(tmp_path):
    require_shared_data(VALIDATION_DIR)
    hindi = (VALIDATION_DIR / "Hindi.csv").read_text(encoding="utf-8").split("\n")
    hindi[2] = hindi[2].replace('{""indian_context_persona""', '{""indian_context_persona', 1)  # Broken JSON.
    (tmp_path / "Hindi.csv").write_text("\n".join(hindi), encoding="utf-8")
    (tmp_path / "Tamil.csv").write_text("id,ENG_indian_context\n1,{}\n", encoding="utf-8")
    urdu = (VALIDATION_DIR / "Urdu.csv").read_bytes().split(b"\n")
    urdu[5] = urdu[5].replace("ک".encode(), b"\xff", 1)
    (tmp_path / "Urdu.csv").write_bytes(b"\n".join(urdu))
    (tmp_path / "Klingon.csv").write_text("id\n", encoding="utf-8")
    with pytest.raises(DatasetFileError, match=r"Klingon\.csv: 'Klingon' is not a language of the benchmark"):
        open_source(tmp_path)
    (tmp_path / "Klingon.csv").unlink()
    _, problems = read_all(tmp_path)
    found = messages(problems)
    assert found[0].startswith("Hindi.csv, line 3: invalid JSON in column ENG_indian_context:")
    assert found[1] == "Tamil.csv, line 1: missing columns ['indian_context']; found ['id', 'ENG_indian_context']"
    assert found[2].startswith("Urdu.csv, line 6: not valid UTF-8: byte 0xFF at byte offset")
    assert len(found) == 3


def test_it_imports_no_django():
    # The reader must stay usable without Django (the engine and scripts use it on their own).
    code = (
        "import sys, evaluation.engine.dataset_files; sys.exit(any(m.split('.')[0] == 'django' for m in sys.modules))"
    )
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT).returncode == 0
