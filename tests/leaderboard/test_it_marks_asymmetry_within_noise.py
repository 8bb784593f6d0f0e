"""Asymmetry cells within noise are shown as such (issue 33): constructed pairs where the truth is known,
then the cross-lingual page on re-runs (paired over items) and on published results (unpaired)."""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pytest
from django.urls import reverse

from evaluation.engine.languages import BY_CODE
from evaluation.models import Run
from leaderboard import plots
from leaderboard.asymmetry import (
    PAIRED,
    UNPAIRED,
    WITHIN_NOISE,
    asymmetry_tests,
    counts,
    paired_asymmetry,
    unpaired_asymmetry,
)
from tests.leaderboard.demo_runs import demo_reruns

URL = reverse("leaderboard:crosslingual")


def hits(rate: float, items: int, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).random(items) < rate).astype(np.float64)


def test_a_clearly_asymmetric_pair_is_marked():
    forward, backward = hits(0.8, 200, 1), hits(0.3, 200, 2)
    test = paired_asymmetry(forward[None], backward[None], n_resamples=1000, seed=0)
    assert test.within_noise is False and test.verdict == "better this way"
    assert test.ci_low is not None and test.ci_low > 0 and test.p_value is not None and test.p_value < 0.001
    assert test.reversed().verdict == "worse this way" and test.reversed().ci_high == -test.ci_low


def test_a_tied_pair_is_within_noise():
    forward = hits(0.5, 200, 3)
    backward = forward.copy()
    # Six items differ, three each way: the two directions score the same.
    wins = np.flatnonzero(forward == 1)[:3]
    losses = np.flatnonzero(forward == 0)[:3]
    backward[wins], backward[losses] = 0, 1
    test = paired_asymmetry(forward[None], backward[None], n_resamples=1000, seed=0)
    assert test.delta == 0 and test.within_noise is True and test.verdict == WITHIN_NOISE
    assert test.ci_low is not None and test.ci_high is not None and test.ci_low <= 0 <= test.ci_high


def test_a_small_paired_difference_is_found_where_the_unpaired_interval_calls_it_noise():
    # Both directions share most hits (the same items): 12 items only forward finds, 1 only backward.
    forward = hits(0.5, 300, 4)
    backward = forward.copy()
    backward[np.flatnonzero(forward == 1)[:12]] = 0
    backward[np.flatnonzero(forward == 0)[:1]] = 1
    paired = paired_asymmetry(forward[None], backward[None], n_resamples=1000, seed=0)
    unpaired = unpaired_asymmetry(float(forward.mean()), float(backward.mean()), forward.size)
    assert paired.within_noise is False and paired.method.startswith(PAIRED)
    # Treating the directions as independent errs wide: the same Δ, a wider interval, within noise.
    assert unpaired.delta == pytest.approx(paired.delta)
    assert unpaired.within_noise is True and unpaired.method.startswith(UNPAIRED)
    assert unpaired.ci_high - unpaired.ci_low > paired.ci_high - paired.ci_low  # type: ignore[operator]


def test_published_proportions_far_apart_are_marked_and_close_ones_are_not():
    assert unpaired_asymmetry(0.60, 0.40, 1000).within_noise is False
    assert unpaired_asymmetry(0.50, 0.49, 1000).within_noise is True


def test_each_pair_is_tested_once_and_the_other_cell_is_its_mirror():
    matrix = [[None, 0.8, 0.5], [0.3, None, None], [0.5, 0.4, None]]
    calls = []

    def test(i: int, j: int):
        calls.append((i, j))
        return unpaired_asymmetry(matrix[i][j], matrix[j][i], 1000)  # type: ignore[arg-type]

    tests = asymmetry_tests(matrix, test)
    assert calls == [(0, 1), (0, 2)]
    assert tests[1][0].delta == pytest.approx(-tests[0][1].delta)  # type: ignore[union-attr]
    assert tests[1][2] is None and tests[0][0] is None
    assert counts(tests) == {"different": 1, "within_noise": 1, "untested": 0}


def test_the_heatmap_draws_cells_within_noise_in_the_neutral_colour():
    figure = plots.heatmap(
        [[None, 0.05], [-0.05, None]],
        ["A", "B"],
        title="t",
        diverging=True,
        within_noise=[[None, True], [True, None]],
        notes=[["", "within noise"], ["within noise", ""]],
    )
    trace = figure["data"][0]
    assert trace["z"][0][1] == 0 and trace["text"][0][1].startswith("(")
    assert trace["customdata"][0][1] == "within noise" and "%{customdata}" in trace["hovertemplate"]


def figure(html: str, name: str) -> dict:
    body = re.search(rf'<script id="{name}" type="application/json">(.*?)</script>', html, re.S)
    assert body, f"{name} missing"
    return json.loads(body.group(1))


def pair_lines(client, url: str) -> list[dict]:
    response = client.get(url + "&format=csv&table=pairs")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


@pytest.mark.django_db
def test_a_reruns_asymmetry_is_paired_over_items_and_says_so(client):
    bm25 = demo_reruns()["bm25"]
    url = URL + f"?dataset={bm25.dataset.pk}&run={bm25.pk}&task=t2"
    page = client.get(url).content.decode()
    assert "paired over items" in page and "not simultaneous" in page
    lines = pair_lines(client, url)
    assert lines and all(line["asymmetry_method"].startswith(PAIRED) for line in lines)
    asym = figure(page, "figure-asymmetry")["data"][0]
    names = asym["x"]
    for line in lines:
        low, high = float(line["asymmetry_ci_low"]), float(line["asymmetry_ci_high"])
        noise = line["asymmetry_verdict"] == WITHIN_NOISE
        assert noise == (low <= 0 <= high)
        # The list a phone shows carries the same verdict.
        assert line["asymmetry_verdict"] in page
        i, j = names.index(BY_CODE[line["query_language"]].name), names.index(BY_CODE[line["document_language"]].name)
        if noise:
            assert asym["z"][i][j] == 0 and asym["text"][i][j].startswith("(")


@pytest.mark.django_db
def test_a_published_asymmetry_is_unpaired_and_says_it_errs_wide(client, published):
    bge = Run.objects.get(model__name="BAAI/bge-m3", dataset=published)
    url = URL + f"?run={bge.pk}&task=t2"
    page = client.get(url).content.decode()
    assert "errs wide" in page
    lines = pair_lines(client, url)
    verdicts = {line["asymmetry_verdict"] for line in lines}
    # Some of the 132 ordered pairs are within noise, and some are not.
    assert WITHIN_NOISE in verdicts and verdicts - {WITHIN_NOISE}
    assert all(line["asymmetry_method"].startswith(UNPAIRED) for line in lines)
