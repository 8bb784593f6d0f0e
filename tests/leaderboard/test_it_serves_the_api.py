"""The read API: models, runs, scores with filters, the leaderboard table, datasets, schema and docs."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluation.models import Run
from tests.factories import make_dataset, make_run
from tests.people import make_researcher

pytestmark = pytest.mark.django_db


def all_results(client, url: str) -> list[dict]:
    results = []
    while url:
        body = client.get(url).json()
        results += body["results"]
        url = body["next"]
    return results


def test_it_filters_scores_and_reproduces_the_published_average(client, published):
    rows = all_results(
        client, "/api/scores/?model=intfloat/multilingual-e5-large-instruct&task=t1&metric=recall@1&limit=5"
    )
    assert len(rows) == 12
    assert round(100 * sum(row["value"] for row in rows) / 12, 1) == 27.4
    assert {row["target"] for row in rows} == {None}

    pairs = client.get("/api/scores/?model=BAAI/bge-m3&task=t2&metric=recall@1&source=hin").json()
    assert pairs["count"] == 11 and all(row["source"] == "hin" and row["target"] for row in pairs["results"])
    monolingual = client.get("/api/scores/?model=BAAI/bge-m3&monolingual=true&metric=recall@1").json()
    assert monolingual["count"] == 24  # T1 and T3, 12 languages each


def test_it_lists_only_finished_runs(client, published):
    failed = Run.objects.create(model=Run.objects.first().model, dataset=published, status=Run.Status.FAILED)
    runs = all_results(client, "/api/runs/")
    assert len(runs) == 8 and failed.pk not in {run["id"] for run in runs}
    assert client.get(f"/api/runs/{failed.pk}/").status_code == 404
    detail = client.get(f"/api/runs/{runs[0]['id']}/").json()
    assert detail["manifest"]["origin"] == "published"
    assert detail["page"] == reverse("leaderboard:run_detail", args=[runs[0]["id"]])
    assert len(all_results(client, "/api/models/")) == 8


def test_it_serves_the_leaderboard_table_with_the_page_filters(client, published):
    body = client.get("/api/leaderboard/?languages=hin").json()
    assert body["benchmark"] == "nirdesha 1.0" and body["languages"] == ["hin"]
    # On Hindi, models whose Wilson intervals overlap share a rank band (3rd–4th, 6th–8th).
    assert [row["rank_best"] for row in body["rows"]] == [1, 2, 3, 3, 5, 6, 6, 6]
    assert body["rows"][2]["model"] == "paraphrase-multilingual-mpnet-base-v2"
    assert "each model declares" in body["averaging"] and "Wilson" in body["intervals"]
    everything = client.get("/api/leaderboard/").json()
    e5 = next(row for row in everything["rows"] if row["model"] == "E5-Large-Instruct")
    assert round(100 * e5["t1_recall@1"], 1) == 27.4 and e5["t1_recall@1_covered"] == 12
    # A value the schema does not allow is refused, naming the parameter (the page shows the board anyway).
    bad = client.get("/api/leaderboard/?languages=zzz")
    assert bad.status_code == 400 and "languages" in bad.json()


def test_it_describes_datasets_and_their_agreement(client, published):
    validation = make_dataset()
    make_run(validation, "org/tiny", display_name="Tiny")
    datasets = {row["name"]: row for row in client.get("/api/datasets/").json()["results"]}
    assert datasets["nirdesha"]["declared_pool_size"] == 50_000 and datasets["nirdesha"]["finished_runs"] == 8
    assert datasets["nirdesha-validation"]["finished_runs"] == 1
    agreement = client.get(f"/api/datasets/{published.pk}/agreement/")
    assert agreement.status_code == 200 and agreement.json() == []


def test_it_is_read_only(client, published):
    client.force_login(make_researcher())
    for url in ("/api/scores/", "/api/runs/", "/api/models/", "/api/datasets/"):
        assert client.post(url, {"value": 1}, content_type="application/json").status_code == 405
    assert client.delete("/api/scores/1/").status_code == 405


def test_it_publishes_a_schema_and_local_docs(client):
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    text = schema.content.decode()
    for path in ("/api/leaderboard/", "/api/scores/", "/api/runs/{id}/", "/api/datasets/{id}/agreement/"):
        assert path in text
    docs = client.get("/api/docs/").content.decode()
    assert '<script src="/api/docs/redoc/bundles/redoc.standalone.js">' in docs
    assert "cdn." not in docs and "fonts.googleapis" not in docs
    # The bundle is the sidecar's own Redoc, served here without the logo it would fetch from Redocly's CDN.
    bundle = client.get("/api/docs/redoc/bundles/redoc.standalone.js").content
    assert b"Redoc" in bundle and len(bundle) > 500_000 and b"cdn.redoc.ly" not in bundle
    # The quick start comes first, and the operations are grouped by what a researcher does first.
    schema_json = client.get("/api/schema/?format=json").json()
    assert "## Quick start" in schema_json["info"]["description"]
    assert [tag["name"] for tag in schema_json["tags"]][:2] == ["submissions", "leaderboard"]
