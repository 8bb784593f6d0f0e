"""manage.py import_dataset, on the shared validation CSVs and on altered copies of the demo sample."""

from __future__ import annotations

import csv
import json
import socket
import unicodedata
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from evaluation.models import Dataset, Item
from tests.data import VALIDATION_DIR, VALIDATION_LANGUAGES, require_shared_data, validation_csv
from tests.importing.files import ENGLISH_FILE, HINDI_FILE, demo_copy, edit_row, truncate_last_line

pytestmark = pytest.mark.django_db


def run(*args: str, **options: object) -> str:
    out = StringIO()
    call_command("import_dataset", *[str(arg) for arg in args], stdout=out, stderr=StringIO(), **options)
    return out.getvalue()


def database_state() -> tuple:
    """Everything an import could change: datasets with their card, and every item."""
    datasets = list(Dataset.objects.order_by("pk").values_list())
    items = list(Item.objects.order_by("pk").values_list())
    return datasets, items


@pytest.fixture
def earlier_import(tmp_path):
    """A dataset already in the database, so that 'unchanged' means more than 'still empty'."""
    run(demo_copy(tmp_path / "earlier"), "--dataset", "earlier@1")
    return Dataset.objects.get(name="earlier")


def test_it_imports_the_shared_validation_csvs_as_six_aligned_languages():
    require_shared_data(VALIDATION_DIR)
    output = run(VALIDATION_DIR, "--dataset", "@validation-150")
    dataset = Dataset.objects.get(name="nirdesha-validation", version="validation-150")
    assert "Imported nirdesha-validation validation-150: 900 items" in output
    assert dataset.item_counts_by_language() == {lang: 150 for lang in ("ben", "eng", "hin", "mar", "tam", "urd")}
    assert dataset.pool_size == 150
    ids_by_language = {
        code: set(dataset.items.filter(language_id=code).values_list("item_id", flat=True))
        for code in ("eng", "ben", "hin", "mar", "tam", "urd")
    }
    assert all(ids == set(range(1, 151)) for ids in ids_by_language.values())

    with validation_csv("Hindi").open(encoding="utf-8", newline="") as handle:
        first = next(row for row in csv.DictReader(handle) if row["id"] == "1")
    english = json.loads(first["ENG_indian_context"])
    hindi = json.loads(first["indian_context"])
    item = dataset.items.get(language_id="eng", item_id=1)
    assert (item.persona, item.instruction, item.description) == (
        english["indian_context_persona"],
        english["indian_context_instruction"],
        english["description"],
    )
    assert dataset.items.get(language_id="hin", item_id=1).instruction == hindi["indian_context_instruction"]
    assert dataset.content_hash and dataset.source == str(VALIDATION_DIR)
    assert dataset.license == "Apache-2.0"
    assert dataset.provenance == (
        "Synthesised in English, machine-translated, validated by two native speakers per language."
    )
    assert {f"{name}.csv" for name in VALIDATION_LANGUAGES} <= {p.name for p in VALIDATION_DIR.iterdir()}


def test_it_imports_a_jsonl_folder_with_its_card_and_lets_options_override_it(tmp_path):
    folder = demo_copy(tmp_path, with_card=True)
    run(folder, "--dataset", "@card-test", "--citation", "Our own citation", "--demo")
    dataset = Dataset.objects.get(name="nirdesha-demo", version="card-test")
    assert dataset.citation == "Our own citation"
    assert dataset.description.startswith("Demo sample — not the Nirdesha benchmark")
    assert dataset.is_demo
    assert dataset.items.count() == 216


@pytest.mark.parametrize("batch_size", [7, 2000])
def test_it_writes_every_row_whatever_the_batch_size(tmp_path, batch_size):
    run(demo_copy(tmp_path), "--dataset", "batches", "--batch-size", str(batch_size))
    dataset = Dataset.objects.get(name="batches")
    assert dataset.item_counts_by_language() == {code: 36 for code in ("ben", "eng", "hin", "mar", "tam", "urd")}


def test_it_refuses_a_truncated_jsonl_and_changes_nothing(tmp_path, earlier_import):
    folder = demo_copy(tmp_path)
    line = truncate_last_line(folder / HINDI_FILE)
    before = database_state()
    with pytest.raises(CommandError) as caught:
        run(folder, "--dataset", "@2")
    assert f"{HINDI_FILE}, line {line}: invalid JSON: the last line is truncated" in str(caught.value)
    assert database_state() == before


