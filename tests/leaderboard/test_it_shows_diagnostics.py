"""The diagnostics tab: English-preference rate, Max@R (normalised) and Complete@10 per model and language."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from evaluation.engine.registry import metric
from evaluation.models import Dataset, Run, Score
from tests.data import VALIDATION_DIR, require_shared_data
from tests.leaderboard.html import tables

# Two real evaluations: a long cross-check, the slow tier (README, "The tests come in tiers").
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def evaluated() -> Dataset:
    require_shared_data(VALIDATION_DIR)
    quiet = {"stdout": StringIO(), "stderr": StringIO()}
    call_command("import_dataset", str(VALIDATION_DIR), **quiet)
    dataset = Dataset.objects.get(name="nirdesha-validation")
    for model in ("bm25", "tfidf-char"):
        call_command("evaluate", "--model", model, "--dataset", dataset.slug, "--languages", "hin,urd", **quiet)
    return dataset


def test_it_compares_models_on_the_multi_reference_diagnostics(client, evaluated):
    response = client.get(reverse("leaderboard:diagnostics") + f"?dataset={evaluated.pk}")
    assert response.status_code == 200
    html = response.content.decode()
    assert "English inclination" in html and "rank unrelated English documents above" in html
    found = [table for name, table in tables(html).items() if name.startswith("table-")]
    assert len(found) == 3
    # Each table shows the engine's stored value in the registry's format, per model and language.
    for table, name in zip(found, ("english_preference", "max@r_norm", "complete@10"), strict=True):
        header = table[0]
        assert header[1:3] == ["Hindi", "Urdu"] and header[-1] == "Mean"
        for row in table[1:]:
            # The model's name, then the origin badge that leads to its run.
            label, origin = row[0].rsplit(" ", 1)
            run = Run.objects.get(model__display_name=label)
            assert origin == ("published" if run.is_published else "re-run")
            stored = Score.objects.get(run=run, task="multi", metric=name, source_id="hin", target=None).value
            assert row[1] == metric(name).format(stored)
        assert len(table) == 3
