"""`manage.py evaluate` on bad input: refused in one line before anything is written, exit status 1.

Every case counts the rows of every project table before and after: a refusal leaves no QUEUED or
FAILED run, no model row, nothing.
"""

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command

from evaluation.models import Item, Run, Score
from tests.fakes.hub import closed_port_url, running_fake_hub
from tests.validation import create_validation_dataset

pytestmark = pytest.mark.django_db


def row_counts() -> dict[str, int]:
    """The number of rows of every table of the project's own apps."""
    return {
        model._meta.label: model.objects.count()
        for app in ("evaluation", "leaderboard", "annotation", "accounts")
        if apps.is_installed(app)
        for model in apps.get_app_config(app).get_models()
    }


def refused(*arguments: str) -> str:
    """The one-line refusal of `manage.py evaluate ARGUMENTS`, checking that nothing was written."""
    before = row_counts()
    with pytest.raises(CommandError) as raised:
        call_command("evaluate", *arguments)
    assert row_counts() == before
    message = str(raised.value)
    assert "\n" not in message
    return message


@pytest.fixture
def online(monkeypatch):
    """The Hub code paths switched on (the engine tests run offline)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)


def test_it_refuses_a_model_folder_that_does_not_exist_or_is_not_a_model(tmp_path, monkeypatch):
    dataset = create_validation_dataset(("Hindi",), limit=20)
    message = refused("--model", str(tmp_path / "nowhere"), "--dataset", dataset.slug)
    assert message == f"There is no model folder at {tmp_path / 'nowhere'}: the path does not exist on this machine."
    # A relative path is a path too, not a Hub id to look up.
    monkeypatch.chdir(tmp_path)
    assert "There is no model folder at" in refused("--model", "./nowhere", "--dataset", dataset.slug)

    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("not a model", encoding="utf-8")
    message = refused("--model", str(tmp_path / "notes"), "--dataset", dataset.slug)
    assert "There is no config.json or modules.json" in message


def test_it_refuses_a_language_the_dataset_does_not_have():
    dataset = create_validation_dataset(("Hindi", "Tamil"), limit=20)
    message = refused("--model", "bm25", "--dataset", dataset.slug, "--languages", "hin,guj")
    assert message == "nirdesha-validation test has no items in Gujarati (guj). Nothing was run."
    assert "Unknown language" in refused("--model", "bm25", "--dataset", dataset.slug, "--languages", "xx")


def test_it_refuses_items_with_empty_text():
    dataset = create_validation_dataset(("Hindi", "Tamil"), limit=20)
    Item.objects.filter(dataset=dataset, language="tam", item_id__in=[3, 7]).update(instruction="  ")
    assert "tam has items with an empty persona or instruction: 3, 7" in refused("--model", "bm25")


def test_it_refuses_item_ids_that_are_not_aligned_across_languages():
    dataset = create_validation_dataset(("Hindi", "Tamil"), limit=20)
    Item.objects.filter(dataset=dataset, language="tam", item_id=5).delete()
    message = refused("--model", "bm25", "--dataset", dataset.slug)
    assert "item ids are not aligned across languages" in message and "missing from tam: 5" in message


def test_it_refuses_diagnostics_without_english_originals():
    dataset = create_validation_dataset(("Hindi", "Tamil"), limit=20, with_english=False)
    assert refused("--model", "bm25", "--dataset", dataset.slug, "--tasks", "t1,multi") == (
        "Task multi cannot run on this selection: it needs English originals aligned with the translated items. "
        "Nothing was run."
    )


def test_it_refuses_unknown_tasks_and_datasets():
    create_validation_dataset(("Hindi",), limit=20)
    assert refused("--model", "bm25", "--tasks", "t1,t9").startswith("Unknown task(s) t9")
    assert refused("--model", "bm25", "--dataset", "nirdesha@9").startswith("No dataset 'nirdesha@9'")


def test_it_refuses_a_dataset_version_given_as_djangos_version_option():
    dataset = create_validation_dataset(("Hindi",), limit=20)
    message = refused("--model", "bm25", "--dataset", dataset.name, "--version", dataset.version)
    assert "--version prints Django's version" in message and "--dataset NAME@VERSION" in message


def test_it_refuses_a_model_the_hub_does_not_have(online, settings):
    dataset = create_validation_dataset(("Hindi",), limit=20)
    with running_fake_hub() as hub:
        settings.HF_ENDPOINT = hub.url
        message = refused("--model", "nirdesha-tests/absent", "--dataset", dataset.slug)
    assert message == "There is no public model 'nirdesha-tests/absent' on the Hugging Face Hub."


def test_it_says_in_one_line_that_the_hub_cannot_be_reached(online, settings):
    dataset = create_validation_dataset(("Hindi",), limit=20)
    settings.HF_ENDPOINT = closed_port_url()
    message = refused("--model", "nirdesha-tests/model", "--dataset", dataset.slug)
    assert message == "Cannot reach the Hugging Face Hub right now; please try again later."


def test_it_exits_with_one_line_and_no_traceback_from_the_command_line(online, settings, capsys, monkeypatch):
    from evaluation.management.commands.evaluate import Command

    dataset = create_validation_dataset(("Hindi",), limit=20)
    settings.HF_ENDPOINT = closed_port_url()
    # run_from_argv closes the database connections as it ends, which here hold the test's transaction.
    monkeypatch.setattr("django.db.connections.close_all", lambda: None)
    with pytest.raises(SystemExit) as exited:
        Command().run_from_argv(["manage.py", "evaluate", "--model", "nirdesha-tests/model", "--dataset", dataset.slug])
    assert exited.value.code == 1
    error = capsys.readouterr().err
    assert error.strip() == "CommandError: Cannot reach the Hugging Face Hub right now; please try again later."
    assert not Run.objects.exists()


def test_it_refuses_to_evaluate_the_same_model_commit_twice_on_one_dataset():
    dataset = create_validation_dataset(("Hindi", "Tamil"), limit=20)
    call_command("evaluate", "--model", "bm25", "--dataset", dataset.slug, "--tasks", "t1")
    first = Run.objects.get()
    message = refused("--model", "bm25", "--dataset", dataset.slug, "--tasks", "t1")
    assert f"already evaluated on {dataset.slug} by run {first.pk}" in message
    assert Score.objects.filter(run=first).count() == 2 * 4
