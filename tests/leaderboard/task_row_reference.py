"""The score cell tag of task.html's row template, as it was before `task_rows` replaced it (kept unchanged).

test_it_writes_the_task_rows_as_the_template_did.py renders the old row template with this tag, so the
reference it compares `task_rows` against shares no cell code with it beyond `score_cell` and the
errors page's address.
"""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from evaluation.engine.languages import BY_CODE
from leaderboard.templatetags.error_tags import errors_href
from leaderboard.templatetags.leaderboard_tags import score_cell

register = template.Library()


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
