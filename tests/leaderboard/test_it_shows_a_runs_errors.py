"""/results/<run>/errors/: a re-run's queries worst gold rank first, with their texts, bucket counts and pages."""

from __future__ import annotations

import csv
import io
import re

import numpy as np
import pytest

from evaluation.engine.registry import TASKS
from evaluation.engine.results import Details
from evaluation.models import Run
from leaderboard.errors import PAGE_SIZE, has_errors_page
from leaderboard.export_vocabulary import describe
from tests.leaderboard.demo_runs import demo_reruns, demo_texts, rank_arrays

pytestmark = pytest.mark.django_db

FIELDS = {"persona": "indian_context_persona", "instruction": "indian_context_instruction"}


def errors_url(run: Run, query: str) -> str:
    return f"/results/{run.pk}/errors/?{query}"


def expected_page(run: Run, task: str, source: str, target: str | None, query_field: str, doc_field: str, bucket=None):
    """The page computed independently: numpy arrays of the rank file, texts from the shipped JSONL files."""
    arrays = rank_arrays(run, task, source, target)
    ids, ranks, top = arrays["query_item_ids"].tolist(), arrays["ranks"].tolist(), arrays["top_item_ids"].tolist()
    bounds = {"1": (1, 1), "2-5": (2, 5), "6-10": (6, 10), ">10": (11, 10**9)}
    counts = {name: sum(low <= rank <= high for rank in ranks) for name, (low, high) in bounds.items()}
    rows = sorted(range(len(ids)), key=lambda i: (-ranks[i], ids[i]))
    if bucket:
        low, high = bounds[bucket]
        rows = [i for i in rows if low <= ranks[i] <= high]
    source_texts, doc_texts, english = demo_texts(source), demo_texts(target or source), demo_texts("eng")
    queries = [
        {
            "item_id": ids[i],
            "rank": ranks[i],
            "query": {
                "item_id": ids[i],
                "language": source,
                "text": source_texts[ids[i]][FIELDS[query_field]],
                "english": english[ids[i]][FIELDS[query_field]],
            },
            "gold": {
                "item_id": ids[i],
                "language": target or source,
                "text": doc_texts[ids[i]][FIELDS[doc_field]],
                "english": english[ids[i]][FIELDS[doc_field]],
            },
            "retrieved": [
                {
                    "item_id": item,
                    "rank": position + 1,
                    "language": target or source,
                    "text": doc_texts[item][FIELDS[doc_field]],
                    "english": english[item][FIELDS[doc_field]],
                }
                for position, item in enumerate(top[i][:3])
            ],
        }
        for i in rows
    ]
    return counts, queries


def test_it_lists_the_queries_worst_first_as_the_rank_file_and_dataset_say(client):
    run = demo_reruns()["bm25"]
    body = client.get(errors_url(run, "task=t1&language=hin&format=json")).json()
    counts, queries = expected_page(run, "t1", "hin", None, "persona", "instruction")
    assert set(body) == {"run", "task", "language", "target", "buckets", "queries", "against_english"}
    assert (body["run"], body["task"], body["language"], body["target"]) == (run.pk, "t1", "hin", None)
    assert body["buckets"] == counts
    assert sum(counts.values()) == 36
    assert body["queries"] == queries[:PAGE_SIZE]
    # The worst query is a miss: bm25 does not solve the demo sample.
    assert body["queries"][0]["rank"] > 1


def test_it_pages_and_filters_by_rank_bucket(client):
    run = demo_reruns()["bm25"]
    counts, queries = expected_page(run, "t3", "urd", None, "instruction", "persona")
    second = client.get(errors_url(run, "task=t3&language=urd&page=2&format=json")).json()
    assert second["queries"] == queries[PAGE_SIZE : 2 * PAGE_SIZE]
    for bucket, count in counts.items():
        body = client.get(errors_url(run, f"task=t3&language=urd&bucket={bucket}&format=json")).json()
        _, expected = expected_page(run, "t3", "urd", None, "instruction", "persona", bucket)
        assert len(body["queries"]) == min(count, PAGE_SIZE)
        assert body["queries"] == expected[:PAGE_SIZE]
        assert body["buckets"] == counts


