"""Text from people (model names, display names, notes) made safe for where it is shown.

- Plotly renders a subset of HTML in every label, title, legend entry and hover text (links
  included), so text placed in a figure is escaped: `<`, `>` and `&` become entities, which Plotly
  shows as the characters themselves.
- Spreadsheets run a cell starting with `=`, `+`, `-`, `@` (or a tab or carriage return before
  one) as a formula, so such CSV cells are prefixed with `'` and shown as text.

No Django import; every figure builder and every CSV export uses these.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import Any

# Keys whose strings are Plotly templates written by us (with %{...} placeholders), or the theme.
_TRUSTED_FIGURE_KEYS = frozenset({"hovertemplate", "texttemplate", "template", "type", "mode", "xaxis", "yaxis"})
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def plain_label(text: str) -> str:
    """Text Plotly shows as written: its markup characters as entities."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def plain_figure(value: Any, key: str | None = None) -> Any:
    """A figure (as a dict from to_json) with every string escaped, except our own templates.

    Trace keys named xaxis / yaxis hold axis ids ("x2"); the layout's axis objects are dicts and are
    walked like everything else.
    """
    if isinstance(value, str):
        return value if key in _TRUSTED_FIGURE_KEYS else plain_label(value)
    if isinstance(value, dict):
        return {
            name: inner if name == "template" else plain_figure(inner, name if isinstance(inner, str) else None)
            for name, inner in value.items()
        }
    if isinstance(value, list):
        return [plain_figure(inner, key) for inner in value]
    return value


def csv_cell(value: Any) -> Any:
    """A value for a CSV cell: None as empty, and text that a spreadsheet would run as a formula quoted."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def write_csv(handle, header: Sequence[Any] | None, rows: Iterable[Sequence[Any]], **options: Any) -> None:
    """The one CSV writer of the exports: every cell through csv_cell (options go to csv.writer)."""
    writer = csv.writer(handle, **options)
    if header is not None:
        writer.writerow([csv_cell(value) for value in header])
    for row in rows:
        writer.writerow([csv_cell(value) for value in row])


def csv_text(header: Sequence[Any] | None, rows: Iterable[Sequence[Any]]) -> str:
    buffer = io.StringIO()
    write_csv(buffer, header, rows)
    return buffer.getvalue()
