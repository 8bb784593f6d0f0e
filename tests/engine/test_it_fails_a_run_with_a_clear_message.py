"""`manage.py evaluate` on bad input: a FAILED run with a readable message and no partial scores."""

import pytest
from django.core.management import CommandError, call_command

from evaluation.models import Item, Run, Score
from tests.validation import create_validation_dataset

pytestmark = pytest.mark.django_db


def evaluate_expecting_failure(*arguments: str) -> tuple[Run, str]:
    with pytest.raises(CommandError) as raised:
        call_command("evaluate", *arguments)
    run = Run.objects.order_by("-pk").first()
    assert run is not None and run.status == Run.Status.FAILED
    assert run.finished_at is not None
    assert not Score.objects.filter(run=run).exists()
    assert run.message in str(raised.value)
    return run, run.message


def test_it_fails_for_a_model_folder_that_does_not_exist_or_is_not_a_model(tmp_path):
    dataset = create_validation_dataset(("Hindi",), limit=20)
    run, message = evaluate_expecting_failure("--model", str(tmp_path / "nowhere"), "--dataset", dataset.slug)
    assert "does not exist" in message and run.failure_category == Run.FailureCategory.SUBMITTER

    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("not a model", encoding="utf-8")
    run, message = evaluate_expecting_failure("--model", str(tmp_path / "notes"), "--dataset", dataset.slug)
    assert "There is no config.json or modules.json" in message
    assert run.failure_category == Run.FailureCategory.SUBMITTER


def test_it_fails_for_a_language_the_dataset_does_not_have():
    dataset = create_validation_dataset(("Hindi", "Tamil"), limit=20)
    _, message = evaluate_expecting_failure("--model", "bm25", "--dataset", dataset.slug, "--languages", "hin,guj")
    assert message == "The dataset cannot be evaluated: nirdesha-validation test has no items in Gujarati (guj)."


def test_it_fails_for_items_with_empty_text():
    dataset = create_validation_dataset(("Hindi", "Tamil"), limit=20)
    Item.objects.filter(dataset=dataset, language="tam", item_id__in=[3, 7]).update(instruction="  ")
    _, message = evaluate_expecting_failure("--model", "bm25", "--dataset", dataset.slug)
    assert "tam has items with an empty persona or instruction: 3, 7" in message


def test_it_fails_for_item_ids_that_are_not_aligned_across_languages():
    dataset = create_validation_dataset(("Hindi", "Tamil"), limit=20)
    Item.objects.filter(dataset=dataset, language="tam", item_id=5).delete()
    run, message = evaluate_expecting_failure("--model", "bm25", "--dataset", dataset.slug)
    assert "item ids are not aligned across languages" in message
    assert "missing from tam: 5" in message
    assert run.failure_category == Run.FailureCategory.OURS


def test_it_fails_for_diagnostics_without_english_originals():
    dataset = create_validation_dataset(("Hindi", "Tamil"), limit=20, with_english=False)
    _, message = evaluate_expecting_failure("--model", "bm25", "--dataset", dataset.slug, "--tasks", "t1,multi")
    assert message == (
        "The dataset cannot be evaluated: "
        "Task multi cannot run on this selection: it needs English originals aligned with the translated items."
    )


def test_it_refuses_unknown_tasks_and_datasets_before_creating_a_run():
    create_validation_dataset(("Hindi",), limit=20)
    with pytest.raises(CommandError, match="Unknown task"):
        call_command("evaluate", "--model", "bm25", "--tasks", "t1,t9")
    with pytest.raises(CommandError, match="No dataset 'nirdesha@9'"):
        call_command("evaluate", "--model", "bm25", "--dataset", "nirdesha@9")
    assert not Run.objects.exists()


def test_it_refuses_to_evaluate_the_same_model_commit_twice_on_one_dataset():
    dataset = create_validation_dataset(("Hindi", "Tamil"), limit=20)
    call_command("evaluate", "--model", "bm25", "--dataset", dataset.slug, "--tasks", "t1")
    first = Run.objects.get()
    run, message = evaluate_expecting_failure("--model", "bm25", "--dataset", dataset.slug, "--tasks", "t1")
    assert f"already evaluated on {dataset.slug} by run {first.pk}" in message
    assert run.failure_category == Run.FailureCategory.SUBMITTER
    assert Score.objects.filter(run=first).count() == 2 * 4
