"""A board loads its runs with a summary of what they stored (RunQuerySet.with_stored_summaries) instead
of their whole details and manifest, and reads from it what it read from the whole: the same averages,
rank-file fingerprint's digest, bootstrap settings and replicates, in the query that loads the runs. Anything
else is fetched for that run, once, when asked for."""

from __future__ import annotations

from io import BytesIO, StringIO

import numpy as np
import pytest
from django.core.cache import cache
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.db import connection
from django.http import QueryDict
from django.test.utils import CaptureQueriesContext

from evaluation.models import EmbeddingModel, Run
from evaluation.replicates import (
    FINGERPRINT,
    fingerprint_digest,
    first_layout_path,
    rank_fingerprint,
    replicates_path,
)
from leaderboard.pages.crosslingual import crosslingual_page
from leaderboard.pages.overview import overview_page
from tests.validation import create_validation_dataset

pytestmark = pytest.mark.django_db

THREE = [("hin", None), ("mar", None), ("tam", None)]
PAIRS = [("hin", "mar"), ("mar", "tam"), ("tam", "hin")]


def evaluated_run(version: str) -> Run:
    dataset = create_validation_dataset(("Hindi", "Marathi", "Tamil"), version=version)
    call_command("evaluate", "--model", "bm25", "--dataset", dataset.slug, "--tasks", "t1,t2,t4", stdout=StringIO())
    return Run.objects.get(dataset=dataset)


def test_the_summary_gives_what_the_whole_details_give_in_the_query_that_loads_the_run():
    whole = evaluated_run("summaries")
    requests = [
        ("t1", "recall@1", THREE),
        ("t1", "mrr@10", THREE),
        ("t1", "recall@1", THREE[:2]),
        ("t2", "recall@1", PAIRS),
        ("t2", "recall@1", PAIRS[1:]),
    ]
    with CaptureQueriesContext(connection) as loading:
        [summarised] = Run.objects.with_stored_summaries().filter(pk=whole.pk)
        results = summarised.results
        averages = results.averages
        digest = results.rank_digest
        settings = results.bootstrap_settings
        results.read_replicates((task, metric, units) for task, metric, units in requests)
        replicates = [results.replicates(task, metric, units) for task, metric, units in requests]
    assert len(loading) == 1
    assert averages == whole.results.details.averages and averages["t4"]["auroc"].ci_low is not None
    # The digest of the rank files' fingerprint, computed by the database as the replicate file's writer does.
    fingerprint = rank_fingerprint(entry.path for entry in whole.results.details.ranks)
    assert fingerprint != "" and digest == fingerprint_digest(fingerprint) == whole.results.rank_digest
    assert settings == whole.results.bootstrap_settings == (int(whole.manifest["seed"]), 1000)
    for request, found in zip(requests, replicates, strict=True):
        expected = whole.results.replicates(*request)
        assert found is not None and expected is not None and found.tobytes() == expected.tobytes(), request
    # The rest is fetched once, then read as a whole run's; the reader (and what it has read) is kept.
    with CaptureQueriesContext(connection) as fetching:
        details = summarised.results.details
        manifest = summarised.results.manifest
        assert summarised.results is results
    assert len(fetching) == (1 if connection.vendor == "postgresql" else 0)
    assert details == whole.results.details and manifest == whole.results.manifest
    assert summarised.details == whole.details and summarised.manifest == whole.manifest


def test_a_run_changed_after_it_was_read_is_read_again():
    whole = evaluated_run("summaries-changed")
    [summarised] = Run.objects.with_stored_summaries().filter(pk=whole.pk)
    assert summarised.results.averages["t1"]["recall@1"].value == whole.results.details.averages["t1"]["recall@1"].value
    summarised.details = {**whole.details, "averages": {}}
    summarised.manifest = whole.manifest
    assert summarised.results.averages == {}


