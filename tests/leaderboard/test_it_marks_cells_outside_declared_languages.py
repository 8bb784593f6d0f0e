"""Task pages show a model's cells outside its declared languages greyed and labelled, never averaged."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.leaderboard.html import rows_by_first_cells, tables

pytestmark = pytest.mark.django_db
DISTILUSE = "distiluse-base-multilingual-cased-v2"


def first_table(client, task: str, query: str = "") -> tuple[list[str], list[str], str]:
    response = client.get(reverse("leaderboard:task", args=[task]) + query)
    assert response.status_code == 200
    table = next(iter(tables(response.content).values()))
    row = next(row for name, row in rows_by_first_cells(table, 0).items() if name.startswith(DISTILUSE))
    return table[0], row, response.content.decode()


def test_it_greys_out_the_languages_a_model_does_not_declare_and_averages_the_rest(client, published):
    header, row, page = first_table(client, "t1")
    # Tamil is outside DistilUSE's declared languages: its value is shown, labelled, and not averaged.
    assert row[header.index("Tamil")].endswith("not declared")
    assert not row[header.index("Hindi")].endswith("not declared")
    assert page.count('class="outside"') >= 8
    # The mean is the paper's Table 3 average over Gujarati, Hindi, Marathi and Urdu.
    assert row[-1].startswith("10.9")


def test_it_averages_pair_tasks_over_the_declared_pairs(client, published):
    header, row, _ = first_table(client, "t2")
    # Table 4: DistilUSE 7.0 over the 12 ordered pairs of its 4 languages.
    assert row[-1].startswith("7.0")
    assert row[header.index("Tamil")].endswith("not declared")


def test_it_shows_only_the_common_languages_when_asked(client, published):
    header, row, _ = first_table(client, "t1", "?common=on")
    assert header[1:-1] == ["Gujarati", "Hindi", "Marathi", "Urdu"]
    assert not any(cell.endswith("not declared") for cell in row)
