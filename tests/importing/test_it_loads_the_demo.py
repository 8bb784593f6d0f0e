"""manage.py load_demo: the demo sample shipped with the site."""

from __future__ import annotations

import csv
import json
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Rating
from evaluation.engine.languages import BY_CODE, dominant_script
from evaluation.models import Dataset, Item, Run, Score
from tests.data import VALIDATION_DIR, VALIDATION_LANGUAGES, require_shared_data

pytestmark = pytest.mark.django_db
DEMO_LANGUAGES = ("ben", "eng", "hin", "mar", "tam", "urd")


def load_demo(*options: str) -> str:
    out = StringIO()
    call_command("load_demo", *options, stdout=out, stderr=StringIO())
    return out.getvalue()


def load_demo_sample_only() -> str:
    return load_demo("--no-shared", "--no-baselines")


def test_it_loads_36_parallel_items_in_six_languages_labelled_as_a_demo():
    output = load_demo_sample_only()
    dataset = Dataset.objects.get()
    assert (dataset.name, dataset.version, dataset.is_demo) == ("nirdesha-demo", "demo-1", True)
    assert "Imported nirdesha-demo demo-1: 216 items" in output
    assert dataset.item_counts_by_language() == dict.fromkeys(DEMO_LANGUAGES, 36)
    for code in DEMO_LANGUAGES:
        assert set(dataset.items.filter(language_id=code).values_list("item_id", flat=True)) == set(range(1, 37))
    assert dataset.description.startswith("Demo sample — not the Nirdesha benchmark")
    assert dataset.provenance.startswith("Demo sample — not the Nirdesha benchmark")
    assert dataset.license == "Apache-2.0" and dataset.source == "evaluation/demo"
    assert str(dataset) == "nirdesha-demo demo-1 (demo)"


def test_it_does_nothing_the_second_time():
    load_demo_sample_only()
    before = list(Dataset.objects.values_list()), list(Item.objects.order_by("pk").values_list())
    assert load_demo_sample_only().strip() == "nirdesha-demo demo-1 is already imported, nothing changed."
    assert (list(Dataset.objects.values_list()), list(Item.objects.order_by("pk").values_list())) == before


def test_its_text_is_in_each_language_own_script_with_varied_descriptions():
    load_demo_sample_only()
    for item in Item.objects.all():
        expected = BY_CODE[item.language_id].script
        assert dominant_script(item.persona) == expected, item
        assert dominant_script(item.instruction) == expected, item
    urdu = Item.objects.filter(language_id="urd").first()
    assert dominant_script(urdu.instruction) == "Arab"
    descriptions = set(Item.objects.values_list("description", flat=True))
    assert {"persona-driven synthesis", "2-shot instruction data synthesis"} <= descriptions
    lengths = [len(text) for text in Item.objects.filter(language_id="eng").values_list("instruction", flat=True)]
    assert max(lengths) > 2 * min(lengths)


def test_its_text_is_our_own_and_not_copied_from_the_shared_data():
    require_shared_data(VALIDATION_DIR)
    load_demo_sample_only()
    shared: set[str] = set()
    for name in VALIDATION_LANGUAGES:
        with (VALIDATION_DIR / f"{name}.csv").open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                for column in ("ENG_indian_context", "indian_context"):
                    record = json.loads(row[column])
                    shared.update((record["indian_context_persona"], record["indian_context_instruction"]))
    demo_items = Item.objects.filter(dataset__is_demo=True)
    ours = set(demo_items.values_list("persona", flat=True)) | set(demo_items.values_list("instruction", flat=True))
    assert not ours & shared


@pytest.mark.slow
def test_it_gives_a_fresh_site_baseline_runs_the_validation_sample_and_the_published_results():
    require_shared_data(VALIDATION_DIR)
    load_demo()
    demo = Dataset.objects.get(is_demo=True)
    baseline_runs = Run.objects.finished().filter(dataset=demo)
    assert sorted(baseline_runs.values_list("model__name", flat=True)) == ["bm25", "tfidf-char"]
    assert Score.objects.filter(run__in=baseline_runs, task="t1", metric="recall@1").count() == 2 * 5
    validation = Dataset.objects.get(name="nirdesha-validation")
    assert validation.item_counts_by_language() == dict.fromkeys(DEMO_LANGUAGES, 150)
    assert Rating.objects.filter(campaign_item__campaign__dataset=validation).count() == 5 * 150 * 2
    assert Run.objects.published().finished().count() == 8

    counts = Run.objects.count(), Score.objects.count(), Item.objects.count(), Rating.objects.count()
    load_demo()
    assert (Run.objects.count(), Score.objects.count(), Item.objects.count(), Rating.objects.count()) == counts
