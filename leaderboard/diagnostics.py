"""The diagnostics page: the multi-reference figures per model and language, side by side.

A page builder like those in leaderboard/pages/, kept in its own module; the metrics, their labels,
directions and formats come from the registry.
"""

from __future__ import annotations

from django.http import QueryDict

from evaluation.engine.registry import TASKS, metric, task
from evaluation.models import Score
from leaderboard.pages.selection import ExportTable, Page, filters_context, resolve_selection
from leaderboard.tables.per_language import build_language_table

DIAGNOSTICS_TASK = next(spec.id for spec in TASKS.values() if spec.kind == "diagnostics")
# The three figures that compare models; Max@R itself (a rank, in documents) stays on the run pages.
SHOWN = ("english_preference", "max@r_norm", "complete@10")


def diagnostics_page(params: QueryDict) -> Page:
    spec = task(DIAGNOSTICS_TASK)
    selection = resolve_selection(params, [(DIAGNOSTICS_TASK, spec.main_metric)])
    languages = selection.languages
    values = Score.objects.for_runs(selection.run_ids).per_language(DIAGNOSTICS_TASK, list(SHOWN), languages)
    with_values = {row["run_id"] for row in values}
    infos = [info for info in selection.infos if info.id in with_values]
    tables = []
    for name in SHOWN:
        measure = metric(name)
        table = build_language_table(infos, values, languages, name, higher_is_better=measure.higher_is_better)
        # Best first by the mean over the languages, missing means last.
        table.rows.sort(
            key=lambda row: (row[2].value is None, -(row[2].value or 0) * (1 if measure.higher_is_better else -1))
        )
        tables.append((measure, table))
    headers = ["run_id", "model", "origin", "metric", "language", "value"]
    labels = {info.id: info for info in infos}
    rows = [
        [
            row["run_id"],
            labels[row["run_id"]].label,
            labels[row["run_id"]].origin,
            row["metric"],
            row["source"],
            row["value"],
        ]
        for row in sorted(values, key=lambda r: (r["run_id"], r["metric"], r["source"]))
        if row["run_id"] in labels
    ]
    context = {
        **filters_context(selection),
        "task_spec": spec,
        "tables": tables,
        "runs_without": [info for info in selection.infos if info.id not in with_values],
    }
    return Page("Diagnostics", context, {"diagnostics": ExportTable(headers, rows)})
