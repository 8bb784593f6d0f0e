"""import_dataset refuses hostile files with a clear message and changes nothing: a NUL in the card,
deeply nested JSON, an oversized text, control characters, and symbolic links out of the folder."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from evaluation.engine.dataset_files import MAX_TEXT_CHARS
from evaluation.models import Dataset, Item
from tests.importing.files import HINDI_FILE, demo_copy, edit_row

pytestmark = pytest.mark.django_db


def refusal(folder) -> str:
    with pytest.raises(CommandError) as caught:
        call_command("import_dataset", str(folder), "--dataset", "@x", stdout=StringIO(), stderr=StringIO())
    assert not Dataset.objects.exists() and not Item.objects.exists()
    return str(caught.value)


def test_it_refuses_a_nul_in_the_dataset_card(tmp_path):
    folder = demo_copy(tmp_path / "d", with_card=True)
    card = json.loads((folder / "dataset_card.json").read_text())
    card["description"] = "nul \u0000 here"
    (folder / "dataset_card.json").write_text(json.dumps(card))
    assert "dataset_card.json: The JSON document contains a control character" in refusal(folder)


def test_it_refuses_a_raw_nul_byte_in_the_dataset_card(tmp_path):
    folder = demo_copy(tmp_path / "d", with_card=True)
    (folder / "dataset_card.json").write_bytes(b'{"description": "a\x00b"}')
    assert "contains a NUL character" in refusal(folder)


def test_it_refuses_a_deeply_nested_line(tmp_path):
    folder = demo_copy(tmp_path / "d")
    with (folder / HINDI_FILE).open("a") as handle:
        handle.write("[" * 100_000 + "]" * 100_000 + "\n")
    assert "nested more than" in refusal(folder)


def test_it_refuses_a_10_mb_persona_by_its_line_length(tmp_path):
    folder = demo_copy(tmp_path / "d")
    edit_row(folder / HINDI_FILE, 2, indian_context_persona="क" * (10 * 1024 * 1024))
    message = refusal(folder)
    assert f"{HINDI_FILE}, line 2: The JSON document is" in message and "bytes; at most" in message


def test_it_refuses_a_persona_over_the_per_text_limit(tmp_path):
    folder = demo_copy(tmp_path / "d")
    edit_row(folder / HINDI_FILE, 2, indian_context_persona="क" * (MAX_TEXT_CHARS + 1))
    message = refusal(folder)
    assert f"{HINDI_FILE}, line 2" in message and f"at most {MAX_TEXT_CHARS:,} are accepted" in message


def test_it_refuses_a_control_character_in_a_text(tmp_path):
    folder = demo_copy(tmp_path / "d")
    edit_row(folder / HINDI_FILE, 3, indian_context_instruction="bell \u0007 here")
    assert f"{HINDI_FILE}, line 3: 'indian_context_instruction' contains a control character" in refusal(folder)


def test_it_refuses_symbolic_links_out_of_the_folder(tmp_path):
    outside = tmp_path / "secret.jsonl"
    outside.write_text('{"id": 1}\n')
    folder = demo_copy(tmp_path / "d")
    (folder / "nirdesha_guj_Gujr.jsonl").symlink_to(outside)
    (folder / "dataset_card.json").symlink_to(tmp_path / "secret.jsonl")
    message = refusal(folder)
    assert "nirdesha_guj_Gujr.jsonl: is a symbolic link to outside the folder" in message
    assert "dataset_card.json: is a symbolic link to outside the folder" in message
