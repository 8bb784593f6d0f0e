"""import_dataset --on-error {fail,skip,repair} and import_judgements on validation CSVs with a broken text cell.

The reference's 12 published validation CSVs contain a row whose JSON cell has stray characters after
the object. Only 5 of the 12 files are in the shared data, so the tests copy them to a temporary folder
and inject such a row, as the published files have it.
"""

from __future__ import annotations

import csv
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation.reports import agreement_by_language
from evaluation.models import Dataset, Item
from tests.validation import VALIDATION_DIR, expected_agreement

pytestmark = pytest.mark.django_db

BROKEN_FILE = "Tamil.csv"
BROKEN_ID = "42"
STRAY = '"}'


@pytest.fixture
def broken_folder(tmp_path: Path) -> tuple[Path, int]:
    """Copies of the validation CSVs, Tamil's item 42 with stray characters after its JSON object."""
    for path in VALIDATION_DIR.glob("*.csv"):
        shutil.copy(path, tmp_path / path.name)
    target = tmp_path / BROKEN_FILE
    with open(target, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        header, rows = reader.fieldnames, list(reader)
    broken_line = None
    with open(target, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=header)
        writer.writeheader()
        for row in rows:
            if row["id"] == BROKEN_ID:
                row["indian_context"] = row["indian_context"] + STRAY
            writer.writerow(row)
    text = target.read_text(encoding="utf-8").splitlines()
    broken_line = next(number for number, line in enumerate(text, start=1) if line.startswith(f"{BROKEN_ID},"))
    return tmp_path, broken_line


def import_dataset(folder: Path, *options: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("import_dataset", str(folder), *options, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_refuses_the_broken_row_by_default_and_changes_nothing(broken_folder):
    folder, line = broken_folder
    with pytest.raises(CommandError, match=rf"Tamil\.csv, line {line}: invalid JSON in column indian_context: Extra"):
        import_dataset(folder)
    assert not Dataset.objects.exists() and not Item.objects.exists()


def test_it_repairs_the_row_records_it_and_puts_the_decision_in_the_content_hash(broken_folder):
    folder, line = broken_folder
    out, err = import_dataset(folder, "--on-error=repair")
    assert "750" in out or "Imported" in out
    dataset = Dataset.objects.get()
    assert Item.objects.filter(dataset=dataset, language_id="tam").count() == 150
    [decision] = dataset.row_decisions
    assert decision["file"] == BROKEN_FILE and decision["line"] == line and decision["action"] == "repaired"
    assert decision["column"] is not None and "2 stray character(s)" in decision["detail"]
    assert f"{BROKEN_FILE}, line {line}" in err
    # The repaired item is the object as it stood before the stray characters.
    with open(VALIDATION_DIR / BROKEN_FILE, encoding="utf-8", newline="") as handle:
        original = next(row for row in csv.DictReader(handle) if row["id"] == BROKEN_ID)
    assert Item.objects.get(dataset=dataset, language_id="tam", item_id=42).persona in original["indian_context"]
    report = dataset.import_report
    assert report["on_error"] == "repair" and dataset.content_hash != report["files_hash"]
    # The dataset card lists the repaired row.
    page = Client().get(reverse("leaderboard:dataset_detail", args=[dataset.pk])).content.decode()
    assert f"{BROKEN_FILE}, line {line}, column {decision['column']}: repaired" in page
    # The same files with the same decision again: nothing changes.
    again, _ = import_dataset(folder, "--on-error=repair")
    assert "already imported" in again

    # Skipping instead is a different decision, hence a different version hash.
    out, err = import_dataset(folder, "--on-error=skip", "--dataset", "@skip")
    skipped = Dataset.objects.get(version="skip")
    assert Item.objects.filter(dataset=skipped, language_id="tam").count() == 149
    [decision] = skipped.row_decisions
    assert (decision["file"], decision["line"], decision["action"]) == (BROKEN_FILE, line, "skipped")
    assert "Extra data" in decision["detail"]
    assert skipped.content_hash not in (dataset.content_hash, report["files_hash"])


def test_it_imports_every_rating_and_reproduces_the_published_agreement_despite_the_broken_cell(broken_folder):
    folder, line = broken_folder
    import_dataset(folder, "--on-error=repair")
    dataset = Dataset.objects.get()
    out, err = StringIO(), StringIO()
    call_command("import_judgements", str(folder), stdout=out, stderr=err)
    assert "Imported 1500 ratings" in out.getvalue()
    assert f"{BROKEN_FILE}, line {line}, indian_context" in err.getvalue()
    rows = {row["language_name"]: row for row in agreement_by_language(dataset)}
    for language, published in expected_agreement().items():
        assert rows[language]["n"] == 150
        assert rows[language]["kappa"] == pytest.approx(published["kappa_score"], abs=1e-4), language
        assert rows[language]["percent_agreement"] == pytest.approx(published["agreement_percentage"], abs=1e-4)
        assert rows[language]["alpha"] == pytest.approx(published["krippendorff_alpha"], abs=1e-4), language
