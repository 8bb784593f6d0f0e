"""Published Recall@k carries a Wilson 95% interval from the value and the pool size; MRR carries none."""

from __future__ import annotations

import math

import pytest

from evaluation.models import Run, Score
from evaluation.published_intervals import WILSON_LABEL, published_interval, wilson_interval


def test_it_computes_the_wilson_interval_by_hand():
    # Wilson: (p + z²/2n ± z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n), here p = 0.274, n = 50,000.
    p, n, z = 0.274, 50_000, 1.959963984540054
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low, high = wilson_interval(p, n)
    assert low == pytest.approx(centre - half, abs=1e-9)
    assert high == pytest.approx(centre + half, abs=1e-9)
    assert published_interval("mrr@10", 0.339, n) is None
    assert published_interval("recall@5", 0.426, n) == wilson_interval(0.426, n)


@pytest.mark.django_db
def test_it_stores_the_interval_with_every_published_recall(published):
    run = Run.objects.get(model__name="intfloat/multilingual-e5-large-instruct")
    assert run.manifest["intervals"]["method"] == WILSON_LABEL
    # The queries every published figure is a count over, read off the values (not the 50,000 items).
    assert run.manifest["intervals"]["queries"] == 49_949
    recalls = Score.objects.filter(run__origin="published", metric__startswith="recall@")
    assert recalls.exists() and not recalls.filter(ci_low__isnull=True).exists()
    hindi = Score.objects.get(run=run, task="t1", source="hin", metric="recall@1")
    assert (hindi.ci_low, hindi.ci_high) == pytest.approx(wilson_interval(hindi.value, 49_949))
    assert hindi.ci_low < hindi.value < hindi.ci_high
    assert not Score.objects.filter(run__origin="published", metric="mrr@10", ci_low__isnull=False).exists()
    assert not Score.objects.filter(run__origin="published", task="t4", ci_low__isnull=False).exists()
