"""Columns and task pages with no value on the shown version say so in one sentence instead of rows of dashes."""

from __future__ import annotations

import pytest

from evaluation.models import Run
from tests.factories import make_dataset, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def published_only():
    dataset = make_dataset("nirdesha", "1.0")
    for name, level in (("org/alpha", 0.5), ("org/beta", 0.3)):
        make_run(dataset, name, level=level, origin=Run.Origin.PUBLISHED, tasks=("t1", "t2", "t3", "t3x"))
    return dataset


def test_a_task_no_shown_model_has_is_one_sentence(client, published_only):
    page = client.get("/tasks/t5/").content.decode()
    assert "No model shown on nirdesha 1.0 has T5 results: its runs are the reference's published results" in page
    assert "task-table" not in page


def test_the_overview_hides_a_column_without_values_and_says_why(client, published_only):
    # A re-run on the version has T4; the published runs shown by the search have none of it.
    make_run(published_only, "org/gamma", level=0.2)
    page = client.get("/?q=org/alpha").content.decode()
    assert "T4 AUROC is hidden: no model shown has a value on this version (not covered)." in page
    assert "T4 ECE is hidden: no model shown has a value on this version (reference ECE not comparable)." in page
    assert ">T4 AUROC</a>" not in page and ">T1 mono R@1</a>" in page
    assert ">T4 AUROC</a>" in client.get("/").content.decode()


def test_a_task_with_values_shows_its_tables(client, published_only):
    page = client.get("/tasks/t1/").content.decode()
    assert "task-table" in page and "empty-task" not in page