def test_it_refuses_a_file_name_with_the_wrong_script_and_changes_nothing(tmp_path, earlier_import):
    folder = demo_copy(tmp_path)
    (folder / HINDI_FILE).rename(folder / "nirdesha_hin_Taml.jsonl")
    before = database_state()
    with pytest.raises(CommandError) as caught:
        run(folder, "--dataset", "@2")
    assert "nirdesha_hin_Taml.jsonl: script 'Taml' in the file name is not the script of Hindi (Deva" in str(
        caught.value
    )
    assert database_state() == before


def test_it_refuses_a_row_without_an_instruction_and_changes_nothing(tmp_path, earlier_import):
    folder = demo_copy(tmp_path)
    edit_row(folder / "nirdesha_urd_Arab.jsonl", 30, indian_context_instruction=None)
    before = database_state()
    # Small batches: English and four other languages are already written when the Urdu row is read,
    # so only the transaction keeps them out.
    with pytest.raises(CommandError) as caught:
        run(folder, "--dataset", "@2", "--batch-size", "10")
    assert "nirdesha_urd_Arab.jsonl, line 30: missing required key 'indian_context_instruction'" in str(caught.value)
    assert database_state() == before


def test_it_refuses_a_file_that_is_not_utf8_and_changes_nothing(tmp_path, earlier_import):
    folder = demo_copy(tmp_path)
    path = folder / ENGLISH_FILE
    path.write_bytes(path.read_text(encoding="utf-8").replace("Lucknow", "Lucknôw").encode("latin-1", "replace"))
    before = database_state()
    with pytest.raises(CommandError) as caught:
        run(folder, "--dataset", "@2")
    assert f"{ENGLISH_FILE}, line 4: not valid UTF-8: byte 0xF4 at byte offset" in str(caught.value)
    assert database_state() == before


def test_it_lists_every_problem_not_just_the_first(tmp_path, earlier_import):
    folder = demo_copy(tmp_path)
    edit_row(folder / HINDI_FILE, 2, id="two")
    edit_row(folder / "nirdesha_tam_Taml.jsonl", 5, indian_context_persona="")
    with pytest.raises(CommandError) as caught:
        run(folder, "--dataset", "@2")
    message = str(caught.value)
    assert "2 problems" in message
    assert f"{HINDI_FILE}, line 2: id must be a whole number" in message
    assert "nirdesha_tam_Taml.jsonl, line 5: 'indian_context_persona' is empty" in message


def test_it_does_nothing_when_the_same_files_are_imported_again(tmp_path):
    folder = demo_copy(tmp_path)
    run(folder, "--dataset", "again@1")
    before = database_state()
    output = run(folder, "--dataset", "again@1")
    assert output.strip() == "again 1 is already imported, nothing changed."
    assert database_state() == before


def test_it_refuses_changed_files_under_a_version_already_imported(tmp_path):
    folder = demo_copy(tmp_path)
    run(folder, "--dataset", "changed@1")
    edit_row(folder / HINDI_FILE, 1, indian_context_instruction="बदला हुआ निर्देश: यह पंक्ति बाद में बदली गई।")
    before = database_state()
    with pytest.raises(CommandError, match="changed 1 is already imported from different files") as caught:
        run(folder, "--dataset", "changed@1")
    assert "import the new files under a new --version" in str(caught.value)
    assert database_state() == before
    run(folder, "--dataset", "changed@2")
    assert Dataset.objects.filter(name="changed").count() == 2


def test_it_stores_text_in_nfc(tmp_path):
    folder = demo_copy(tmp_path)
    tamil = unicodedata.normalize("NFD", "கொல்லத்தைச் சேர்ந்த மீனவர், café-ல் தேநீர் அருந்துகிறார்.")
    english = unicodedata.normalize("NFD", "A fisherman from Kollam who drinks tea at a café.")
    assert tamil != unicodedata.normalize("NFC", tamil) and english != unicodedata.normalize("NFC", english)
    edit_row(folder / "nirdesha_tam_Taml.jsonl", 11, indian_context_persona=tamil)
    edit_row(folder / ENGLISH_FILE, 11, indian_context_persona=english)
    run(folder, "--dataset", "nfc")
    dataset = Dataset.objects.get(name="nfc")
    stored_tamil = dataset.items.get(language_id="tam", item_id=11).persona
    stored_english = dataset.items.get(language_id="eng", item_id=11).persona
    assert stored_tamil == unicodedata.normalize("NFC", tamil) != tamil
    assert stored_english == "A fisherman from Kollam who drinks tea at a café."


