"""The dataset list: every version with its item count and how many finished runs it has."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.factories import make_dataset, make_run
from tests.leaderboard.html import tables

pytestmark = pytest.mark.django_db


def test_it_lists_versions_with_their_runs(client, published):
    demo = make_dataset("nirdesha-demo", "demo-1", is_demo=True)
    make_run(demo, "org/demo", display_name="Demo")
    page = client.get(reverse("leaderboard:dataset_list")).content.decode()
    rows = {row[0]: row for row in next(iter(tables(page).values()))[1:]}
    assert rows["nirdesha"][1:] == ["1.0", "Apache-2.0", "0 (results only; 50000 per language)", "8"]
    assert rows["nirdesha-demo demo sample"][4] == "1"
    assert f"?dataset={demo.pk}" in page
