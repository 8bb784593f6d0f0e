"""A finished run, or an import, announces results_changed once; the page cache is bumped once for it."""

from __future__ import annotations

import ast

import pytest
from django.core.management import call_command

from evaluation.models import Run
from evaluation.signals import results_changed
from leaderboard.cache import current_generation
from tests.data import REPO_ROOT
from tests.validation import create_validation_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture
def announcements():
    heard: list[tuple[type, dict]] = []

    def listen(sender, signal, **identifiers):
        heard.append((sender, identifiers))

    results_changed.connect(listen)
    yield heard
    results_changed.disconnect(listen)


def test_it_bumps_the_cache_once_when_a_run_evaluated_from_the_command_line_finishes(
    announcements, django_capture_on_commit_callbacks
):
    dataset = create_validation_dataset(("Hindi", "Tamil"), limit=20)
    before = current_generation()

    with django_capture_on_commit_callbacks(execute=True):
        call_command("evaluate", "--model", "bm25", "--dataset", dataset.slug, "--tasks", "t1")

    run = Run.objects.get()
    assert run.status == Run.Status.DONE
    assert announcements == [(Run, {"run": run, "build_ahead": True})]
    assert current_generation() == before + 1


def test_it_says_nothing_when_a_run_fails(announcements, django_capture_on_commit_callbacks):
    dataset = create_validation_dataset(("Hindi",), limit=20)
    before = current_generation()

    with django_capture_on_commit_callbacks(execute=True), pytest.raises(Exception, match="Gujarati"):
        call_command("evaluate", "--model", "bm25", "--dataset", dataset.slug, "--languages", "guj")

    # The command refuses a language the version lacks before it writes anything: no run, no refresh.
    assert not Run.objects.exists()
    assert announcements == []
    assert current_generation() == before


def test_it_bumps_the_cache_once_per_import(announcements, django_capture_on_commit_callbacks):
    before = current_generation()
    with django_capture_on_commit_callbacks(execute=True):
        dataset = create_validation_dataset(("Hindi",), limit=20)
    assert [sender.__name__ for sender, _ in announcements] == ["Dataset"]
    assert announcements[0][1] == {"dataset": dataset}
    assert current_generation() == before + 1


def test_no_producer_imports_the_leaderboard_cache():
    """The producers announce; only the leaderboard app knows that a cache exists."""
    importers = []
    for package in ("evaluation", "annotation", "accounts"):
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
                if any(name.startswith("leaderboard.cache") for name in names):
                    importers.append(str(path.relative_to(REPO_ROOT)))
    assert importers == []
