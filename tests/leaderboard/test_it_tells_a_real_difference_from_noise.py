"""Paired comparisons: compare's verdict and the rank intervals come from paired tests, not overlapping intervals.

Two re-runs on the same queries: B finds the gold at rank 1 exactly where A does, except on 18 queries per
language. Their per-language 95% intervals overlap, yet the paired difference is clearly significant.
The paired bootstrap and the McNemar p-value are checked against an independent computation: numpy over
the rank files (indices gathered, not the engine's count matrices) and statsmodels' McNemar test.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import reverse
from statsmodels.stats.contingency_tables import mcnemar

from evaluation.engine import ENGINE_VERSION, bootstrap
from evaluation.engine.results import SCHEMA_VERSION
from evaluation.models import EmbeddingModel, Language, Run, Score
from leaderboard.significance import A_BETTER, MCNEMAR_ITEMS, PAIRED_BOOTSTRAP, SIGN_FLIP, SIGN_FLIPS
from tests.factories import make_dataset

pytestmark = pytest.mark.django_db

LANGUAGES = ("hin", "mar")
N = 600
SEED = 0
RESAMPLES = 1000


def ranks_of_two_models() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per language, the 1-based gold ranks of A and of B (B misses 18 of A's rank-1 hits)."""
    rng = np.random.default_rng(11)
    found = {}
    for code in LANGUAGES:
        a = rng.integers(2, 60, size=N)
        hits = rng.choice(N, size=int(0.3 * N), replace=False)
        a[hits] = 1
        b = a.copy()
        b[hits[:18]] = 2
        found[code] = (a, b)
    return found


def make_rerun(dataset, name: str, ranks: dict[str, np.ndarray]) -> Run:
    model = EmbeddingModel.objects.create(name=name)
    run = Run.objects.create(
        model=model,
        dataset=dataset,
        origin=Run.Origin.RERUN,
        status=Run.Status.DONE,
        resolved_commit=name[-12:].rjust(12, "0"),
        engine_version=ENGINE_VERSION,
        manifest={"seed": SEED, "bootstrap": {"resamples": RESAMPLES}},
        details={"schema_version": SCHEMA_VERSION, "ranks": []},
    )
    entries = []
    for code, values in ranks.items():
        buffer = io.BytesIO()
        np.savez(buffer, query_item_ids=np.arange(N), ranks=values)
        path = default_storage.save(f"ranks/test-{run.pk}-{code}.npz", ContentFile(buffer.getvalue()))
        entries.append({"task": "t1", "source": code, "target": None, "path": path})
        hits = (values <= 1).astype(float)
        # The per-language interval the engine stores: the percentile bootstrap over this language's queries.
        low, high = bootstrap.percentile_interval(bootstrap.bootstrap_means(hits, RESAMPLES, SEED)[0])
        Score.objects.create(
            run=run,
            task="t1",
            source=Language.objects.get(code=code),
            metric="recall@1",
            value=float(hits.mean()),
            ci_low=low,
            ci_high=high,
        )
    # Run details as the engine writes them (typed results, evaluation/engine/results.py), which every reader checks.
    run.details = {"schema_version": SCHEMA_VERSION, "ranks": entries}
    run.save(update_fields=["details"])
    return run


@pytest.fixture
def pair():
    dataset = make_dataset()
    ranks = ranks_of_two_models()
    a = make_rerun(dataset, "org/model-a", {code: found[0] for code, found in ranks.items()})
    b = make_rerun(dataset, "org/model-b", {code: found[1] for code, found in ranks.items()})
    return dataset, a, b, ranks