def test_the_overview_reads_no_runs_details_and_shows_what_it_showed_with_them():
    whole = evaluated_run("summaries-overview")
    query = QueryDict(f"dataset={whole.dataset_id}")
    with CaptureQueriesContext(connection) as building:
        page = overview_page(query)
    sql = " ".join(query["sql"] for query in building.captured_queries)
    if connection.vendor == "postgresql":
        # Runs are loaded with a summary, and no query fetches one run's details afterwards.
        assert "stored_summary" in sql and '"evaluation_run"."details"' not in sql
    [row] = page.context["table"].rows
    # The run's joint intervals and replicates as the engine stored them.
    t1 = row.cells["t1"]
    stored = whole.results.details.averages["t1"]["recall@1"]
    assert (t1.ci_low, t1.ci_high) == (stored.ci_low, stored.ci_high)
    overall = page.context["table"].column_replicates
    expected = whole.results.replicates("t1", "recall@1", THREE)
    assert expected is not None and np.array_equal(overall[(whole.pk, "t1")], expected)


def test_the_databases_digest_follows_the_details_and_a_run_without_rank_files_has_none():
    """The digest is kept by PostgreSQL from the details themselves (migration 0017): changed with them,
    empty when they list no rank file, and equal to the replicate writer's for any paths."""
    if connection.vendor != "postgresql":
        pytest.skip("the digest column is PostgreSQL's; other databases load runs whole")
    whole = evaluated_run("summaries-digest")
    paths = ["runs/9/ranks-t2-hin-mar.npz", "runs/9/ranks-t1-hin.npz", "runs/9/Ranks-t1-zz.npz", "runs/9/ä.npz"]
    Run.objects.filter(pk=whole.pk).update(details={**whole.details, "ranks": [{"path": path} for path in paths]})
    [summarised] = Run.objects.with_stored_summaries().filter(pk=whole.pk)
    assert summarised.results.rank_digest == fingerprint_digest(rank_fingerprint(paths))
    Run.objects.filter(pk=whole.pk).update(details={**whole.details, "ranks": []})
    [summarised] = Run.objects.with_stored_summaries().filter(pk=whole.pk)
    with CaptureQueriesContext(connection) as reading:
        assert summarised.results.rank_digest == "" and not summarised.results.has_rank_files
        assert summarised.results.replicates("t1", "recall@1", THREE) is None
    assert len(reading) == 0


def test_a_first_layout_file_is_checked_against_the_paths_fetched_for_it():
    """A replicate file of the first layout kept the fingerprint whole, which the summary does not carry:
    the run's details are fetched once for it, and its replicates read as they were."""
    whole = evaluated_run("summaries-first-layout")
    expected = whole.results.replicates("t1", "recall@1", THREE)
    assert expected is not None
    arrays = {"t1/*/*/recall@1": expected, "t1/*/count/recall@1": np.asarray([3])}
    buffer = BytesIO()
    np.savez(buffer, **arrays, **{FINGERPRINT: np.asarray([whole.results.rank_fingerprint])})  # type: ignore[arg-type]
    default_storage.delete(replicates_path(whole.pk))
    default_storage.save(first_layout_path(whole.pk), ContentFile(buffer.getvalue()))
    [summarised] = Run.objects.with_stored_summaries().filter(pk=whole.pk)
    summarised.results.averages  # noqa: B018 - the summary is read before the count starts.
    with CaptureQueriesContext(connection) as reading:
        found = summarised.results.replicates("t1", "recall@1", THREE)
    assert found is not None and found.tobytes() == expected.tobytes()
    assert len(reading) == (1 if connection.vendor == "postgresql" else 0)


