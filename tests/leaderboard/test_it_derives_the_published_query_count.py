"""The published pool size is read off the published values: each Recall@k is a count over n queries."""

from __future__ import annotations

import pytest

from evaluation.models import Run, Score
from evaluation.published import derive_query_count, parse_directory, published_query_count
from evaluation.published_intervals import wilson_interval
from tests.data import PUBLISHED_RESULTS_DIR, require_shared_data


def test_it_finds_the_smallest_count_that_every_value_is_a_multiple_of():
    n = 1237
    assert derive_query_count([3 / n, 400 / n, 1000 / n, 1.0, 0.0]) == n
    # A value that is no count over n rules n out.
    assert derive_query_count([3 / n, 0.123456789], largest=5000) is None
    assert derive_query_count([0.0, 1.0]) is None


def test_it_derives_49949_queries_from_the_shipped_files():
    require_shared_data(PUBLISHED_RESULTS_DIR)
    parsed = parse_directory(PUBLISHED_RESULTS_DIR)
    assert published_query_count(parsed) == 49_949


@pytest.mark.django_db
def test_it_records_the_count_and_uses_it_in_every_wilson_interval(client, published):
    assert published.published_query_count == 49_949
    run = Run.objects.filter(dataset=published).first()
    assert run.manifest["intervals"]["queries"] == 49_949
    assert run.manifest["dataset"]["published_queries"] == 49_949
    score = Score.objects.filter(run=run, metric="recall@1").first()
    assert (score.ci_low, score.ci_high) == pytest.approx(wilson_interval(score.value, 49_949), abs=1e-15)
    assert (score.ci_low, score.ci_high) != pytest.approx(wilson_interval(score.value, 50_000), abs=1e-9)
    page = client.get("/").content.decode()
    assert "49,949 queries each published figure is a count over" in page and "50,000-query" not in page
