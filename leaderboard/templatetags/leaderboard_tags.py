"""Small template helpers for score cells and language-tagged text."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

from django import template
from django.http import QueryDict
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe

from evaluation.engine.languages import BY_CODE
from evaluation.engine.registry import METRICS
from leaderboard.columns import nav_links
from leaderboard.slugs import model_slug
from leaderboard.tables.cells import Cell, format_metric, percent

register = template.Library()

# Table cells stay narrow; the full reason is in the cell's title.
SHORT_NOTES = {
    "reference ECE not comparable": "n/a",
    "no results for this selection": "no results",
}


@register.simple_tag
def task_pages() -> list[tuple[str, str]]:
    """(task id, label) of the tasks with a page of their own, in registry order, for the sub-navigation."""
    return nav_links()


@register.filter
def pct(value: float | None, digits: int = 1) -> str:
    """A fraction as a percentage without the sign: 0.274 -> '27.4'."""
    return percent(value, digits)


@register.simple_tag
def score_cell(cell: Cell, show_ci: bool = True, show_coverage: bool = True) -> str:
    """A <td> for one score: value, interval, coverage, 'not covered' notes and the best mark.

    Built with plain string formatting (numbers need no escaping; the one free-text note is escaped)
    because a per-language table has thousands of cells and format_html would dominate its rendering.
    """
    if cell.missing:
        note = escape(cell.note or "not covered")
        short = escape(SHORT_NOTES.get(cell.note, cell.note or "not covered"))
        # The comma is its own span, so that a table that puts the reason under the dash can drop it.
        return mark_safe(
            f'<td class="missing" title="{note}">—<span class="why"><span class="sep">, </span>{short}</span></td>'
        )
    if cell.outside:
        # Shown, greyed and labelled; never part of the model's average.
        return mark_safe(
            f'<td class="outside" title="{escape(cell.note)}">{percent(cell.value)}'
            '<span class="why"> not declared</span></td>'
        )
    parts = ['<td class="best">' if cell.best else "<td>", percent(cell.value)]
    if show_ci and cell.has_ci:
        parts.append(f' <span class="ci">[{percent(cell.ci_low)}, {percent(cell.ci_high)}]</span>')
    if show_coverage and cell.partial:
        parts.append(
            f' <span class="coverage" title="mean over the {cell.covered} of {cell.expected} selected languages or '
            f'pairs this model covers">{cell.covered}/{cell.expected}</span>'
        )
    parts.append("</td>")
    return mark_safe("".join(parts))


def _text(value: object) -> str:
    """A value as `{{ value }}` renders it: escaped, None as 'None'."""
    return str(escape(value))


def _or_unknown(value: object) -> str:
    """`{{ value|default:"?" }}`."""
    return _text(value) if value else "?"


@register.simple_tag
def overview_rows(table, facts: dict, published_twins: dict) -> str:
    """The overview table's body rows, written as the row template wrote them, byte for byte.

    A board of 1,000 models renders 1,000 rows of about twenty fields each; through template nodes that
    was a third of the page's build. Here each row is one string: every text that comes from a run, a
    model or a language is escaped as the template escaped it, and numbers go through the same filters.
    """
    width = len(table.visible_columns) + 10
    run_page = run_pages("leaderboard:run_detail")
    model_page_of = model_pages()
    several_blocks = table.several_blocks
    previous_block: object = object()
    out: list[str] = []
    for row in table.rows:
        run = row.run
        if several_blocks and row.block != previous_block:
            previous_block = row.block
            out.append(
                f'<tr class="block-head" data-block="{_text(row.block)}"><th scope="rowgroup" colspan="{width}">'
                f"{_text(row.block_label)}</th></tr>"
            )
        model = facts.get(run.id) if isinstance(facts, dict) else None
        rank = _text(row.rank_label)
        ranked_over = f' title="ranked over {_text(", ".join(row.ranked_over))}"' if row.ranked_over else ""
        overall = "—" if row.overall.missing else _text(pct(row.overall.value))
        hub_url = getattr(model, "hub_url", "") if model is not None else ""
        hub = (
            f'<a class="hub-link" href="{_text(hub_url)}" title="on the Hugging Face Hub" '
            'aria-label="on the Hugging Face Hub" rel="noopener"></a>'
            if hub_url
            else ""
        )
        twin = published_twins.get(run.id) if isinstance(published_twins, dict) else None
        twin_link = (
            f' <a class="published-twin" href="{run_page(twin.pk)}" '
            'title="the reference implementation\'s figures for this model">published figures</a>'
            if twin
            else ""
        )
        trained = (
            '<span class="marker trained" title="declared at submission: trained or tuned on Nirdesha data">'
            "trained on Nirdesha</span>"
            if model is not None and model.trained_on_nirdesha
            else ""
        )
        coverage = row.coverage
        partial = " partial" if coverage and not coverage.complete else ""
        averaged = f"averaged over {_text(', '.join(coverage.averaged))}; " if coverage else ""
        declared = run.declared_languages
        declared_text = (
            f"its authors declare {len(declared)} of 12: {_text(', '.join(declared))}"
            if declared
            else "no languages declared by its authors"
        )
        coverage_label = _text(coverage.label) if coverage else ""
        published = run.is_published
        older = (
            f' <span class="badge older-engine" title="scored by engine {_text(run.engine_version)}; not ranked '
            f'against current-engine runs">older engine {_text(run.engine_version)}</span>'
            if run.is_older_engine
            else ""
        )
        cells = "".join(score_cell(cell) for cell in row.ordered_cells(table.visible_columns))
        model_link = _text(model_page_of(run.model_name))
        parameters = _text(params(run.parameter_count)) if run.parameter_count else '<span class="muted">?</span>'
        if model is not None:
            dimension, tokens = _or_unknown(model.embedding_dimension), _or_unknown(model.max_tokens)
            memory = _or_unknown(gigabytes(model.memory_bytes_fp16))
            lock = '<span title="weights not openly downloadable">🔒 </span>' if model.open_weights is False else ""
            licence = _or_unknown(model.license)
        else:
            dimension = tokens = memory = licence = "?"
            lock = ""
        out.append(
            f'<tr data-run="{run.id}" id="run-{run.id}">\n'
            f'  <td class="rank"{ranked_over}>{rank}</td>\n'
            f'  <td class="model" data-rank="{rank}" data-overall="{overall}"><a href="{model_link}">'
            f"{_text(run.label)}</a>{hub}{twin_link}{trained}</td>\n"
            f'  <td class="coverage-label{partial}" title="{averaged}{declared_text}">{coverage_label}</td>\n'
            f'  <td class="origin"><a class="badge {"published" if published else "rerun"}" href="{run_page(run.id)}" '
            f'title="this run\'s page">{"published" if published else "re-run"}</a>{older}</td>\n'
            f"  {score_cell(row.overall)}\n"
            f"  {cells}\n"
            f'  <td class="fact">{parameters}</td>\n'
            f'  <td class="fact">{dimension}</td><td class="fact">{tokens}</td><td class="fact">{memory}</td>'
            f'<td class="fact">{lock}{licence}</td>\n'
            "</tr>"
        )
    return mark_safe("".join(out))


@register.simple_tag
def language_name(code: str) -> str:
    info = BY_CODE.get(code)
    return info.name if info else code


@register.simple_tag
def language_title(code: str) -> str:
    """The English name and the name in the language's own script, for tooltips: 'Hindi · हिन्दी'."""
    info = BY_CODE.get(code)
    return info.name_with_native if info else code


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
def model_page(public_name: str) -> str:
    """The address of a model's own page, from its public name (RunInfo.model_name, EmbeddingModel.public_name)."""
    return reverse("leaderboard:model_detail", args=[model_slug(public_name)])


