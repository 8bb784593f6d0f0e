"""Chance levels live on the registry's metric specs and are shown on task pages, charts and in the API."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from evaluation.engine.registry import METRICS, TASKS
from tests.factories import make_dataset, make_run


def test_each_metric_knows_its_chance_level():
    t5, t4, t1 = TASKS["t5"], TASKS["t4"], TASKS["t1"]
    # T5 ranks each persona's instruction among 21 (the gold and 20 hard negatives): R@10 is 10/21 by chance.
    assert t5.chance_level("recall@10") == pytest.approx(10 / 21)
    assert t5.chance_level("recall@1") == pytest.approx(1 / 21)
    # A full pool of n documents: k/n; MRR@10 of a random rank is the mean of 1/r over ranks 1..10 out of n.
    assert t1.chance_level("recall@5", 50_000) == pytest.approx(5 / 50_000)
    assert t1.chance_level("mrr@10", 50_000) == pytest.approx(sum(1 / r for r in range(1, 11)) / 50_000)
    assert t1.chance_level("recall@1") is None  # no pool size, no chance level
    # T4: one positive to two negatives, so always answering "no" is right 2/3 of the time.
    assert t4.chance_level("accuracy") == pytest.approx(2 / 3)
    assert t4.chance_level("auroc") == 0.5
    assert t4.chance_level("auprc") == pytest.approx(1 / 3)
    assert t4.chance_level("ece") is None
    assert METRICS["max@r"].chance_level(pool=100) is None


@pytest.mark.django_db
def test_pages_charts_and_the_api_show_them(client, published):
    t1 = client.get(reverse("leaderboard:task", args=["t1"])).content.decode()
    assert re.search(r'id="chance-levels">Chance level \(a model that ranks at random\): R@1 0.002%', t1)
    figure = json.loads(re.search(r'<script id="figure-languages" type="application/json">(.*?)</script>', t1, re.S)[1])
    [line] = figure["layout"]["shapes"]
    # The published figures are counts over 49,949 queries (read off their values): that is their pool.
    assert line["y0"] == line["y1"] == pytest.approx(100 * 1 / 49_949)
    t4 = client.get(reverse("leaderboard:task", args=["t4"])).content.decode()
    # The published T4 files do not record their class balance: no majority level is invented for them
    # (the engine's one positive to two negatives is not the reference's test set).
    assert "AUROC 50%" in t4 and "Acc." not in t4.split('id="chance-levels"')[1].split("</p>")[0]
    assert "do not record their test set's class balance" in t4
    body = json.loads(client.get("/api/leaderboard/").content)
    assert body["chance_levels"]["t4_auroc"] == 0.5
    assert body["chance_levels"]["t1"] == pytest.approx(1 / 49_949)
    assert body["chance_levels"]["t4_ece"] is None
    overview = client.get(reverse("leaderboard:overview")).content.decode()
    assert "retrieval pool 49,949" in overview or "retrieval pool 49949" in overview


@pytest.mark.django_db
def test_the_t4_majority_level_comes_from_the_class_balance_of_the_test_set(client):
    dataset = make_dataset()
    run = make_run(dataset, "org/alpha", with_bins=True)
    groups = run.details["t4"]["reliability"].values()
    bins = [b for group in groups for b in group["before"] if b["count"]]
    positive = sum(b["count"] * b["mean_y"] for b in bins) / sum(b["count"] for b in bins)
    page = client.get(reverse("leaderboard:task", args=["t4"]), {"dataset": dataset.pk}).content.decode()
    levels = page.split('id="chance-levels"')[1].split("</p>")[0]
    assert f"Acc. {100 * max(positive, 1 - positive):.3g}%" in levels
    assert f"AUPRC {100 * positive:.3g}%" in levels


@pytest.mark.django_db
def test_the_hard_negative_page_says_how_its_negatives_are_mined_and_its_chance_level(client, published):
    [spec] = [spec for spec in TASKS.values() if spec.method == "hard_negatives"]
    page = client.get(reverse("leaderboard:task", args=[spec.id])).content.decode()
    assert "How the hard negatives are mined: BM25 is queried with the gold instruction" in page
    assert "R@1 4.76%" in page
