"""A task page's download lists its rows in the page's order (runs as the tables rank them, then language,
then metric as the task reports them), whatever order the database keeps or returns its scores in."""

from __future__ import annotations

import csv
import io
import re

import pytest

from evaluation.engine.languages import LANGUAGES
from evaluation.engine.registry import TASKS
from evaluation.models import EmbeddingModel, Score
from tests.factories import make_dataset, make_run

pytestmark = pytest.mark.django_db

LANGUAGE_POSITION = {language.code: position for position, language in enumerate(LANGUAGES)}


def stored_backwards(dataset) -> None:
    """Write the version's scores again, last first, so the table holds them in the reverse of the order
    they were made in (a database reading the table in order then returns them backwards)."""
    scores = list(Score.objects.filter(run__dataset=dataset).order_by("-pk"))
    Score.objects.filter(run__dataset=dataset).delete()
    for score in scores:
        score.pk = None
    Score.objects.bulk_create(scores)


def downloaded_rows(client, task: str, dataset) -> list[dict]:
    response = client.get(f"/tasks/{task}/?dataset={dataset.pk}&format=csv")
    assert response.status_code == 200
    return list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))


@pytest.mark.parametrize(("task", "declared"), [("t1", None), ("t2", None), ("t2", ["hin", "tam", "urd"])])
def test_a_task_download_lists_rows_by_ranked_run_language_and_metric(client, task, declared):
    dataset = make_dataset()
    # The better model is made second, so the page's order (best first) is not the order of the run ids.
    weaker = make_run(dataset, "org/beta", level=0.2)
    stronger = make_run(dataset, "org/alpha", level=0.3)
    if declared:
        # Its query languages outside the declared ones are shown, not averaged, and come from a query of
        # their own: in the download they still sit in the table's column order.
        EmbeddingModel.objects.filter(pk=weaker.model_id).update(declared_languages=declared)
    stored_backwards(dataset)

    rows = downloaded_rows(client, task, dataset)
    # The reported metrics the runs have (the factory writes no nDCG@10).
    stored = set(Score.objects.filter(run__dataset=dataset, task=task).values_list("metric", flat=True))
    metrics = [metric for metric in TASKS[task].reported_metrics if metric in stored]
    assert len(metrics) >= 3
    # Every value the page shows is there: two runs, five languages, each metric.
    assert len(rows) == 2 * 5 * len(metrics)
    keys = [(int(row["run_id"]), row["query_language"], row["metric"]) for row in rows]
    # The runs in the order the page's first table lists them.
    page = client.get(f"/tasks/{task}/?dataset={dataset.pk}").content.decode()
    shown = [int(run_id) for run_id in re.findall(r'id="run-(\d+)"', page)]
    assert shown == [stronger.pk, weaker.pk]
    in_order = sorted(keys, key=lambda key: (shown.index(key[0]), LANGUAGE_POSITION[key[1]], metrics.index(key[2])))
    assert keys == in_order
    assert keys[0][0] == stronger.pk