def test_a_summary_carries_the_task_blocks_a_page_asks_for():
    """The T4 page reads every run's T4 block (its reliability bins): with the block in the summary it is
    the whole details' block, read in the query that loads the run; a block not asked for is fetched."""
    whole = evaluated_run("summaries-blocks")
    expected = whole.results.details.tasks["t4"]
    with CaptureQueriesContext(connection) as loading:
        [summarised] = Run.objects.with_stored_summaries(["t4"]).filter(pk=whole.pk)
        found = summarised.results.details_of(["t4"])
    assert len(loading) == 1
    assert found.tasks["t4"] == expected and found.averages == whole.results.details.averages
    if connection.vendor == "postgresql":
        assert found.ranks == [] and set(found.tasks) == {"t4"}  # nothing else of the details was read
    [summarised] = Run.objects.with_stored_summaries().filter(pk=whole.pk)
    with CaptureQueriesContext(connection) as fetching:
        assert summarised.results.details_of(["t4"]).tasks["t4"] == expected
    assert len(fetching) == (1 if connection.vendor == "postgresql" else 0)


def test_published_runs_are_read_from_their_summaries_on_the_t4_page(published, client):
    """A published run's details are what its import kept (the reference's T4 blocks), which the T4 page
    reads for every published model: the summary carries them whole, so that no run's details are fetched
    one by one (on 14019a3 the page fetched all 8 published runs' details, one query each)."""
    runs = list(Run.objects.filter(dataset=published))
    with CaptureQueriesContext(connection) as loading:
        summarised = list(Run.objects.with_stored_summaries().filter(dataset=published).order_by("pk"))
        kept = [run.results.published for run in summarised]
    assert len(loading) == 1 and len(kept) == len(runs) == 8
    for run, found in zip(sorted(runs, key=lambda run: run.pk), kept, strict=True):
        assert found == run.results.published and found.t4_blocks
    cache.clear()
    with CaptureQueriesContext(connection) as building:
        response = client.get("/tasks/t4/")
    assert response.status_code == 200
    if connection.vendor == "postgresql":
        assert not any('"evaluation_run"."details"' in query["sql"] for query in building.captured_queries)


def test_the_crosslingual_compare_and_diagnostics_pages_load_summaries_and_fetch_no_published_details(
    published, client
):
    """These pages loaded every run whole (at 1,000 re-runs the cross-lingual pair view took 1.26 s a build,
    0.56 s with summaries): now no query reads a run's details, since a published run's are in its summary."""
    first, second = Run.objects.filter(dataset=published).order_by("pk")[:2]
    paths = [
        "/crosslingual/",
        "/crosslingual/?task=t3x&query_language=hin&document_language=tam",
        f"/compare/?runs={first.pk}&runs={second.pk}&task=t2",
        "/diagnostics/",
    ]
    for path in paths:
        cache.clear()
        with CaptureQueriesContext(connection) as building:
            response = client.get(path)
        assert response.status_code == 200, path
        sql = [query["sql"] for query in building.captured_queries]
        if connection.vendor == "postgresql":
            assert any("stored_summary" in statement for statement in sql), path
            assert not any('"evaluation_run"."details"' in statement for statement in sql), path


def test_the_crosslingual_page_fetches_the_details_of_the_run_it_tests_only():
    """The asymmetry tests of the chosen re-run read its rank files: its details are fetched, once, and no
    other run's; the page is the one its whole runs give (the golden pages test compares every byte)."""
    chosen = evaluated_run("summaries-crosslingual")
    other = Run.objects.get(pk=chosen.pk)
    other.pk = None
    other.model = EmbeddingModel.objects.create(name="org/other", display_name="Other")
    other.save()
    with CaptureQueriesContext(connection) as building:
        page = crosslingual_page(QueryDict(f"dataset={chosen.dataset_id}&run={chosen.pk}&task=t2"))
    fetched = [query["sql"] for query in building.captured_queries if '"evaluation_run"."details"' in query["sql"]]
    if connection.vendor == "postgresql":
        assert len(fetched) == 1 and f"= {chosen.pk}" in fetched[0]
    assert page.context["chosen"].pk == chosen.pk
    tested = [test for row in page.context["asymmetry_rows"] for _, test in row[1]]
    assert tested and all(test.method.startswith("paired") for test in tested)