def test_it_fills_in_a_version_known_only_from_its_published_results(tmp_path):
    placeholder = Dataset.objects.create(name="nirdesha", version="paper", declared_pool_size=50_000)
    run(demo_copy(tmp_path), "--dataset", "@paper")
    placeholder.refresh_from_db()
    assert placeholder.items.count() == 216
    assert placeholder.content_hash and placeholder.license == "Apache-2.0"
    assert placeholder.declared_pool_size == 50_000


@pytest.mark.parametrize("writer", ["bulk_create", "copy"])
def test_it_writes_the_same_items_with_either_writer_where_the_database_allows(tmp_path, writer):
    folder = demo_copy(tmp_path)
    if writer == "copy" and connection.vendor != "postgresql":
        with pytest.raises(CommandError, match="The COPY writer needs PostgreSQL"):
            run(folder, "--dataset", writer, "--writer", writer)
        assert not Dataset.objects.filter(name=writer).exists()
        return
    run(folder, "--dataset", writer, "--writer", writer, "--batch-size", "50")
    dataset = Dataset.objects.get(name=writer)
    rows = set(dataset.items.values_list("item_id", "language_id", "persona", "instruction", "description"))
    expected = set()
    for path in folder.glob("*.jsonl"):
        code = path.name.split("_")[1]
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            expected.add(
                (
                    row["id"],
                    code,
                    row["indian_context_persona"],
                    row["indian_context_instruction"],
                    row["description"],
                )
            )
    assert rows == expected


def test_it_says_clearly_when_the_hugging_face_hub_cannot_be_reached(tmp_path, monkeypatch, earlier_import):
    from huggingface_hub import constants

    # A port that was just free: connecting to it is refused at once, like a Hub that is down.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    # The test environment sets HF_HUB_OFFLINE=1; this test needs the real network code path.
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    before = database_state()
    with pytest.raises(CommandError) as caught:
        run("hf://nirdesha-test/nirdesha")
    message = str(caught.value)
    assert message.startswith(f"Could not reach the Hugging Face Hub at http://127.0.0.1:{port}")
    assert "nirdesha-test/nirdesha" in message and "Connection refused" in message
    with pytest.raises(CommandError, match="Could not reach the Hugging Face Hub at"):
        run("--hub", "nirdesha-test/nirdesha")
    assert database_state() == before


def test_it_says_clearly_when_hub_downloads_are_switched_off_and_the_cache_has_nothing(tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    with pytest.raises(CommandError, match=r"HF_HUB_OFFLINE is set and dataset nirdesha-test/nirdesha is not in"):
        run("--hub", "nirdesha-test/nirdesha")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "Give exactly one SOURCE"),
        (("somewhere", "--hub", "a/b"), "Give exactly one SOURCE"),
        (("--hub", "not a repo id"), "is not a Hugging Face dataset id"),
        (("/no/such/folder",), "no such folder"),
        (("{demo}", "--homepage", "not a url"), "homepage 'not a url' is not a valid URL"),
        (("{demo}", "--dataset", " @ "), "--dataset must name the version as NAME@VERSION"),
        (("{demo}", "--version", "1.0"), "--version prints Django's version"),
        (("{demo}", "--batch-size", "0"), "--batch-size and --max-errors must be at least 1"),
    ],
)
def test_it_explains_bad_arguments(tmp_path, args, message):
    folder = demo_copy(tmp_path)
    before = database_state()
    with pytest.raises(CommandError, match=message):
        run(*[arg.format(demo=folder) for arg in args])
    assert database_state() == before


def test_it_names_the_validation_sample_apart_from_the_full_benchmark():
    require_shared_data(VALIDATION_DIR)
    run(VALIDATION_DIR)
    assert list(Dataset.objects.values_list("name", "version")) == [("nirdesha-validation", "1.0")]
