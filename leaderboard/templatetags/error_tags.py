"""Template helpers of the error-analysis pages: a text shown in its own script, with its direction."""

from __future__ import annotations

from urllib.parse import urlencode

from django import template
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from evaluation.engine.languages import BY_CODE
from leaderboard.templatetags.leaderboard_tags import _text, model_pages, run_pages, score_cell

register = template.Library()


@register.simple_tag
def script_text(code: str, text: str | None, tag: str = "p") -> str:
    """`<p lang=… dir=… class="text script-…">text</p>`: right to left for Urdu, the script's Noto font."""
    if text is None:
        return format_html('<{} class="missing">text not in the dataset</{}>', tag, tag)
    info = BY_CODE.get(code)
    if info is None or code == "eng":
        return format_html('<{} class="text" lang="en" dir="ltr">{}</{}>', tag, text, tag)
    return format_html(
        '<{} class="text script-{}" lang="{}" dir="{}">{}</{}>',
        tag,
        info.script.lower(),
        info.bcp47,
        "rtl" if info.rtl else "ltr",
        text,
        tag,
    )


def errors_query(task: str, source: str, target: str | None = None) -> str:
    """The errors page's query for one unit (task, query language, document language of a pair)."""
    return urlencode({"task": task, "language": source, **({"target": target} if target else {})})


def errors_href(run_id: int, task: str, source: str, target: str | None = None) -> str:
    return f"{reverse('leaderboard:run_errors', args=[run_id])}?{errors_query(task, source, target)}"


@register.simple_tag
def errors_cell(run, task: str, source: str, target: str | None, units: set) -> str:
    """The run page's "per query" cell of one unit: a link to its errors page, or why there is none."""
    if run.is_published:
        return mark_safe('<td class="missing per-query">no per-query data</td>')
    if (task, source, target) not in units:
        return mark_safe('<td class="missing per-query" title="no rank file for this unit">—</td>')
    href = errors_href(run.pk, task, source, target)
    return format_html('<td class="per-query"><a class="errors-link" href="{}">queries</a></td>', href)


def _errors_link_tails(task: str, languages: list[str]) -> dict[str, str]:
    """Per language, what follows the errors page's address in a task table's link to its queries, escaped.

    The same for every run of a table: written once a table instead of once a cell (12,000 cells at 1,000
    models, where `format_html` a cell took a fifth of the build)."""
    tails = {}
    for code in languages:
        name = BY_CODE[code].name if code in BY_CODE else code
        tails[code] = format_html(
            '?{}" title="{} queries, worst first" aria-label="{} queries, worst first"></a>',
            errors_query(task, code),
            name,
            name,
        )
    return tails


def _cell_with_errors(cell, run, code: str, with_ranks: set[int], errors_page: str, tails: dict[str, str]) -> str:
    """A task table's score cell with, for a re-run, a link to the language's queries, worst first.

    The link has no text of its own (its mark comes from the style sheet, its name from aria-label),
    so the cell still reads as its score in exports and in tests that read tables as text. A
    cross-lingual cell opens the language's first pair; the errors page switches between pairs.
    `errors_page` is the run's errors page (reversed once a row, escaped), `tails` the rest of each
    language's link (_errors_link_tails).
    """
    html = str(score_cell(cell, False))
    if cell.missing or run.is_published or run.id not in with_ranks:
        return html
    return f'{html[: -len("</td>")]} <a class="errors-link" href="{errors_page}{tails[code]}</td>'


@register.simple_tag
def task_rows(table, task: str, with_ranks: set[int], first_table: bool) -> str:
    """A task table's body rows, written as the row template wrote them, byte for byte.

    At 1,000 models a task table has 12,000 score cells, and through template nodes (a tag, an include
    and a reversed address each) they took more than half of a task page's build; the overview's rows
    are written the same way (leaderboard_tags.overview_rows). The first table's rows carry the runs'
    anchors (run-<id>), as the template gave them.
    """
    languages = list(table.languages)
    width = len(languages) + 2
    if not table.rows:
        return mark_safe(f'<tr><td colspan="{width}" class="missing">No results for this selection.</td></tr>')
    run_page = run_pages("leaderboard:run_detail")
    errors_page_of = run_pages("leaderboard:run_errors")
    tails = _errors_link_tails(task, languages)
    model_page_of = model_pages()
    blocks = table.block_by_run if isinstance(table.block_by_run, dict) else {}
    labels = table.block_labels if isinstance(table.block_labels, dict) else {}
    previous_block: object = object()
    out: list[str] = []
    for run, cells, mean in table.rows:
        block = blocks.get(run.id)
        if table.several_blocks and block != previous_block:
            previous_block = block
            out.append(
                f'<tr class="block-head" data-block="{_text(block)}"><th scope="rowgroup" colspan="{width}">'
                f"{_text(labels.get(block))}</th></tr>"
            )
        anchor = f' id="run-{run.id}"' if first_table else ""
        label = _text(run.label)
        kind, word = ("published", "published") if run.is_published else ("rerun", "re-run")
        older = (
            f' <span class="badge older-engine" title="scored by engine {_text(run.engine_version)}; not ranked '
            f'against current-engine runs">older engine {_text(run.engine_version)}</span>'
            if run.is_older_engine
            else ""
        )
        errors_page = _text(errors_page_of(run.id))
        scores = "".join(
            _cell_with_errors(cell, run, code, with_ranks, errors_page, tails)
            for code, cell in zip(languages, cells, strict=False)
        )
        out.append(
            f'<tr data-block="{_text(block)}"{anchor}>\n'
            f'  <td class="model"><a href="{_text(model_page_of(run.model_name))}">{label}</a> '
            f'<a class="badge {kind}" href="{run_page(run.id)}" title="this run\'s page" '
            f'aria-label="{word}: {label}, run {run.id}">{word}</a>{older}{no_per_query_data(run)}</td>\n'
            f"  {scores}{score_cell(mean, False)}\n"
            "</tr>"
        )
    return mark_safe("".join(out))


@register.simple_tag
def no_per_query_data(run) -> str:
    """For a published result in a task table: it has no per-query data (said by the style sheet, so the
    model cell's text stays the model's name)."""
    if not run.is_published:
        return ""
    return mark_safe(
        '<span class="no-per-query" role="img" title="published results carry no per-query data" '
        'aria-label="no per-query data"></span>'
    )
