"""One number format: every figure is rounded once, from the stored value, by one helper (MetricSpec.format).

E5's T2 Hindi→Tamil Recall@1 is stored as 0.18347…: rounding it to 18.35 first and then to one digit
made the heatmap say 18.4 where the tables and the CSV say 18.3.
"""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.urls import reverse

from evaluation.engine.languages import BY_CODE
from evaluation.engine.registry import METRICS
from evaluation.models import Run, Score

pytestmark = pytest.mark.django_db


def test_the_heatmap_the_csv_and_the_api_agree_on_e5_hindi_to_tamil(client, published):
    run = Run.objects.get(model__display_name="E5-Large-Instruct")
    score = Score.objects.get(run=run, task="t2", source="hin", target="tam", metric="recall@1")
    assert round(score.value, 5) == 0.18347
    assert METRICS["recall@1"].format(score.value) == "18.3"

    page = client.get(reverse("leaderboard:crosslingual"), {"task": "t2", "run": run.pk}).content.decode()
    figure = json.loads(re.search(r'<script id="figure-heatmap" type="application/json">(.*?)</script>', page, re.S)[1])
    [trace] = figure["data"]
    names = [BY_CODE[code].name for code in ("hin", "tam")]
    cell = trace["text"][trace["y"].index(names[0])][trace["x"].index(names[1])]
    assert cell == "18.3"
    # Every label of the heatmap is its own stored value rounded once.
    for row, labels in zip(trace["z"], trace["text"], strict=True):
        for z, label in zip(row, labels, strict=True):
            assert label == ("" if z is None else f"{z:.1f}") or z is None

    body = client.get(reverse("leaderboard:crosslingual"), {"task": "t2", "run": run.pk, "format": "csv"})
    rows = list(csv.DictReader(io.StringIO(body.content.decode("utf-8-sig"))))
    [line] = [
        r for r in rows if (r["query_language"], r["document_language"], r["metric"]) == ("hin", "tam", "recall@1")
    ]
    assert line["value_as_shown"] == "18.3"
    assert float(line["value"]) == pytest.approx(score.value)

    api = json.loads(
        client.get(
            "/api/scores/",
            {"model": run.model.name, "task": "t2", "source": "hin", "target": "tam", "metric": "recall@1"},
        ).content
    )
    [result] = api["results"]
    assert METRICS["recall@1"].format(result["value"]) == "18.3"


def test_shown_numbers_are_the_printed_text():
    spec = METRICS["recall@1"]
    for value in (0.18347, 0.18350000000000001, 0.0, 1.0, 0.99951):
        assert spec.shown(value) == float(spec.format(value))
    assert spec.shown(None) is None and spec.format(None) == ""
