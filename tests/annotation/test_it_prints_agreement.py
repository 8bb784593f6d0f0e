"""manage.py agreement: the per-language table and its JSON form."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.validation import VALIDATION_DIR, expected_agreement

pytestmark = pytest.mark.django_db

CODES = {"Bengali": "ben", "Hindi": "hin", "Marathi": "mar", "Tamil": "tam", "Urdu": "urd"}


@pytest.fixture
def imported(validation_dataset):
    call_command("import_judgements", str(VALIDATION_DIR), stdout=StringIO())
    return validation_dataset


def agreement(*args) -> str:
    out = StringIO()
    call_command("agreement", *args, stdout=out)
    return out.getvalue()


def test_it_prints_json_keyed_by_language(imported):
    data = json.loads(agreement("--json"))
    assert set(data) == set(CODES.values())
    for language, published in expected_agreement().items():
        row = data[CODES[language]]
        assert set(row) == {"n", "percent_agreement", "kappa", "kappa_ci_low", "kappa_ci_high", "alpha", "ac1"}
        assert row["n"] == 150
        assert row["kappa"] == pytest.approx(published["kappa_score"], abs=1e-4)
        assert row["percent_agreement"] == pytest.approx(published["agreement_percentage"], abs=1e-4)
        assert row["alpha"] == pytest.approx(published["krippendorff_alpha"], abs=1e-4)
        assert row["kappa_ci_low"] < row["kappa"] < row["kappa_ci_high"]


def test_it_prints_a_table_with_the_band_and_the_ac1_note(imported):
    text = agreement("--dataset", imported.slug)
    hindi = next(line for line in text.splitlines() if line.startswith("Hindi"))
    assert " 150 " in hindi and "93.33" in hindi and "0.8069" in hindi and "Almost perfect agreement" in hindi
    assert "first rater's proportions" in text


def test_it_filters_by_language(imported):
    assert list(json.loads(agreement("--language", "urd", "--json"))) == ["urd"]


def test_it_explains_missing_data(db):
    with pytest.raises(CommandError, match="Choose a dataset with --dataset"):
        agreement()
    with pytest.raises(CommandError, match="There is no dataset x@y"):
        agreement("--dataset", "x@y")
