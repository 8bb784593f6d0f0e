"""The reproduction page: the paper's tables beside the published files and our re-runs.

The comparison itself is pure (leaderboard.reproduce); this module only reads what it needs from
the database: the published runs' scores and T4 blocks, the re-runs on the full benchmark, the
models' declared languages and the agreement of any imported validation ratings.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection

from annotation.models import Campaign
from annotation.reports import agreement_details, row_for
from evaluation.models import Dataset, Run, Score
from evaluation.published_import import FULL_BENCHMARK_NAME, FULL_BENCHMARK_VERSION
from leaderboard.pages.selection import ExportTable, Page
from leaderboard.reproduce import (
    DIFFERS,
    REPRODUCES,
    UNAVAILABLE,
    ModelValues,
    Sources,
    load_paper_tables,
    paper_models,
    reproduction,
    summary,
)

CELL_FIELDS = ("table", "model", "language", "metric", "paper", "files", "rerun", "status", "note")


def _values_by_model(runs: list[Run]) -> dict[str, ModelValues]:
    """One ModelValues per model (the newest run wins when a model was run more than once)."""
    values: dict[str, ModelValues] = {}
    by_run: dict[int, dict] = defaultdict(dict)
    rows = Score.objects.filter(run__in=runs).values_list("run_id", "task", "source_id", "target_id", "metric", "value")
    for run_id, task, source, target, metric, value in rows.order_by():
        by_run[run_id][(task, source, target, metric)] = value
    for run in sorted(runs, key=lambda run: (run.finished_at is None, run.finished_at, run.pk)):
        values[run.model.name] = ModelValues(
            scores=by_run.get(run.pk, {}),
            t4_blocks=dict(run.results.published.t4_blocks),
            declared=list(run.model.declared_languages or []),
        )
    return values


def _agreement() -> dict[str, dict[str, float]]:
    """Percent agreement and κ per language from any imported validation ratings."""
    found: dict[str, dict[str, float]] = {}
    datasets = Dataset.objects.filter(
        pk__in=Campaign.objects.filter(campaign_items__ratings__isnull=False).values("dataset")
    ).order_by("pk")
    for dataset in datasets:
        for result in agreement_details(dataset):
            row = row_for(result)
            found.setdefault(row["language"], {"percent_agreement": row["percent_agreement"], "kappa": row["kappa"]})
    return found


def reproduction_sources(models: Collection[str]) -> Sources:
    """The published files and re-runs of the paper's `models` (by name) on the full benchmark.

    Only those models' figures are compared, so only their runs are read: a board of 1,000 re-runs read
    every re-run's 1,200 scores here (1.75 s a build) to compare eight models."""
    dataset = Dataset.objects.filter(name=FULL_BENCHMARK_NAME, version=FULL_BENCHMARK_VERSION).first()
    if dataset is None:
        return Sources(files={}, agreement=_agreement())
    runs = list(Run.objects.on_benchmark(dataset).filter(model__name__in=list(models)))
    published = [run for run in runs if run.is_published]
    reruns = [run for run in runs if not run.is_published]
    labels = {run.model.name: run.model.label for run in runs}
    return Sources(
        files=_values_by_model(published),
        reruns=_values_by_model(reruns),
        agreement=_agreement(),
        labels=labels,
    )


def reproduce_page() -> Page:
    doc = load_paper_tables()
    sources = reproduction_sources(paper_models(doc))
    cells = reproduction(sources, doc)
    counts = summary(cells)
    tables = []
    for table in doc["tables"]:
        tables.append(
            {
                "id": table["table"],
                "task": table["task"],
                "counts": counts.get(table["table"], {}),
                "cells": [cell for cell in cells if cell.table == table["table"]],
            }
        )
    totals = {
        status: sum(1 for cell in cells if cell.status == status) for status in (REPRODUCES, DIFFERS, UNAVAILABLE)
    }
    context = {
        "source": doc["source"],
        "notes": doc.get("notes", {}),
        "tables": tables,
        "totals": totals,
        "labels": sources.labels,
        "has_files": bool(sources.files),
    }
    export = ExportTable(list(CELL_FIELDS), [[getattr(cell, name) for name in CELL_FIELDS] for cell in cells])
    page = Page("Reproducing the paper", context, {"cells": export})
    page.context["json"] = {
        "source": doc["source"],
        "summary": counts,
        "cells": [{name: getattr(cell, name) for name in CELL_FIELDS} | {"unit": cell.unit} for cell in cells],
    }
    return page
