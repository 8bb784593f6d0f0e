"""Small template helpers for score cells and language-tagged text."""

from __future__ import annotations

import json

from django import template
from django.http import QueryDict
from django.utils.html import format_html

from evaluation.languages import BY_CODE
from leaderboard.tables import Cell, percent

register = template.Library()

# Table cells stay narrow; the full reason is in the cell's title.
SHORT_NOTES = {
    "reference ECE not comparable": "n/a",
    "no results for this selection": "no results",
}


@register.filter
def pct(value: float | None, digits: int = 1) -> str:
    """A fraction as a percentage without the sign: 0.274 -> '27.4'."""
    return percent(value, digits)


@register.simple_tag
def score_cell(cell: Cell, show_ci: bool = True, show_coverage: bool = True) -> str:
    """A <td> for one score: value, interval, coverage, 'not covered' notes and the best mark."""
    if cell.missing:
        note = cell.note or "not covered"
        short = SHORT_NOTES.get(note, note)
        return format_html('<td class="missing" title="{}">—<span class="why">, {}</span></td>', note, short)
    classes = "best" if cell.best else ""
    ci = ""
    if show_ci and cell.has_ci:
        ci = format_html(' <span class="ci">[{}, {}]</span>', percent(cell.ci_low), percent(cell.ci_high))
    coverage = ""
    if show_coverage and cell.partial:
        coverage = format_html(
            ' <span class="coverage" title="mean over the {} of {} selected languages or pairs this model covers">'
            "{}/{}</span>",
            cell.covered,
            cell.expected,
            cell.covered,
            cell.expected,
        )
    return format_html('<td class="{}">{}{}{}</td>', classes, percent(cell.value), ci, coverage)


@register.simple_tag
def language_name(code: str) -> str:
    info = BY_CODE.get(code)
    return info.name if info else code


@register.simple_tag
def query_with(query: str, **changes: object) -> str:
    """`query` (an urlencoded string) with some parameters replaced, for links that keep the filters."""
    params = QueryDict(query, mutable=True)
    for key, value in changes.items():
        params.pop(key, None)
        if value not in (None, ""):
            params[key] = str(value)
    encoded = params.urlencode()
    return f"?{encoded}" if encoded else "?"


@register.simple_tag
def export_link(query: str, fmt: str, table: str = "") -> str:
    params = QueryDict(query, mutable=True)
    params["format"] = fmt
    if table:
        params["table"] = table
    return "?" + params.urlencode()


@register.filter
def get_item(mapping: dict, key: object) -> object:
    return mapping.get(key) if isinstance(mapping, dict) else None


@register.filter
def ordered_cells(row, columns) -> list[Cell]:
    return row.ordered_cells(columns)


@register.filter
def params(count: int | None) -> str:
    """A parameter count in millions or billions: 560000000 -> '560M'."""
    if not count:
        return ""
    if count >= 1_000_000_000:
        return f"{count / 1_000_000_000:.1f}B"
    return f"{round(count / 1_000_000)}M"


@register.filter
def pretty_json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


@register.filter
def is_structured(value: object) -> bool:
    return isinstance(value, dict | list)
