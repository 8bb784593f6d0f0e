"""No public page's query count grows with the number of models (3 models against 30)."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evaluation.models import Run
from leaderboard.cache import site_identity
from tests.factories import make_dataset, make_run

pytestmark = [pytest.mark.slow, pytest.mark.django_db]
# 12 for the pages themselves, plus the licence filter's choices (1), the footer's "last updated"
# (3 aggregates, cached per generation; this test clears the cache before every page) and the planner
# setting of the version's coverage statement (3 here: a savepoint inside the test's transaction, the
# setting, and the savepoint's rollback, which undoes it; 1 where a page is built outside a transaction).
MAX_QUERIES = 19


def pages(dataset, runs: list[Run]) -> list[str]:
    first, second = runs[0].pk, runs[1].pk
    return [
        "/",
        "/?languages=hin&sort=-t2",
        "/tasks/t1/",
        "/tasks/t2/",
        "/tasks/t4/",
        "/crosslingual/",
        f"/compare/?runs={first}&runs={second}",
        f"/results/{first}/",
        f"/datasets/{dataset.pk}/",
        "/datasets/",
        "/api/leaderboard/",
        "/api/runs/",
        "/api/scores/?task=t1",
        "/api/models/",
        "/api/datasets/",
        "/?format=csv",
    ]


def counts(client, how_many: int) -> dict[str, int]:
    dataset = make_dataset("nirdesha-validation", f"n{how_many}")
    runs = [
        make_run(dataset, f"org/model-{how_many}-{index}", level=0.1 + index / 100, with_bins=index % 2 == 0)
        for index in range(how_many)
    ]
    # The database's identity is read once per process, not per page; whether this process has read
    # it yet depends on the tests it ran before (one that recreates the row makes it read again).
    site_identity()
    result: dict[str, int] = {}
    page_names = [
        "overview",
        "overview filtered",
        "t1",
        "t2",
        "t4",
        "cross-lingual",
        "compare",
        "run",
        "dataset",
        "datasets",
        "api leaderboard",
        "api runs",
        "api scores",
        "api models",
        "api datasets",
        "overview csv",
    ]
    for url in pages(dataset, runs):
        cache.clear()  # measure the uncached path: that is where queries happen
        with CaptureQueriesContext(connection) as captured:
            response = client.get(url + ("&" if "?" in url else "?") + f"dataset={dataset.pk}")
        assert response.status_code == 200, url
        result[page_names[len(result)]] = len(captured)
    Run.objects.filter(dataset=dataset).delete()
    return result


def test_it_issues_the_same_few_queries_for_3_and_30_models(client, django_assert_max_num_queries):
    few = counts(client, 3)
    many = counts(client, 30)
    assert few == many
    assert max(many.values()) <= MAX_QUERIES, many
    cache.clear()
    dataset = make_dataset("nirdesha-validation", "bounded")
    runs = [make_run(dataset, f"org/bounded-{index}", level=0.2) for index in range(30)]
    for url in pages(dataset, runs):
        cache.clear()
        with django_assert_max_num_queries(MAX_QUERIES):
            client.get(url)
