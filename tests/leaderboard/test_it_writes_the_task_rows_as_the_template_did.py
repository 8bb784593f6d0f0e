"""A task table's rows, written in Python for speed, are byte for byte what the row template wrote.

task_row_template.html is the row template of task.html as it was before `task_rows` replaced it (at
1,000 models a task table has 12,000 score cells, and their template nodes were more than half of a task
page's build). The tables here hold every kind of row the template knew: blocks, published results (no
per-query data), an older engine, a re-run with rank files (links to its queries in every cell), missing
cells, text that must be escaped, and an empty table.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from django.http import QueryDict
from django.template import Context, Engine

from evaluation.models import Run
from leaderboard.pages.tasks import task_page
from leaderboard.templatetags.error_tags import task_rows
from tests.factories import make_run
from tests.validation import create_validation_dataset

pytestmark = pytest.mark.django_db

# The row template as it was (kept beside this test, read as it is), inside the loop over the page's tables,
# with its cell tag as it was (task_row_reference.py), which the site no longer has.
ROW_TEMPLATE = (Path(__file__).parent / "task_row_template.html").read_text(encoding="utf-8")
REFERENCE = Engine(
    app_dirs=True,
    libraries={
        "leaderboard_tags": "leaderboard.templatetags.leaderboard_tags",
        "error_tags": "leaderboard.templatetags.error_tags",
        "task_row_reference": "tests.leaderboard.task_row_reference",
    },
)


def test_every_kind_of_row_is_written_as_the_row_template_wrote_it():
    dataset = create_validation_dataset(("Hindi", "Tamil"), limit=12)
    call_command("evaluate", "--model", "bm25", "--dataset", dataset.slug, "--tasks", "t1,t2", verbosity=0)
    languages = ("hin", "tam")
    make_run(dataset, "org/alpha", display_name="Alpha <b>&amp;</b>", languages=languages)
    make_run(dataset, "org/paper", display_name="Paper model", origin=Run.Origin.PUBLISHED, languages=languages)
    make_run(dataset, "org/fewer", display_name="Fewer", languages=("hin",))
    older = make_run(dataset, "org/older", display_name="Older", languages=languages)
    Run.objects.filter(pk=older.pk).update(engine_version="1.0.0")
    seen = ""
    for task in ("t1", "t2", "t3x"):
        for query in ("", "languages=hin", "languages=hin&languages=tam&pairs=source", "q=nothing-matches"):
            context = task_page(QueryDict(query), task).context
            expected = REFERENCE.from_string(ROW_TEMPLATE).render(Context(context))
            written = "".join(
                f"<tbody>{task_rows(table, context['task'], context['per_query_runs'], index == 0)}</tbody>"
                for index, (_, table) in enumerate(context["tables"])
            )
            assert written == expected, (task, query)
            seen += written
    # The tables did hold every kind of row (else the comparison above proves less than it says).
    markers = ("block-head", "no-per-query", "older-engine", "errors-link", 'class="missing"', "&lt;b&gt;", 'id="run-')
    for marker in markers:
        assert marker in seen, marker
    assert "No results for this selection." in seen
