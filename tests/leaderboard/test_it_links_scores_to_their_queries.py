"""Every per-language score of a re-run, on its run page and on the task pages, links to its queries."""

from __future__ import annotations

import re

import pytest

from evaluation.engine.registry import TASKS
from evaluation.models import Run, Score
from leaderboard.errors import has_errors_page
from tests.factories import make_run
from tests.leaderboard.demo_runs import demo_reruns
from tests.leaderboard.html import tables

pytestmark = pytest.mark.django_db

LINK = re.compile(r'<a class="errors-link" href="(/results/\d+/errors/\?[^"]+)"')


def test_it_links_every_retrieval_unit_of_the_run_page_to_a_working_errors_page(client):
    run = demo_reruns()["bm25"]
    page = client.get(f"/results/{run.pk}/").content.decode()
    links = {href.replace("&amp;", "&") for href in LINK.findall(page)}
    units = set(
        Score.objects.filter(run=run, task__in=[t for t, spec in TASKS.items() if has_errors_page(spec)])
        .values_list("task", "source_id", "target_id")
        .distinct()
    )
    assert len(links) == len(units) > 0
    for task, source, target in units:
        href = f"/results/{run.pk}/errors/?task={task}&language={source}" + (f"&target={target}" if target else "")
        assert href in links
    for href in sorted(links)[:12]:
        assert client.get(href).status_code == 200
    # The scores still read as before; the links sit in their own last column, one per retrieval table.
    with_links = [table for table in tables(page).values() if table and table[0][-1] == "Per query"]
    assert len(with_links) == len({task for task, _, _ in units})
    assert all(row[-1] == "queries" for table in with_links for row in table[1:])


def test_it_says_a_published_run_has_no_per_query_data(client):
    dataset = demo_reruns()["bm25"].dataset
    published = make_run(dataset, "published-model", origin=Run.Origin.PUBLISHED)
    page = client.get(f"/results/{published.pk}/").content.decode()
    assert "no per-query data" in page
    assert not LINK.findall(page)


def test_it_links_the_task_tables_cells_of_reruns_only(client):
    runs = demo_reruns()
    dataset = runs["bm25"].dataset
    make_run(dataset, "published-model", origin=Run.Origin.PUBLISHED, languages=("hin", "urd"))
    # A re-run whose rank files were never listed (as before the engine kept them) gets no link.
    without_files = make_run(dataset, "no-rank-files", languages=("hin", "urd"))
    page = client.get(f"/tasks/t1/?dataset={dataset.pk}").content.decode()
    links = {href.replace("&amp;", "&") for href in LINK.findall(page)}
    assert "no-rank-files" in page and not any(f"/results/{without_files.pk}/" in href for href in links)
    for run in runs.values():
        assert f"/results/{run.pk}/errors/?task=t1&language=hin" in links
    assert not any(f"/results/{Run.objects.get(model__name='published-model').pk}/" in href for href in links)
    assert 'class="no-per-query"' in page
    # The table's cells still read as their scores.
    first_table = next(iter(tables(page).values()))
    assert all(re.fullmatch(r"[\d.]+( [\d/]+)?|—.*", cell) for row in first_table[1:] for cell in row[1:])


def test_it_opens_a_cross_lingual_cell_at_the_languages_first_pair(client):
    run = demo_reruns()["bm25"]
    page = client.get(f"/tasks/t2/?dataset={run.dataset.pk}").content.decode()
    href = f"/results/{run.pk}/errors/?task=t2&language=hin"
    assert href in {h.replace("&amp;", "&") for h in LINK.findall(page)}
    response = client.get(href)
    assert response.status_code == 302
    assert response["Location"] == f"/results/{run.pk}/errors/?task=t2&language=hin&target=ben"
    assert client.get(response["Location"]).status_code == 200
