"""The page that says what every column of the downloads means (leaderboard.export_vocabulary)."""

from __future__ import annotations

from leaderboard.columns import overview_columns
from leaderboard.export_vocabulary import FIXED, describe, score_column, score_columns
from leaderboard.pages.selection import ExportTable, Page


def export_columns_page() -> Page:
    fixed = list(FIXED)
    scores = score_columns()
    # The overview's score columns, each with the five columns the overview exports for it.
    overview = [
        doc
        for column in overview_columns()
        for suffix in ("", "_ci_low", "_ci_high", "_covered", "_expected")
        if (doc := describe(f"{score_column(column.task, column.metric)}{suffix}")) is not None
    ]
    rows = [[doc.name, doc.unit, doc.meaning] for doc in [*fixed, *scores]]
    context = {"fixed": fixed, "scores": scores, "overview": overview}
    return Page("Download columns", context, {"columns": ExportTable(["name", "unit", "meaning"], rows)})
