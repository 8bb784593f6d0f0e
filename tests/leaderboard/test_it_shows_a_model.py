"""A model's own page: every run on every version, its languages and figures, and links to compare it."""

from __future__ import annotations

import re

import pytest

from evaluation.models import EmbeddingModel, Run
from leaderboard.slugs import model_slug
from tests.factories import make_dataset, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_versions():
    """Alpha published and re-run on one version and re-run on a second; three other models on the first."""
    first, second = make_dataset(version="1.0"), make_dataset(version="2.0")
    runs = {
        "published": make_run(first, "org/alpha", level=0.30, origin=Run.Origin.PUBLISHED, ci=None),
        "rerun": make_run(first, "org/alpha", level=0.30),
        "second": make_run(second, "org/alpha", level=0.32),
        "beta": make_run(first, "org/beta", level=0.45),
        "gamma": make_run(first, "org/gamma", level=0.20),
        "delta": make_run(first, "org/delta", level=0.60, origin=Run.Origin.PUBLISHED, ci=None),
    }
    EmbeddingModel.objects.filter(name="org/alpha").update(
        declared_languages=["hin", "mar", "ben", "tam", "urd"], parameter_count=10**8
    )
    return first, second, runs


def test_it_gives_a_model_an_address_from_its_public_name():
    assert model_slug("BAAI/bge-m3") == "baai--bge-m3"
    assert model_slug("intfloat/multilingual-e5-large-instruct") == "intfloat--multilingual-e5-large-instruct"


def test_it_shows_a_rerun_models_runs_on_each_version(client, two_versions):
    _, _, runs = two_versions
    page = client.get("/models/org--alpha/").content.decode()
    # Every run, published and re-run, on both versions, with its engine version and revision.
    for run in (runs["published"], runs["rerun"], runs["second"]):
        assert f'data-run="{run.pk}" data-dataset="{run.dataset_id}"' in page
    assert runs["rerun"].resolved_commit[:12] in page and runs["rerun"].engine_version in page
    assert page.count('class="version-standing"') == 2
    assert "Declared languages (5): Hindi, Marathi, Bengali, Tamil, Urdu" in page
    # Its per-task figures with their intervals, and per language.
    assert re.search(r'<table class="data model-tasks">.*?<span class="ci">\[', page, re.S)
    assert 'id="model-languages-table"' in page and '<th scope="row">Hindi</th>' in page
    # Its error analysis, for the runs that have per-query data (the factory's runs list no rank files).
    assert "no per-query data" in page


def test_it_links_to_compare_with_the_nearest_models_on_the_board(client, two_versions):
    first, _, runs = two_versions
    page = client.get("/models/org--alpha/").content.decode()
    [href] = re.findall(r'<a class="compare-neighbours" href="([^"]+)"', page.split(f'data-dataset="{first.pk}"')[1])
    href = href.replace("&amp;", "&")
    ids = [int(value) for value in re.findall(r"runs=(\d+)", href)]
    # Alpha's re-run (the run its board shows) and the models just above and below it.
    assert ids == [runs["rerun"].pk, runs["beta"].pk, runs["gamma"].pk]
    compared = client.get(href).content.decode()
    assert all(f'<tr data-run="{pk}">' in compared for pk in ids)


def test_it_shows_a_published_model(client, two_versions):
    _, _, runs = two_versions
    page = client.get("/models/org--delta/").content.decode()
    assert f'data-run="{runs["delta"].pk}"' in page and "published" in page and "none recorded" in page
    assert 'class="compare-neighbours"' in page and f"runs={runs['delta'].pk}" in page


def test_it_answers_404_for_an_address_that_names_no_model(client, two_versions):
    assert client.get("/models/org--nobody/").status_code == 404
    make_run(make_dataset(version="3.0"), "org/queued", status=Run.Status.QUEUED)
    assert client.get("/models/org--queued/").status_code == 404


def test_it_links_every_board_row_to_its_model(client, two_versions):
    first, _, _ = two_versions
    board = client.get(f"/?dataset={first.pk}").content.decode()
    assert 'href="/models/org--alpha/"' in board and 'href="/models/org--beta/"' in board