def independent_paired_interval(ranks: dict[str, tuple[np.ndarray, np.ndarray]]) -> tuple[float, float]:
    """The paired bootstrap by hand: the engine's seeded item draws, values gathered by index."""
    rng = np.random.default_rng(np.random.SeedSequence([SEED, N]))
    draws = np.concatenate([rng.integers(0, N, size=(100, N)) for _ in range(RESAMPLES // 100)])
    differences = np.zeros(RESAMPLES)
    for a, b in ranks.values():
        gap = (a <= 1).astype(float) - (b <= 1).astype(float)
        differences += gap[draws].mean(axis=1) / len(ranks)
    low, high = np.percentile(differences, [2.5, 97.5])
    return float(low), float(high)


def test_overlapping_intervals_do_not_hide_a_significant_paired_difference(client, pair):
    dataset, a, b, ranks = pair
    # Each language's 95% intervals of A and B overlap.
    for code in LANGUAGES:
        score_a = Score.objects.get(run=a, source=code)
        score_b = Score.objects.get(run=b, source=code)
        assert score_b.ci_high > score_a.ci_low and score_a.value > score_b.value

    body = json.loads(
        client.get(
            reverse("leaderboard:compare"), {"dataset": dataset.pk, "runs": [a.pk, b.pk], "format": "json"}
        ).content
    )
    [row] = body["tables"]["differences"]
    assert (row["task"], row["metric"], row["languages"]) == ("t1", "recall@1", "hin mar")
    assert row["verdict"] == A_BETTER
    assert row["delta"] == pytest.approx(18 / N) and row["a"] - row["b"] == pytest.approx(row["delta"])
    assert row["method"].startswith(PAIRED_BOOTSTRAP)
    # The paired interval, recomputed by hand from the rank files, excludes zero.
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(independent_paired_interval(ranks), abs=1e-12)
    assert row["ci_low"] > 0
    # Two languages: an item's cells move together, so the p-value is the item-level sign-flip test on
    # the items' differences averaged over the languages. Every differing item favours A, so no sign
    # flip of the items gives as large a sum and the p-value is the test's smallest, 1 / (1 + flips).
    items = np.mean([(ranks[code][0] <= 1).astype(float) - (ranks[code][1] <= 1) for code in LANGUAGES], axis=0)
    assert np.count_nonzero(items) >= 18 and (items >= 0).all()
    assert row["p_value"] == pytest.approx(1 / (1 + SIGN_FLIPS)) and SIGN_FLIP in row["method"]

    page = client.get(reverse("leaderboard:compare"), {"dataset": dataset.pk, "runs": [a.pk, b.pk]}).content.decode()
    # The page names the better model, and writes a p-value this small as a bound, never "0" or "1e-07".
    assert f"{row['model_a']} is better" in page and "A is better" not in page and "sign-flip" in page


def test_one_language_is_tested_with_the_exact_mcnemar_test(client, pair):
    dataset, a, b, ranks = pair
    body = json.loads(
        client.get(
            reverse("leaderboard:compare"),
            {"dataset": dataset.pk, "runs": [a.pk, b.pk], "languages": "hin", "format": "json"},
        ).content
    )
    [row] = body["tables"]["differences"]
    # One language, one direction: each item is one cell, and the McNemar test is the item-level test.
    hits_a, hits_b = ranks["hin"][0] <= 1, ranks["hin"][1] <= 1
    table = [[np.sum(hits_a & hits_b), np.sum(hits_a & ~hits_b)], [np.sum(~hits_a & hits_b), np.sum(~hits_a & ~hits_b)]]
    assert row["languages"] == "hin" and MCNEMAR_ITEMS in row["method"]
    assert row["p_value"] == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-9)


def test_the_rank_intervals_separate_them(client, pair):
    dataset, a, b, _ = pair
    rows = {
        row["run_id"]: row
        for row in json.loads(client.get("/api/leaderboard/", {"dataset": dataset.pk}).content)["rows"]
    }
    assert (rows[a.pk]["rank_best"], rows[a.pk]["rank_worst"]) == (1, 1)
    assert (rows[b.pk]["rank_best"], rows[b.pk]["rank_worst"]) == (2, 2)
    # Their overall intervals overlap: the overlap rule would have given both the band 1–2.
    assert rows[b.pk]["overall_ci_high"] > rows[a.pk]["overall_ci_low"]
    page = client.get(reverse("leaderboard:overview"), {"dataset": dataset.pk}).content.decode()
    assert "paired: every model" in page


def test_it_holm_corrects_several_unpaired_comparisons_of_published_results(client, published):
    ids = [Run.objects.get(model__display_name=name).pk for name in ("BGE-M3", "E5-Large-Instruct", "LaBSE")]
    body = json.loads(client.get(reverse("leaderboard:compare"), {"runs": ids, "format": "json"}).content)
    rows = body["tables"]["differences"]
    # Three pairs of models, each on T1, T2, T3 and T3 cross Recall@1 and T4 AUROC.
    assert len(rows) == 15
    tested = [row for row in rows if row["p_value"] is not None]
    assert all(row["method"].startswith("unpaired, conservative") for row in tested)
    # Every shown p-value inverts the interval beside it, so none can contradict it.
    for row in tested:
        excludes = row["ci_low"] > 0 or row["ci_high"] < 0
        assert excludes or row["p_value"] >= 0.05
    # T4 AUROC has neither per-query data nor a proportion: it says it was not tested, never "cannot tell".
    assert {row["verdict"] for row in rows if row["p_value"] is None} == {
        "not tested (no per-query data, not a proportion)"
    }
    page = client.get(reverse("leaderboard:compare"), {"runs": ids}).content.decode()
    assert "Holm-corrected" in page
