"""Refactors keep every page, export and API response byte for byte what it was.

The golden files in tests/leaderboard/golden/ were written by this test from the code before the
leaderboard was driven by the task and metric registry (issue 9), with the published results
imported and a small benchmark version of runs evaluated here (intervals, T4 bins, diagnostics).
There is one file per database (SQLite by default, PostgreSQL with DATABASE_URL).
Set GOLDEN_WRITE=1 to write them again, only when a change of output is intended and reviewed.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
from pathlib import Path

import pytest
from django.db import connection

from evaluation.models import Language, Run, Score
from tests.factories import make_dataset, make_run

# Sequences are reset so that run ids, which appear in links and exports, are the same every time.
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True, reset_sequences=True)]

GOLDEN = Path(__file__).parent / "golden"
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?")
# The footer says when the data last changed, which is when this test wrote it.
LAST_UPDATED = re.compile(r'<span id="last-updated">.*?</span>', re.S)
TASK_PAGES = ("t1", "t2", "t3", "t3x", "t4")


def add_diagnostics(run: Run, languages: tuple[str, ...]) -> None:
    """Multi-reference diagnostics as the engine stores them: one row per language and metric."""
    values = {"max@r": 12.5, "max@r_norm": 0.81, "complete@10": 0.42, "english_preference": 0.17}
    Score.objects.bulk_create(
        Score(run=run, task="multi", source=Language.objects.get(code=code), metric=metric, value=value + index / 100)
        for index, code in enumerate(languages)
        for metric, value in values.items()
    )


def local_version() -> tuple[int, list[int]]:
    dataset = make_dataset()
    runs = [
        make_run(dataset, "org/alpha", display_name="Alpha", level=0.3, with_bins=True, parameter_count=110_000_000),
        make_run(dataset, "org/beta", display_name="Beta", level=0.2, ci=None, tasks=("t1", "t3", "t4")),
    ]
    add_diagnostics(runs[0], ("hin", "mar"))
    # The factory derives the commit from a salted hash; a fixed one keeps the run page stable.
    Run.objects.filter(pk__in=[run.pk for run in runs]).update(resolved_commit="0123456789ab")
    return dataset.pk, [run.pk for run in runs]


def urls(published_ids: dict[str, int], local: int, local_runs: list[int]) -> list[str]:
    three = "&".join(f"runs={published_ids[name]}" for name in ("BGE-M3", "E5-Large-Instruct", "LaBSE"))
    pages = ["/", "/?languages=hin", "/?languages=hin&languages=tam&pairs=source&sort=-t2", f"/?dataset={local}"]
    pages += [f"/tasks/{task}/" for task in TASK_PAGES]
    pages += [f"/tasks/{task}/?dataset={local}" for task in TASK_PAGES]
    pages += ["/tasks/t2/?languages=hin&languages=ben&pairs=source", f"/tasks/t4/?dataset={local}&run={local_runs[0]}"]
    pages += ["/crosslingual/", "/crosslingual/?task=t3x&metric=mrr@10", f"/crosslingual/?dataset={local}"]
    pages += [
        f"/compare/?{three}",
        f"/compare/?{three}&task=t2",
        f"/compare/?dataset={local}&runs={local_runs[0]}&runs={local_runs[1]}",
    ]
    pages += [f"/results/{pk}/" for pk in local_runs]
    # A published run's page is kept as HTML only: its exports repeat the task pages' (and are large).
    exports = [f"/results/{published_ids['BGE-M3']}/"]
    for page in pages:
        joiner = "&" if "?" in page else "?"
        exports += [page, f"{page}{joiner}format=json", f"{page}{joiner}format=csv"]
    api = [
        "/api/leaderboard/",
        "/api/leaderboard/?languages=hin",
        f"/api/leaderboard/?dataset={local}",
        "/api/scores/?model=BAAI/bge-m3&task=t2&metric=recall@1&source=hin",
        "/api/scores/?model=BAAI/bge-m3&monolingual=true&metric=recall@1",
        f"/api/scores/?run={local_runs[0]}&limit=1000",
        "/api/runs/",
        f"/api/runs/{local_runs[0]}/",
        "/api/models/",
    ]
    return exports + api


# A mean of floats depends on the order in which the database adds them up, and PostgreSQL's order
# follows where rows happen to lie on disk. Long floats are therefore compared as numbers, to a
# relative 1e-10 (far beyond any shown figure), not as text: rounding both to a fixed number of
# digits would still differ when the unrounded value lies on a rounding boundary.
# Every decimal in a text is compared so: Python prints the shortest repr, so two floats a bit apart
# can differ in length too (8.73618363458e-05 against 8.736183634580001e-05).
LONG_FLOAT = re.compile(r"-?\d+\.\d+(?:[eE][-+]?\d+)?")


def _close(expected: float, actual: float) -> bool:
    return math.isclose(expected, actual, rel_tol=1e-10, abs_tol=1e-15)


def same(expected, actual) -> bool:
    """Equal, but for the last bits of floats (numbers in JSON, long decimals in text)."""
    numbers = (int, float)
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected == actual
    if isinstance(expected, numbers) and isinstance(actual, numbers):
        return _close(float(expected), float(actual))
    if isinstance(expected, str) and isinstance(actual, str):
        if LONG_FLOAT.sub("<float>", expected) != LONG_FLOAT.sub("<float>", actual):
            return False
        pairs = zip(LONG_FLOAT.findall(expected), LONG_FLOAT.findall(actual), strict=True)
        return all(_close(float(a), float(b)) for a, b in pairs)
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(same(a, b) for a, b in zip(expected, actual, strict=True))
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(same(expected[key], actual[key]) for key in expected)
    return expected == actual


def capture(client, url: str) -> dict:
    response = client.get(url)
    # Creation and finishing times are the only outputs that depend on when the test runs.
    body = TIMESTAMP.sub("<time>", LAST_UPDATED.sub('<span id="last-updated"></span>', response.content.decode()))
    return {
        "status": response.status_code,
        "content_type": response.get("Content-Type", ""),
        "disposition": response.get("Content-Disposition", ""),
        "body": json.loads(body) if "json" in response.get("Content-Type", "") else body,
    }


def golden_name(url: str) -> str:
    return "".join(char if char.isalnum() else "_" for char in url).strip("_") or "root"


def test_it_serves_every_page_export_and_api_response_as_before(client, published):
    published_ids = {run.model.label: run.pk for run in Run.objects.filter(dataset=published).select_related("model")}
    local, local_runs = local_version()
    outputs = {url: capture(client, url) for url in urls(published_ids, local, local_runs)}
    # Compressed, because the pages of twelve languages and 132 pairs repeat a lot (1.6 MB as text).
    # One file per database: SQLite and PostgreSQL sum floats and return unordered rows differently.
    path = GOLDEN / f"responses-{connection.vendor}.json.gz"
    if os.environ.get("GOLDEN_WRITE") == "1":
        GOLDEN.mkdir(exist_ok=True)
        text = json.dumps(outputs, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
        path.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    golden = json.loads(gzip.decompress(path.read_bytes()).decode("utf-8"))
    assert sorted(outputs) == sorted(golden)
    changed = [url for url, expected in golden.items() if not same(expected, outputs[url])]
    assert not changed, f"these responses differ from their golden versions: {changed}"
