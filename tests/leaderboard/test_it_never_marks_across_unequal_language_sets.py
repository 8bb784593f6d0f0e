"""No page, export or API row marks or ranks a model against one averaged over other languages (issue 33).

The one ranking rule (leaderboard.tables.cells.mark_best and block_of) decides every "best" mark and
every rank. This walks the pages, their exports and the API on the published results and on a local
version where one model declares fewer languages, and reads what a reader sees: in every table, a
column that marks a best holds, within its block, only values over the same languages; every ranked
row of an export or the API is ranked over the languages it is averaged over.
"""

from __future__ import annotations

import itertools
import json
import re
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from evaluation.engine.languages import BY_CODE
from evaluation.models import Run
from tests.factories import make_dataset, make_run

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

RUN_LINK = re.compile(r"/results/(\d+)/")
LANGUAGE_NAMES = {info.name for info in BY_CODE.values()} | set(BY_CODE)


class Tables(HTMLParser):
    """Every table's header texts and body rows; each cell: its text, classes and whether it shows a
    partial coverage ("3/4"); each row: the run it links to and the block it belongs to."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict] = []
        self._row: dict | None = None
        self._cell: dict | None = None
        self._in_head = False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        classes = set((attributes.get("class") or "").split())
        if tag == "table":
            self.tables.append({"headers": [], "rows": []})
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr" and self.tables:
            block = attributes.get("data-block")
            if "block-head" in classes:
                self.tables[-1]["rows"].append({"block_head": block})
                return
            self._row = {"cells": [], "run": None, "block": block}
        elif tag in ("td", "th") and self._row is not None:
            self._cell = {"text": "", "classes": classes, "partial": False}
        elif tag == "span" and self._cell is not None and "coverage" in classes:
            self._cell["partial"] = True
        elif tag == "a" and self._row is not None and self._row["run"] is None:
            found = RUN_LINK.search(attributes.get("href") or "")
            if found:
                self._row["run"] = int(found.group(1))

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row["cells"].append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._in_head:
                self.tables[-1]["headers"] = [" ".join(cell["text"].split()) for cell in self._row["cells"]]
            else:
                self.tables[-1]["rows"].append(self._row)
            self._row = None
        elif tag == "thead":
            self._in_head = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["text"] += data


def segments(table: dict) -> list[list[dict]]:
    """A table's body rows, split where a block heading row or a row's data-block starts a new block."""
    found: list[list[dict]] = [[]]
    block = None
    for row in table["rows"]:
        if "block_head" in row:
            found.append([])
            continue
        if row["block"] is not None and row["block"] != block and found[-1]:
            found.append([])
        block = row["block"] if row["block"] is not None else block
        found[-1].append(row)
    return [segment for segment in found if segment]


def averaged_languages(client, page: str) -> dict[int, str]:
    """Each run's averaged languages for the page's selection, as the API states them."""
    query = parse_qs(urlsplit(page).query)
    params = {key: value for key, value in query.items() if key in ("dataset", "languages", "pairs", "common")}
    body = json.loads(client.get(f"/api/leaderboard/?{urlencode(params, doseq=True)}").content)
    return {row["run_id"]: row["averaged_languages"] for row in body["rows"]}


def marks_across_unequal_sets(client, page: str) -> list[str]:
    response = client.get(page)
    assert response.status_code == 200, page
    parser = Tables()
    parser.feed(response.content.decode())
    languages = averaged_languages(client, page)
    problems = []
    for table in parser.tables:
        for segment in segments(table):
            width = max(len(row["cells"]) for row in segment)
            for column in range(width):
                cells = [(row, row["cells"][column]) for row in segment if column < len(row["cells"])]
                if not any("best" in cell["classes"] for _, cell in cells):
                    continue
                valued = [(row, cell) for row, cell in cells if not {"missing", "outside"} & cell["classes"]]
                header = table["headers"][column] if column < len(table["headers"]) else ""
                if any(cell["partial"] for _, cell in valued):
                    problems.append(f"{page}: a best in '{header}' beside a value over fewer languages")
                # A single language's column compares one language; any other column an average.
                if header.split(" ·")[0] not in LANGUAGE_NAMES:
                    sets = {languages.get(row["run"]) for row, _ in valued if row["run"] is not None}
                    if len(sets) > 1:
                        problems.append(f"{page}: a best in '{header}' across language sets {sorted(map(str, sets))}")
    return problems


def ranks_across_unequal_sets(client, url: str) -> list[str]:
    body = json.loads(client.get(url).content)
    rows = body.get("rows") or [row for table in body.get("tables", {}).values() for row in table]
    problems = []
    for row in rows:
        ranked = isinstance(row, dict) and row.get("rank_best") is not None
        if ranked and row.get("ranked_over") != row.get("averaged_languages"):
            problems.append(f"{url}: {row.get('model')} ranked over {row.get('ranked_over')}")
    return problems


def local_version_with_fewer_languages() -> tuple[int, list[int]]:
    dataset = make_dataset()
    full = make_run(dataset, "org/full", display_name="Full", level=0.3)
    fewer = make_run(dataset, "org/fewer", display_name="Fewer", level=0.6)
    fewer.model.declared_languages = ["hin"]
    fewer.model.save(update_fields=["declared_languages"])
    return dataset.pk, [full.pk, fewer.pk]


def test_no_page_export_or_api_row_marks_a_model_against_one_over_other_languages(client, published):
    runs = {run.model.label: run.pk for run in Run.objects.filter(dataset=published).select_related("model")}
    local, local_runs = local_version_with_fewer_languages()
    by_languages: dict[str, list[int]] = {}
    for run in Run.objects.filter(dataset=published).select_related("model"):
        by_languages.setdefault(" ".join(sorted(run.model.declared_languages or [])), []).append(run.pk)
    # Compare models that declare different languages (the summary once marked across them).
    mixed = [group[0] for group in by_languages.values()][:4]
    pages = ["/", "/?languages=hin&languages=tam", "/?common=on", f"/?dataset={local}"]
    for task in ("t1", "t2", "t3", "t3x", "t4"):
        pages += [f"/tasks/{task}/", f"/tasks/{task}/?dataset={local}"]
    pages += ["/crosslingual/", "/crosslingual/?task=t3x&metric=mrr@10", f"/crosslingual/?dataset={local}"]
    compare = [
        f"/compare/?{urlencode({'runs': list(pair)}, doseq=True)}&task={task}"
        for pair in itertools.combinations(mixed, 2)
        for task in ("t1", "t2")
    ]
    compare.append(f"/compare/?{urlencode({'runs': list(runs.values())[:4]}, doseq=True)}")
    compare.append(f"/compare/?dataset={local}&runs={local_runs[0]}&runs={local_runs[1]}")
    pages += compare
    pages += [f"/results/{pk}/" for pk in [*local_runs, *mixed]]
    assert len(by_languages) > 1, "the published models should declare different languages"

    problems = [problem for page in pages for problem in marks_across_unequal_sets(client, page)]
    exports = [f"{page}{'&' if '?' in page else '?'}format=json" for page in pages if not page.startswith("/results/")]
    api = ["/api/leaderboard/", "/api/leaderboard/?languages=hin", f"/api/leaderboard/?dataset={local}"]
    problems += [problem for url in exports + api for problem in ranks_across_unequal_sets(client, url)]
    assert problems == []
