"""The T4 page: AUROC/AUPRC/ECE per model, the reference's ECE flagged, reliability diagrams from bins."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from tests.factories import make_dataset, make_run, reliability_bins
from tests.leaderboard.html import tables

pytestmark = pytest.mark.django_db
URL = reverse("leaderboard:task", args=["t4"])


def figures(html: str) -> dict[str, dict]:
    found = re.findall(r'<script id="(reliability-[^"]+)" type="application/json">(.*?)</script>', html, re.S)
    return {name: json.loads(body) for name, body in found}


def test_it_flags_the_published_ece_and_says_there_are_no_bins(client, published):
    page = client.get(URL).content.decode()
    table = tables(page)["t4-table"]
    assert table[0][-1] == "Ref. ECE ⚠" and 'title="Reference “ECE” ⚠: the reference runner' in page
    labse = next(row for row in table if row[0].startswith("LaBSE"))
    assert labse[1] == "77.4" and labse[-1].endswith("⚠")
    assert "not comparable with ECE computed here" in page
    assert "No run on this benchmark version has reliability bins" in page
    assert not figures(page)


def test_it_draws_reliability_before_and_after_calibration(client):
    dataset = make_dataset()
    plain = make_run(dataset, "org/plain", display_name="Plain", level=0.2)
    binned = make_run(dataset, "org/binned", display_name="Binned", level=0.3, with_bins=True)
    page = client.get(URL + f"?dataset={dataset.pk}").content.decode()

    drawn = figures(page)
    # Every language with bins has its diagram: Urdu, the fifth, is not left out.
    assert set(drawn) == {"reliability-ben", "reliability-hin", "reliability-mar", "reliability-tam", "reliability-urd"}
    diagonal, before, after = drawn["reliability-hin"]["data"]
    assert diagonal["name"] == "perfect calibration"
    expected = [b for b in reliability_bins(-0.15) if b["count"]]
    assert before["x"] == [b["mean_p"] for b in expected] and before["y"] == [b["mean_y"] for b in expected]
    assert after["name"] == "after calibration (temperature scaling)"
    table = tables(page)["t4-table"]
    assert table[0][1:] == ["AUROC", "AUPRC", "Acc.", "ECE", "ECE cal."]
    binned_row = next(row for row in table if row[0].startswith("Binned"))
    assert binned_row[4] == "9.0 [7.0, 11.0]"  # lower ECE is better: marked best
    chooser = re.search(r'<select id="reliability-run".*?</select>', page, re.S).group(0)
    assert f'value="{binned.pk}" selected' in chooser and f'value="{plain.pk}"' not in chooser
