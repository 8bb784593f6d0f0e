"""The run page: every score with its interval, bars, manifest, tokenizer coverage and the reproduce command."""

from __future__ import annotations

import csv
import io
import shlex

import pytest
from django.urls import reverse

from evaluation.models import Run
from tests.factories import make_dataset, make_run
from tests.leaderboard.html import tables
from tests.people import make_admin

pytestmark = pytest.mark.django_db

COVERAGE = {
    "Deva": {"texts": 6, "words": 80, "tokens": 168, "tokens_per_word": 2.1, "unk_rate": 0.0},
    "Arab": {"texts": 6, "words": 75, "tokens": 330, "tokens_per_word": 4.4, "unk_rate": 0.0412},
}


def test_it_shows_every_score_with_its_interval(client):
    dataset = make_dataset()
    run = make_run(dataset, "org/alpha", display_name="Alpha", level=0.3, details={"tokenizer_coverage": COVERAGE})
    page = client.get(reverse("leaderboard:run_detail", args=[run.pk])).content.decode()

    found = tables(page)
    # Headers are the registry's short labels (full names in their tooltips), values in one format.
    t1 = next(table for table in found.values() if table[0][:2] == ["Language", "R@1"])
    hindi = next(row for row in t1 if row[0] == "Hindi")
    assert hindi[1] == "30.0 [28.0, 32.0]"  # level 0.3, Hindi is the first language
    pairs = next(table for table in found.values() if table[0][0] == "Query → document")
    assert len(pairs) == 1 + 20 and pairs[1][0] == "Bengali → Hindi"  # languages in alphabetical order
    coverage = found["tokenizer-coverage"]
    assert coverage[0] == ["Script", "Tokens / word", "Unknown tokens", "Texts", "Words", "Tokens"]
    assert 'title="Recall@1: share of queries whose gold is ranked first (in %)"' in page
    assert coverage[1] == ["Arab", "4.4", "0.0412", "6", "75", "330"]
    assert 'data-figure="figure-run-bars"' in page
    # The command names the model, the resolved commit and the dataset version.
    command = next(line for line in page.splitlines() if "manage.py evaluate" in line)
    text = command.split("<code>")[1].split("</code>")[0].replace("&#x27;", "'")
    assert shlex.split(text)[2:] == [
        "evaluate",
        "--model",
        "org/alpha",
        "--revision",
        run.resolved_commit,
        "--dataset",
        "nirdesha-validation@150",
    ]
    assert "<dt>device</dt><dd>cpu</dd>" in page


def test_it_names_a_local_model_by_its_folder_not_the_servers_path(client):
    run = make_run(make_dataset(), "/srv/models/team/my-encoder", display_name="Mine")
    run.model.is_local = True
    run.model.save(update_fields=["is_local"])
    page = client.get(reverse("leaderboard:run_detail", args=[run.pk])).content.decode()
    command = next(line for line in page.splitlines() if "manage.py evaluate" in line)
    assert "--model ./my-encoder" in command and "/srv/models" not in page.split("<h2>Scores</h2>")[0]


def test_it_describes_a_published_run(client, published, published_dir):
    run = Run.objects.get(model__name="sentence-transformers/distiluse-base-multilingual-cased-v2")
    page = client.get(reverse("leaderboard:run_detail", args=[run.pk])).content.decode()
    assert "(the published results have none)" in page
    assert "--dataset nirdesha@1.0" in page and "--revision" not in page
    # The pooled 'all' T4 file, the one the paper's Table 7 reports, is kept with every other T4 file.
    assert "distiluse-base-multilingual-cased-v2-all-dev_test" in page and "pooled “all” file" in page
    assert "configs/prod_t41.yaml" in page  # provenance from the reference files
    # Where the files lay on the server is not the public's business: the folder's name is enough.
    assert "<dt>source</dt><dd>published-results</dd>" in page
    assert str(published_dir.parent) not in page
    rows = list(csv.DictReader(io.StringIO(client.get(f"/results/{run.pk}/?format=csv").content.decode("utf-8-sig"))))
    assert len(rows) == run.scores.count()


def test_it_points_to_the_progress_of_an_unfinished_run(client):
    run = make_run(make_dataset(), "org/slow", status=Run.Status.ENCODING, tasks=())
    # An unfinished run is not public: staff (or its submitter) follow it.
    client.force_login(make_admin())
    page = client.get(reverse("leaderboard:run_detail", args=[run.pk])).content.decode()
    assert "Encoding" in page and reverse("evaluation:run_detail", args=[run.pk]) in page
    assert client.get(reverse("leaderboard:run_detail", args=[999999])).status_code == 404