def test_it_shows_a_cross_lingual_pair_in_both_scripts(client):
    run = demo_reruns()["tfidf-char"]
    body = client.get(errors_url(run, "task=t2&language=hin&target=urd&format=json")).json()
    _, queries = expected_page(run, "t2", "hin", "urd", "persona", "instruction")
    assert body["queries"] == queries[:PAGE_SIZE]
    page = client.get(errors_url(run, "task=t2&language=hin&target=urd")).content.decode()
    assert 'lang="ur" dir="rtl"' in page and 'lang="hi" dir="ltr"' in page
    assert queries[0]["gold"]["english"] in page.replace("&#x27;", "'").replace("&quot;", '"')


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("task=nope&language=hin", "no such task"),
        ("task=t4&language=hin", "not a retrieval task"),
        ("task=multi&language=hin", "not a retrieval task"),
        ("task=t1&language=xxx", "no such evaluated language"),
        ("task=t1&language=eng", "no such evaluated language"),
        ("task=t2&language=hin", "choose a document language"),
        ("task=t2&language=hin&target=hin", "no such language pair"),
        ("task=t1&language=hin&target=tam", "monolingual"),
        ("task=t1&language=hin&bucket=top", "no rank bucket"),
        ("task=t1&language=hin&page=3", "no such page"),
        ("task=t1&language=hin&page=1e9", "no such page"),
        ("task=t1&language=hin&page=-1", "no such page"),
        ("task=t1&language=hin&page=99999999999999999999", "no such page"),
        ("task=t1&language=" + "x" * 10000, "no such evaluated language"),
    ],
)
def test_it_answers_404_with_a_reason_for_what_it_cannot_show(client, query, reason):
    run = demo_reruns()["bm25"]
    response = client.get(errors_url(run, query + "&format=json"))
    assert response.status_code == 404
    assert reason in response.json()["detail"].lower()
    page = client.get(errors_url(run, query))
    if reason == "choose a document language":
        # A person (a task table's per-language cell) is taken to the language's first pair instead.
        assert page.status_code == 302
        return
    assert page.status_code == 404 and reason in page.content.decode().lower()


def test_it_says_which_rank_file_is_missing(client):
    from django.core.files.storage import default_storage

    run = demo_reruns()["bm25"]
    (entry,) = [e for e in Details.from_dict(run.details).ranks if (e.task, e.source) == ("t1", "mar")]
    default_storage.delete(entry.path)
    response = client.get(errors_url(run, "task=t1&language=mar&format=json"))
    assert response.status_code == 404
    assert response.json()["detail"] == "The rank file of T1 Marathi is missing."


def test_it_says_published_runs_have_no_per_query_data(client):
    from tests.factories import make_run

    run = make_run(demo_reruns()["bm25"].dataset, "published-model", origin=Run.Origin.PUBLISHED)
    response = client.get(errors_url(run, "task=t1&language=hin&format=json"))
    assert response.status_code == 404
    assert "no per-query data" in response.json()["detail"]
    assert "no English→English figure" in response.json()["detail"]


def test_it_hides_a_private_run_from_others(client, django_user_model):
    run = demo_reruns()["bm25"]
    Run.objects.filter(pk=run.pk).update(status=Run.Status.FAILED)
    assert client.get(errors_url(run, "task=t1&language=hin")).status_code == 404
    staff = django_user_model.objects.create_user("staff", "staff@example.org", "pw", is_staff=True)
    client.force_login(staff)
    assert client.get(errors_url(run, "task=t1&language=hin")).status_code == 200


def test_it_keeps_ranks_as_integers_in_order():
    # The ordering rule itself, on a hand-made unit: worst rank first, ties by item id.
    from leaderboard.errors import RankUnit

    unit = RankUnit.from_arrays(
        {"query_item_ids": np.array([5, 3, 9, 1]), "ranks": np.array([2, 7, 7, 1]), "top_item_ids": np.zeros((4, 3))}
    )
    assert unit.query_item_ids[unit.order].tolist() == [3, 9, 5, 1]
    assert unit.bucket_counts() == {"1": 1, "2-5": 1, "6-10": 2, ">10": 0}


def test_it_lists_the_runs_units_when_none_is_asked_for(client):
    run = demo_reruns()["bm25"]
    response = client.get(f"/results/{run.pk}/errors/")
    assert response.status_code == 200
    page = response.content.decode()
    # Every rank file of a task with an errors page (a retrieval task with a gold rank per query).
    ranks = Details.from_dict(run.details).ranks
    units = {(e.task, e.source, e.target) for e in ranks if e.task in TASKS and has_errors_page(TASKS[e.task])}
    links = set(re.findall(r'<a href="\?(task=[^"]+)"', page))
    expected = {
        f"task={task}&amp;language={source}" + (f"&amp;target={target}" if target else "")
        for task, source, target in units
    }
    assert links == expected and len(links) > 2
    # Every link leads to a page that shows the unit's queries.
    first = sorted(links)[0].replace("&amp;", "&")
    assert client.get(f"/results/{run.pk}/errors/?{first}").status_code == 200
    listed = client.get(f"/results/{run.pk}/errors/?format=json").json()["units"]
    assert {unit["unit"] for unit in listed} == {link.replace("&amp;", "&") for link in links}


def test_it_says_why_a_published_run_has_no_units_to_list(client):
    from tests.factories import make_run

    run = make_run(demo_reruns()["bm25"].dataset, "published-model", origin=Run.Origin.PUBLISHED)
    page = client.get(f"/results/{run.pk}/errors/").content.decode()
    assert "no per-query data" in page and f'href="/results/{run.pk}/"' in page


def test_it_downloads_the_queries_shown_as_csv(client):
    run = demo_reruns()["bm25"]
    shown = client.get(errors_url(run, "task=t1&language=hin&format=json")).json()["queries"]
    response = client.get(errors_url(run, "task=t1&language=hin&format=csv"))
    assert response.content.startswith(b"\xef\xbb\xbf")
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert [int(row["item_id"]) for row in rows] == [query["item_id"] for query in shown]
    assert [int(row["gold_rank"]) for row in rows] == [query["rank"] for query in shown]
    assert all(describe(column) is not None for column in rows[0])
