"""Data migration evaluation/0009: a published run's manifest names its folder, not the server's path."""

import importlib

import pytest
from django.apps import apps

from evaluation.models import Run
from tests.factories import make_dataset, make_run

migration = importlib.import_module("evaluation.migrations.0009_published_manifest_source_name")


@pytest.mark.django_db
def test_it_keeps_only_the_folder_name_of_a_published_source():
    dataset = make_dataset()
    published = make_run(dataset, "org/published", origin=Run.Origin.PUBLISHED)
    rerun = make_run(dataset, "org/rerun")
    old = {"origin": "published", "source": "/srv/data/published-results/"}
    Run.objects.filter(pk=published.pk).update(manifest=old)
    Run.objects.filter(pk=rerun.pk).update(manifest={"source": "/kept/as/is"})

    migration.keep_folder_name(apps, None)

    published.refresh_from_db()
    rerun.refresh_from_db()
    assert published.manifest == {"origin": "published", "source": "published-results"}
    assert rerun.manifest == {"source": "/kept/as/is"}
    # Run twice, it changes nothing more.
    migration.keep_folder_name(apps, None)
    published.refresh_from_db()
    assert published.manifest["source"] == "published-results"