def model_pages() -> Callable[[str], str]:
    """`model_page` for the rows of a table: the address reversed once, each model's slug put in its place.

    A board of 1,000 models reversed 1,000 addresses, about 6% of its overview's build. A slug holds only
    letters, digits, dots, "-" and "_" (leaderboard/slugs.py), which reverse() leaves as they are, so each
    address is the one `model_page` gives (tests/leaderboard/test_it_links_every_model_name_to_its_page.py)."""
    head = reverse("leaderboard:model_detail", args=["model"])[: -len("model/")]
    return lambda public_name: f"{head}{model_slug(public_name)}/"


def run_pages(view: str) -> Callable[[int], str]:
    """`reverse(view, args=[run_id])` for the rows of a table: reversed once, each run's id put in its place
    (an id is digits, which reverse() leaves as they are)."""
    head, _, tail = reverse(view, args=[0]).rpartition("/0/")
    return lambda run_id: f"{head}/{run_id}/{tail}"


@register.filter
def duration_words(seconds: int | float | None) -> str:
    """A duration as a person reads it: '45 s', '3 min', '1 h 5 min' (run_detail.js writes the same)."""
    if seconds is None:
        return ""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    # Halves round up, as JavaScript's Math.round does in the page's script.
    minutes = int(seconds / 60 + 0.5)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


