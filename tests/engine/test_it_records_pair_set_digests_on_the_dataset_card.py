"""`manage.py evaluate`: the first run on a dataset version builds and stores its T4 pair sets and writes
their digests on the dataset; a run of another model reads them (and their dev calibration folds) and builds
none."""

import pytest
from django.core.management import call_command

from evaluation.engine import DEFAULT_SEED, pairs
from evaluation.models import Dataset, Run
from tests.validation import create_validation_dataset

pytestmark = pytest.mark.django_db


def test_a_second_model_reads_the_stored_pair_sets_whose_digests_are_on_the_card(settings, tmp_path):
    settings.PAIR_SET_DIR = tmp_path / "pair-sets"
    dataset = create_validation_dataset(("Hindi", "Tamil"))

    call_command("evaluate", "--model", "bm25", "--dataset", dataset.slug, "--tasks", "t4")
    store = pairs.current_store()
    assert store is not None and store.root == settings.PAIR_SET_DIR
    # Two languages: a pair set and its dev calibration folds each.
    assert store.stats.built == 4 and store.stats.loaded == 0
    spent = store.stats.build_seconds

    call_command("evaluate", "--model", "tfidf-char", "--dataset", dataset.slug, "--tasks", "t4")
    assert store.stats.built == 4 and store.stats.loaded == 4
    assert store.stats.build_seconds == spent

    first, second = Run.objects.order_by("pk")
    assert first.status == second.status == Run.Status.DONE
    digests = first.manifest["t4"]["pair_set_digests"]
    assert second.manifest["t4"]["pair_set_digests"] == digests
    assert Dataset.objects.get(pk=dataset.pk).pair_set_digests == {str(DEFAULT_SEED): digests}
    pairs.use_store(None)
