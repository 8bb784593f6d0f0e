"""A run's artefact archive follows the one visibility rule of runs, like each of its files."""

from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.test import Client

from evaluation.models import Run
from tests.factories import make_dataset, make_run
from tests.people import make_admin, make_outsider, make_researcher

pytestmark = pytest.mark.django_db


def failed_run_with_ranks(owner) -> Run:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, ranks=np.arange(1, 5000, dtype=np.int32))
    path = default_storage.save("runs/test/ranks-t1-hin.npz", ContentFile(buffer.getvalue()))
    ranks = [{"task": "t1", "source": "hin", "target": None, "path": path}]
    run = make_run(make_dataset(), "org/secret", details={"ranks": ranks}, status=Run.Status.FAILED)
    Run.objects.filter(pk=run.pk).update(submitted_by=owner)
    return run


def client_of(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def test_it_answers_404_for_another_persons_private_archive_and_its_files():
    owner = make_researcher()
    run = failed_run_with_ranks(owner)
    for visitor in (None, make_outsider()):
        client = client_of(visitor)
        assert client.get(f"/results/{run.pk}/artefacts.zip").status_code == 404
        assert client.get(f"/results/{run.pk}/files/ranks-t1-hin").status_code == 404


def test_it_serves_the_private_archive_to_its_submitter_and_staff():
    owner = make_researcher()
    run = failed_run_with_ranks(owner)
    for person in (owner, make_admin()):
        response = client_of(person).get(f"/results/{run.pk}/artefacts.zip")
        assert response.status_code == 200 and response["Content-Type"] == "application/zip"
