"""manage.py import_judgements, on the five shared validation CSVs and on broken copies of them."""

from __future__ import annotations

import shutil
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.importing import IMPORTED_CAMPAIGN_NAME
from annotation.models import Campaign, CampaignItem, Rating
from annotation.reports import agreement_by_language
from leaderboard.cache import current_generation
from tests.validation import VALIDATION_DIR, expected_agreement, load_validation_items

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command("import_judgements", *map(str, args), stdout=out)
    return out.getvalue()


def counts() -> tuple[int, int, int]:
    return Campaign.objects.count(), CampaignItem.objects.count(), Rating.objects.count()


def test_it_reproduces_the_published_agreement_after_importing_the_validation_csvs(validation_dataset):
    output = run(VALIDATION_DIR)
    assert "Imported 1500 ratings" in output
    assert "Skipped expected_agreement.csv" in output
    assert counts() == (5, 750, 1500)

    rows = {row["language_name"]: row for row in agreement_by_language(validation_dataset)}
    expected = expected_agreement()
    assert set(rows) == set(expected)
    for language, published in expected.items():
        row = rows[language]
        assert row["n"] == 150
        assert row["kappa"] == pytest.approx(published["kappa_score"], abs=1e-4), language
        assert row["percent_agreement"] == pytest.approx(published["agreement_percentage"], abs=1e-4), language
        assert row["alpha"] == pytest.approx(published["krippendorff_alpha"], abs=1e-4), language
        assert row["kappa_ci_low_simple"] == pytest.approx(published["kappa_ci_lower"], abs=1e-4), language
        assert row["kappa_ci_high_simple"] == pytest.approx(published["kappa_ci_upper"], abs=1e-4), language
        # The published AC1 used the first rater's marginals; expert_1 stays the first rater here.
        assert row["ac1_first_rater_marginals"] == pytest.approx(published["gwet_ac1"], abs=1e-4), language
        assert row["kappa_band"] == published["interpretation"]
        # The large-sample interval is a different (proper) one and is what kappa_ci_low/high carry.
        assert row["kappa_ci_low"] != pytest.approx(published["kappa_ci_lower"], abs=1e-4)


def test_it_creates_one_closed_campaign_and_two_inactive_raters_per_language(validation_dataset):
    run(VALIDATION_DIR)
    campaign = Campaign.objects.get(language_id="urd")
    assert campaign.name == IMPORTED_CAMPAIGN_NAME
    assert campaign.status == Campaign.Status.CLOSED
    assert campaign.origin == Campaign.Origin.IMPORTED
    raters = {rating.annotator for rating in Rating.objects.filter(campaign_item__campaign=campaign)}
    assert {rater.email for rater in raters} == {"expert_1.urd@import.invalid", "expert_2.urd@import.invalid"}
    assert not any(rater.is_active or rater.has_usable_password() for rater in raters)
    first = Rating.objects.get(campaign_item__campaign=campaign, campaign_item__item__item_id=1, rater_label="expert_1")
    assert first.get_judgement_display() == "Completely Agree"


def test_it_is_idempotent_and_refreshes_cached_pages_only_when_something_changed(
    validation_dataset, django_capture_on_commit_callbacks
):
    generation = current_generation()
    with django_capture_on_commit_callbacks(execute=True):
        run(VALIDATION_DIR)
    assert current_generation() == generation + 1
    before = counts()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        output = run(VALIDATION_DIR, "--dataset", validation_dataset.slug)
    assert callbacks == []
    assert "nothing changed" in output
    assert "150 already there" not in output  # two raters: 300 per language
    assert "300 already there" in output
    assert counts() == before
    assert current_generation() == generation + 1


def test_it_refuses_judgements_for_items_that_were_never_imported(db):
    with pytest.raises(CommandError, match="Import the items first"):
        run(VALIDATION_DIR)
    assert counts() == (0, 0, 0)


def test_it_refuses_a_file_whose_items_are_missing_from_the_named_dataset(hindi_dataset):
    # Only Hindi's items exist: naming the dataset gets past resolution, then the other four fail.
    with pytest.raises(CommandError) as error:
        run(VALIDATION_DIR, "--dataset", hindi_dataset.slug)
    assert f"Tamil.csv: 150 items are not in {hindi_dataset.slug} (Tamil)" in str(error.value)
    assert "import_dataset" in str(error.value)
    assert counts() == (0, 0, 0)


def test_it_refuses_an_unknown_dataset(validation_dataset):
    with pytest.raises(CommandError, match="There is no dataset nirdesha@v9"):
        run(VALIDATION_DIR, "--dataset", "nirdesha@v9")


def copy_of_validation(tmp_path, *languages: str):
    for language in languages:
        shutil.copy(VALIDATION_DIR / f"{language}.csv", tmp_path / f"{language}.csv")
    return tmp_path


def test_it_reports_bad_labels_with_file_and_line_and_changes_nothing(validation_dataset, tmp_path):
    folder = copy_of_validation(tmp_path, "Hindi", "Tamil")
    text = (folder / "Tamil.csv").read_text(encoding="utf-8")
    lines = text.split("\n")
    # Line 4 of the file is the third data row; its last field is expert_2.
    lines[3] = lines[3].rsplit(",", 1)[0] + ",Mostly Agree"
    (folder / "Tamil.csv").write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(CommandError) as error:
        run(folder)
    assert "Tamil.csv, line 4, expert_2: 'Mostly Agree' is not one of" in str(error.value)
    assert counts() == (0, 0, 0)


def test_it_refuses_judgements_that_contradict_an_earlier_import_and_rolls_back_every_language(
    validation_dataset, tmp_path
):
    run(VALIDATION_DIR)
    before = counts()
    folder = copy_of_validation(tmp_path, "Bengali", "Hindi")
    text = (folder / "Hindi.csv").read_text(encoding="utf-8")
    lines = text.split("\n")
    row = lines[1]
    assert row.endswith("Completely Agree,Partially Agree")
    lines[1] = row.removesuffix("Partially Agree") + "Do Not Agree"
    (folder / "Hindi.csv").write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(CommandError, match=r"Hindi\.csv, line 2, expert_2: 'Do Not Agree' contradicts"):
        run(folder)
    assert counts() == before


def test_it_refuses_a_translation_that_differs_from_the_stored_item(tmp_path, db):
    dataset = load_validation_items(("Hindi",))
    item = dataset.items.get(language_id="hin", item_id=5)
    item.persona = item.persona + " (edited)"
    item.save()
    folder = copy_of_validation(tmp_path, "Hindi")
    with pytest.raises(CommandError, match=r"Hindi\.csv, line 6: the translation differs from item 5"):
        run(folder, "--dataset", dataset.slug)
    assert counts() == (0, 0, 0)
