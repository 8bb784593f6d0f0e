"""manage.py export_judgements: the validation CSVs come back out as they went in, plus JSON."""

from __future__ import annotations

import csv
import json
import unicodedata
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Rating
from tests.validation import VALIDATION_DIR, VALIDATION_LANGUAGES

pytestmark = pytest.mark.django_db


def read(path) -> dict[str, dict]:
    with open(path, encoding="utf-8", newline="") as handle:
        return {row["id"]: row for row in csv.DictReader(handle)}


def texts(raw: str) -> dict:
    return {key: unicodedata.normalize("NFC", str(value)) for key, value in json.loads(raw).items()}


def test_it_writes_the_imported_files_back_in_the_validation_format(validation_dataset, tmp_path):
    call_command("import_judgements", str(VALIDATION_DIR), stdout=StringIO())
    out = StringIO()
    call_command("export_judgements", str(tmp_path), "--dataset", validation_dataset.slug, stdout=out)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"{name}.csv" for name in VALIDATION_LANGUAGES] + [f"{name}.json" for name in VALIDATION_LANGUAGES]
    )
    for language in VALIDATION_LANGUAGES:
        original, exported = read(VALIDATION_DIR / f"{language}.csv"), read(tmp_path / f"{language}.csv")
        assert list(exported) == list(original)
        for item_id, row in original.items():
            again = exported[item_id]
            assert (again["expert_1"], again["expert_2"]) == (row["expert_1"], row["expert_2"])
            assert texts(again["indian_context"]) == texts(row["indian_context"])
            assert texts(again["ENG_indian_context"]) == texts(row["ENG_indian_context"])


def test_it_round_trips_through_import(validation_dataset, tmp_path):
    call_command("import_judgements", str(VALIDATION_DIR), stdout=StringIO())
    call_command("export_judgements", str(tmp_path), "--format", "csv", stdout=StringIO())
    before = Rating.objects.count()
    out = StringIO()
    call_command("import_judgements", str(tmp_path), stdout=out)
    assert "nothing changed" in out.getvalue()
    assert Rating.objects.count() == before


def test_it_writes_json_with_every_rating_and_its_rater(validation_dataset, tmp_path):
    call_command("import_judgements", str(VALIDATION_DIR), stdout=StringIO())
    call_command("export_judgements", str(tmp_path), "--language", "tam", "--format", "json", stdout=StringIO())
    assert [p.name for p in tmp_path.iterdir()] == ["Tamil.json"]
    data = json.loads((tmp_path / "Tamil.json").read_text(encoding="utf-8"))
    assert data["campaign"]["dataset"] == validation_dataset.slug
    assert len(data["items"]) == 150
    first = data["items"][0]
    assert first["id"] == 1
    assert [r["rater"] for r in first["ratings"]] == ["expert_1", "expert_2"]
    assert first["english"]["persona"].startswith("A theater manager")


def test_it_says_when_nothing_matches(validation_dataset, tmp_path):
    with pytest.raises(CommandError, match="No campaign matches"):
        call_command("export_judgements", str(tmp_path), stdout=StringIO())
    assert not any(tmp_path.iterdir())
