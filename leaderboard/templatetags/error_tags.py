"""Template helpers of the error-analysis pages: a text shown in its own script, with its direction."""

from __future__ import annotations

from urllib.parse import urlencode

from django import template
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from evaluation.engine.languages import BY_CODE
from leaderboard.templatetags.leaderboard_tags import score_cell

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


def errors_href(run_id: int, task: str, source: str, target: str | None = None) -> str:
    query = urlencode({"task": task, "language": source, **({"target": target} if target else {})})
    return f"{reverse('leaderboard:run_errors', args=[run_id])}?{query}"


@register.simple_tag
def errors_cell(run, task: str, source: str, target: str | None, units: set) -> str:
    """The run page's "per query" cell of one unit: a link to its errors page, or why there is none."""
    if run.is_published:
        return mark_safe('<td class="missing per-query">no per-query data</td>')
    if (task, source, target) not in units:
        return mark_safe('<td class="missing per-query" title="no rank file for this unit">—</td>')
    href = errors_href(run.pk, task, source, target)
    return format_html('<td class="per-query"><a class="errors-link" href="{}">queries</a></td>', href)


@register.simple_tag
def score_cell_with_errors(cell, run, task: str, languages: list[str], index: int, with_ranks: set[int]) -> str:
    """A task table's score cell with, for a re-run, a link to the language's queries, worst first.

    The link has no text of its own (its mark comes from the style sheet, its name from aria-label),
    so the cell still reads as its score in exports and in tests that read tables as text. A
    cross-lingual cell opens the language's first pair; the errors page switches between pairs.
    """
    html = str(score_cell(cell, False))
    if cell.missing or run.is_published or run.id not in with_ranks:
        return mark_safe(html)
    name = BY_CODE[languages[index]].name if languages[index] in BY_CODE else languages[index]
    link = format_html(
        ' <a class="errors-link" href="{}" title="{} queries, worst first" aria-label="{} queries, worst first"></a>',
        errors_href(run.id, task, languages[index]),
        name,
        name,
    )
    return mark_safe(html[: -len("</td>")] + link + "</td>")


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