@register.filter
def get_item(mapping: dict, key: object) -> object:
    return mapping.get(key) if isinstance(mapping, dict) else None


@register.filter
def ordered_cells(row, columns) -> list[Cell]:
    return row.ordered_cells(columns)


@register.filter
def params(count: int | None) -> str:
    """A parameter count with three significant figures: 22713728 -> '22.7M', 560000000 -> '560M', 1.1B, 412K."""
    if not count:
        return ""
    for size, unit in ((1_000_000_000, "B"), (1_000_000, "M"), (1_000, "K")):
        if count >= size:
            return f"{count / size:.3g}{unit}"
    return str(count)


@register.filter
def pretty_json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


@register.filter
def is_structured(value: object) -> bool:
    return isinstance(value, dict | list)


@register.simple_tag
def sort_arrow(current: str, key: str) -> str:
    """▲ or ▼ beside the header the table is sorted by (▼: largest first), nothing elsewhere."""
    current = current or "rank"
    if current.lstrip("-") != key:
        return ""
    arrow, words = ("▼", "sorted, largest first") if current.startswith("-") else ("▲", "sorted, smallest first")
    return mark_safe(f'<span class="sort-arrow" aria-label="{words}">{arrow}</span>')


@register.filter
def gigabytes(size: int | None) -> str:
    """Bytes as GB (fp16 weights), two significant digits below 1 GB: 1120000000 -> '1.1', 45400000 -> '0.045'."""
    if not size:
        return ""
    gb = size / 1e9
    return f"{gb:.1f}" if gb >= 1 else f"{gb:.2g}"


# Tokenizer-coverage figures are not benchmark metrics (they describe the tokenizer), so they have
# their own small label table here.
COVERAGE_LABELS = {
    "tokens_per_word": ("Tokens / word", "tokens per whitespace-separated word"),
    "unk_rate": ("Unknown tokens", "share of tokens that are the unknown token"),
    "texts": ("Texts", "texts measured"),
    "words": ("Words", "words measured"),
    "tokens": ("Tokens", "tokens produced"),
}


@register.simple_tag
def metric_header(name: str) -> str:
    """A table header for a metric: the registry's short label, its full label and meaning in the tooltip."""
    spec = METRICS.get(name)
    if spec is not None:
        title = f"{spec.label}: {spec.description}" if spec.description else spec.label
        unit = " (in %)" if spec.unit == "%" else " (a mean rank, in documents)" if spec.scale == "rank" else ""
        return format_html('<abbr title="{}">{}</abbr>', title + unit, spec.short_label)
    label, meaning = COVERAGE_LABELS.get(name, (name, name))
    return format_html('<abbr title="{}">{}</abbr>', meaning, label)


@register.filter
def folder_name(path: str) -> str:
    """The last part of a folder path: what a reader needs, without the server's directories."""
    return str(path).rstrip("/").rsplit("/", 1)[-1]


@register.simple_tag
def format_value(metric: str, value: float | None) -> str:
    """A stored value in its metric's scale, rounded once (leaderboard.tables.cells.format_metric)."""
    return format_metric(metric, value)


# The site's one way of writing a moment: "23 Nov 2026, 08:16 UTC", machine-readable in <time datetime>.
MOMENT_FORMAT = "%d %b %Y, %H:%M UTC"


@register.filter
def moment(value: datetime | str | None, local: str = "") -> str:
    """A <time> element in the site's one format; `moment:"local"` lets local-time.js show the reader's own zone."""
    when = parse_datetime(value) if isinstance(value, str) else value
    if when is None:
        return ""
    if timezone.is_naive(when):
        when = timezone.make_aware(when, UTC)
    utc = when.astimezone(UTC)
    text = utc.strftime(MOMENT_FORMAT).lstrip("0")
    marker = ' data-local=""' if local == "local" else ""
    return format_html('<time datetime="{}"{}>{}</time>', utc.isoformat(), mark_safe(marker), text)


@register.filter
def person_name(user) -> str:
    """How a person is named to others: the display name they chose, else "user N"; never their e-mail."""
    from evaluation.people import public_person_name

    return public_person_name(user)
