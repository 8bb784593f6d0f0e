"""Every column of every download is in the one vocabulary (leaderboard.export_vocabulary), listed on a page."""

from __future__ import annotations

import csv
import io

import pytest

from evaluation.models import Run
from leaderboard.export_vocabulary import describe

pytestmark = pytest.mark.django_db


def headers(client, url: str) -> list[str]:
    response = client.get(url)
    assert response.status_code == 200, url
    body = response.content.decode("utf-8-sig")
    return next(csv.reader(io.StringIO(body)))


def test_it_documents_every_column_of_every_download(client, published):
    runs = list(Run.objects.filter(dataset__name="nirdesha").order_by("pk")[:2])
    compare = f"/compare/?runs={runs[0].pk}&runs={runs[1].pk}&format=csv"
    urls = [
        "/?format=csv",
        *[f"/tasks/{task}/?format=csv" for task in ("t1", "t2", "t3", "t3x", "t4")],
        "/crosslingual/?format=csv&table=pairs",
        "/crosslingual/?format=csv&table=models",
        "/crosslingual/?query_language=hin&document_language=tam&format=csv&table=pair_view",
        compare + "&table=compare",
        compare + "&table=differences",
        f"/results/{runs[0].pk}/?format=csv",
        "/models/intfloat--multilingual-e5-large-instruct/?format=csv",
    ]
    undocumented = {url: [h for h in headers(client, url) if describe(h) is None] for url in urls}
    assert not any(undocumented.values()), undocumented


def test_it_lists_the_vocabulary_with_the_overviews_columns(client, published):
    page = client.get("/exports/columns/").content.decode()
    for name in (
        "query_language",
        "document_language",
        "rank_best",
        "t1_recall@1",
        "t4_auroc_ci_low",
        "t2_recall@1_covered",
    ):
        assert f"<code>{name}</code>" in page, name
    overview = headers(client, "/?format=csv")
    assert all(f"<code>{name}</code>" in page for name in overview if not name.endswith("_as_shown")), overview
