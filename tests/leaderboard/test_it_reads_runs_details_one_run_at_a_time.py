"""No page reads the details of every run: a page that lists runs loads them with their stored summaries, and
the runs it shows in full (its own run, the runs chosen for a comparison) have their details fetched one by one.

A re-run's details list a rank file per unit (about 28 kB of JSON for 12 languages), so a page that loads a
board's runs whole decodes megabytes at 1,000 models: the cross-lingual, compare and diagnostics pages did,
and the run page named its references by loading every re-run of its version (0.35-0.54 s of each view).
On PostgreSQL, where summaries are kept; other databases load runs whole by design.
"""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.leaderboard.site_pages import public_pages

pytestmark = pytest.mark.django_db

# A fetch of one run, or of one model's runs (a model page): its id in the statement's conditions.
# `NOT (... = n)` (all runs but one) is not such a fetch.
ONE_RUN = re.compile(r'(?<!NOT \()"evaluation_run"\."(id|model_id)" = \d+')


# A read bounded whatever the board's size: the errors page looks through the 50 newest other re-runs of
# its version for those that kept the same unit's ranks, to offer a comparison with one of them.
BOUNDED = re.compile(r" LIMIT (\d+)$")
MOST_RUNS_READ_WHOLE = 50


def reads_many_runs_details(sql: str) -> bool:
    """Whether a statement selects runs' details for more than one run or model, without a small bound."""
    columns, _, rest = sql.partition(" FROM ")
    if not columns.startswith("SELECT ") or '"evaluation_run"."details"' not in columns:
        return False
    bound = BOUNDED.search(rest)
    if bound and int(bound.group(1)) <= MOST_RUNS_READ_WHOLE:
        return False
    return not ONE_RUN.search(rest.partition(" WHERE ")[2])


def test_every_public_page_fetches_runs_details_one_run_at_a_time(site, client):
    if connection.vendor != "postgresql":
        pytest.skip("Runs are loaded whole on other databases (RunQuerySet.with_stored_summaries)")
    offenders = {}
    for name, path in public_pages(site):
        cache.clear()
        with CaptureQueriesContext(connection) as building:
            response = client.get(path)
        assert response.status_code == 200, (name, path, response.status_code)
        many = [query["sql"][-400:] for query in building.captured_queries if reads_many_runs_details(query["sql"])]
        if many:
            offenders[name] = many
    assert not offenders, f"Pages reading many runs' details: {sorted(offenders)}; statements: {offenders}"


def test_the_check_sees_a_board_loaded_whole():
    """The pattern above is not vacuous: loading the runs of a board whole is caught, one run is not."""
    from evaluation.models import Run
    from tests.factories import make_dataset, make_run

    version = make_dataset("check", "1.0")
    alpha = make_run(version, "org/alpha", tasks=("t1",))
    make_run(version, "org/beta", tasks=("t1",))
    with CaptureQueriesContext(connection) as loading:
        list(Run.objects.filter(dataset=version))
        Run.objects.get(pk=alpha.pk)
        list(Run.objects.filter(dataset=version).values_list("pk", flat=True))
        list(Run.objects.filter(dataset=version).exclude(pk=alpha.pk))
        list(Run.objects.filter(dataset=version).order_by("-pk")[:50])
    whole, one, ids, all_but_one, newest = (query["sql"] for query in loading.captured_queries)
    assert reads_many_runs_details(whole) and reads_many_runs_details(all_but_one)
    assert not reads_many_runs_details(one) and not reads_many_runs_details(ids)
    assert not reads_many_runs_details(newest)
