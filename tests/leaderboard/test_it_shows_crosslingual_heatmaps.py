"""The cross-lingual page: a language × language heatmap with T1/T3 on the diagonal, asymmetry, script groups."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from evaluation.models import Run, Score
from tests.factories import make_dataset, make_run
from tests.leaderboard.html import tables

pytestmark = pytest.mark.django_db
URL = reverse("leaderboard:crosslingual")


def figure(html: str, name: str) -> dict:
    body = re.search(rf'<script id="{name}" type="application/json">(.*?)</script>', html, re.S)
    assert body, f"{name} missing"
    return json.loads(body.group(1))


def value(model: str, task: str, source: str, target: str | None, metric: str = "recall@1") -> float:
    return Score.objects.get(run__model__name=model, task=task, source=source, target=target, metric=metric).value


def test_it_draws_the_12_by_12_matrix_with_the_monolingual_diagonal(client, published):
    bge = Run.objects.get(model__name="BAAI/bge-m3")
    page = client.get(URL + f"?run={bge.pk}&task=t2").content.decode()
    heat = figure(page, "figure-heatmap")["data"][0]
    names = heat["x"]
    assert len(names) == 12 and names == heat["y"]
    hindi, tamil = names.index("Hindi"), names.index("Tamil")
    assert heat["z"][hindi][tamil] == pytest.approx(100 * value("BAAI/bge-m3", "t2", "hin", "tam"))
    assert heat["z"][hindi][hindi] == pytest.approx(100 * value("BAAI/bge-m3", "t1", "hin", None))

    asym = figure(page, "figure-asymmetry")["data"][0]
    expected = 100 * value("BAAI/bge-m3", "t2", "hin", "tam") - 100 * value("BAAI/bge-m3", "t2", "tam", "hin")
    assert asym["z"][hindi][tamil] == pytest.approx(expected, abs=0.01)
    assert asym["z"][hindi][hindi] is None and asym["zmid"] == 0


def test_it_uses_t3_on_the_diagonal_of_the_reverse_task(client, published):
    e5 = Run.objects.get(model__name="intfloat/multilingual-e5-large-instruct")
    page = client.get(URL + f"?run={e5.pk}&task=t3x&metric=mrr@10").content.decode()
    heat = figure(page, "figure-heatmap")["data"][0]
    urdu = heat["x"].index("Urdu")
    assert heat["z"][urdu][urdu] == pytest.approx(100 * value(e5.model.name, "t3", "urd", None, "mrr@10"))


def test_it_contrasts_same_script_and_cross_script_pairs(client, published):
    bge = Run.objects.get(model__name="BAAI/bge-m3")
    page = client.get(URL + f"?run={bge.pk}").content.decode()
    groups = {row[0]: row[1:] for row in tables(page)["script-groups"][1:]}
    devanagari = [value("BAAI/bge-m3", "t2", "hin", "mar"), value("BAAI/bge-m3", "t2", "mar", "hin")]
    assert groups["Devanagari"] == [f"{100 * sum(devanagari) / 2:.1f}", "2"]
    assert groups["Bengali–Assamese"][1] == "2"
    assert groups["Same script"][1] == "4" and groups["Cross-script"][1] == "128"


def test_it_defaults_to_the_best_cross_lingual_model_and_keeps_filters(client, published):
    page = client.get(URL + "?script=Deva").content.decode()
    assert "E5-Large-Instruct: Recall@1" in page
    heat = figure(page, "figure-heatmap")["data"][0]
    assert heat["x"] == ["Hindi", "Marathi"]
    # The model chooser carries the filters along.
    assert '<input type="hidden" name="script" value="Deva">' in page


def test_it_adds_english_when_the_version_has_english_pairs(client):
    dataset = make_dataset()
    run = make_run(dataset, "org/with-english", languages=("eng", "hin", "tam"), tasks=("t1", "t2"))
    page = client.get(URL + f"?dataset={dataset.pk}&run={run.pk}").content.decode()
    heat = figure(page, "figure-heatmap")["data"][0]
    assert heat["x"] == ["English", "Hindi", "Tamil"] and len(heat["z"]) == 3
    assert heat["z"][0][1] is not None and heat["z"][0][0] is not None  # English→Hindi and English T1
    only_indian = figure(
        client.get(URL + f"?dataset={dataset.pk}&run={run.pk}&languages=hin&languages=tam").content.decode(),
        "figure-heatmap",
    )
    assert only_indian["data"][0]["x"] == ["Hindi", "Tamil"]
