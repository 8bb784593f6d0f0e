"""Per-query rank files listed in a run's details are downloadable through the default storage; nothing else is."""

from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import reverse

from tests.leaderboard.factories import make_dataset, make_run

pytestmark = pytest.mark.django_db


def test_it_serves_listed_rank_files_only(client):
    ranks = np.array([1, 4, 2, 50000], dtype=np.int32)
    buffer = io.BytesIO()
    np.save(buffer, ranks)
    path = default_storage.save("runs/test/ranks-t1-hin.npy", ContentFile(buffer.getvalue()))
    run = make_run(make_dataset(), "org/alpha", details={"artefacts": {"ranks": {"t1-hin": path}}})

    page = client.get(reverse("leaderboard:run_detail", args=[run.pk])).content.decode()
    url = reverse("leaderboard:run_artefact", args=[run.pk, "artefacts-ranks-t1-hin"])
    assert url in page

    response = client.get(url)
    assert response.status_code == 200
    assert f"run{run.pk}-ranks-t1-hin.npy" in response["Content-Disposition"]
    downloaded = np.load(io.BytesIO(b"".join(response.streaming_content)))
    assert downloaded.tolist() == ranks.tolist()

    # Only names the run lists resolve; a path is never taken from the URL.
    assert client.get(reverse("leaderboard:run_artefact", args=[run.pk, "secrets"])).status_code == 404
    assert client.get(f"/results/{run.pk}/files/..%2F..%2Fsettings.py").status_code == 404
    default_storage.delete(path)
    assert client.get(url).status_code == 404
