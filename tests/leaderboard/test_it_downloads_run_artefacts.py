"""Per-query rank files listed in a run's details are downloadable through the default storage; nothing else is."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import reverse

from tests.factories import make_dataset, make_run

pytestmark = pytest.mark.django_db


def save_ranks(name: str, ranks: np.ndarray) -> str:
    """Store a rank file the way the engine does (a compressed .npz through the default storage)."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, query_item_ids=np.arange(1, len(ranks) + 1), ranks=ranks)
    return default_storage.save(f"runs/test/{name}.npz", ContentFile(buffer.getvalue()))


def test_it_serves_listed_rank_files_only(client):
    ranks = np.array([1, 4, 2, 50000], dtype=np.int32)
    path = save_ranks("ranks-t1-hin", ranks)
    pair_path = save_ranks("ranks-t2-hin-tam", ranks[::-1].copy())
    listed = [
        {"task": "t1", "source": "hin", "target": None, "path": path},
        {"task": "t2", "source": "hin", "target": "tam", "path": pair_path},
    ]
    run = make_run(make_dataset(), "org/alpha", details={"ranks": listed})

    page = client.get(reverse("leaderboard:run_detail", args=[run.pk])).content.decode()
    url = reverse("leaderboard:run_artefact", args=[run.pk, "ranks-t1-hin"])
    assert url in page and reverse("leaderboard:run_artefact", args=[run.pk, "ranks-t2-hin-tam"]) in page

    response = client.get(url)
    assert response.status_code == 200
    assert f"run{run.pk}-ranks-t1-hin" in response["Content-Disposition"]
    downloaded = np.load(io.BytesIO(b"".join(response.streaming_content)))
    assert downloaded["ranks"].tolist() == ranks.tolist()
    # All of them at once: one zip, each file under its listed name.
    archive = client.get(reverse("leaderboard:run_artefact_archive", args=[run.pk]))
    assert archive.status_code == 200 and archive["Content-Type"] == "application/zip"
    bundle = zipfile.ZipFile(io.BytesIO(archive.content))
    assert sorted(bundle.namelist()) == [f"run{run.pk}/ranks-t1-hin.npz", f"run{run.pk}/ranks-t2-hin-tam.npz"]
    assert np.load(io.BytesIO(bundle.read(f"run{run.pk}/ranks-t1-hin.npz")))["ranks"].tolist() == ranks.tolist()
    default_storage.delete(pair_path)

    # Only names the run lists resolve; a path is never taken from the URL.
    assert client.get(reverse("leaderboard:run_artefact", args=[run.pk, "secrets"])).status_code == 404
    assert client.get(f"/results/{run.pk}/files/..%2F..%2Fsettings.py").status_code == 404
    default_storage.delete(path)
    assert client.get(url).status_code == 404
