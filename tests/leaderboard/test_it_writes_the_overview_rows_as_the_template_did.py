"""The overview's rows, written in Python for speed, are byte for byte what the row template wrote.

overview_row_template.html is the row template as it was before `overview_rows` replaced it (one string per
row: a board of 1,000 models spent a third of its build in template nodes). The board here holds every
kind of row the template knew: blocks, a published twin, an older engine, a model trained on Nirdesha,
closed weights, a Hub link, partial coverage, undeclared languages and text that must be escaped.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.http import QueryDict
from django.template import Context, Template

from evaluation.models import EmbeddingModel, Run
from leaderboard.pages.overview import overview_page
from leaderboard.templatetags.leaderboard_tags import overview_rows
from tests.factories import make_dataset, make_run

pytestmark = pytest.mark.django_db

# The row template as it was (kept beside this test, read as it is).
ROW_TEMPLATE = (Path(__file__).parent / "overview_row_template.html").read_text(encoding="utf-8")


def test_every_kind_of_row_is_written_as_the_row_template_wrote_it():
    dataset = make_dataset()
    make_run(dataset, "org/alpha", display_name="Alpha <b>&amp;</b>", parameter_count=22_700_000)
    make_run(dataset, "org/alpha", display_name="Alpha <b>&amp;</b>", origin=Run.Origin.PUBLISHED)
    make_run(dataset, "org/fewer", display_name="Fewer", languages=("hin", "tam"))
    older = make_run(dataset, "org/older", display_name="Older")
    Run.objects.filter(pk=older.pk).update(engine_version="1.0.0")
    make_run(dataset, "org/trained", display_name="Trained", parameter_count=560_000_000)
    EmbeddingModel.objects.filter(name="org/trained").update(
        trained_on_nirdesha=True,
        open_weights=False,
        license='proprietary "x"',
        hub_url="https://huggingface.co/org/trained?a=1&b=2",
        embedding_dimension=768,
        max_tokens=512,
        memory_bytes_fp16=1_120_000_000,
    )
    seen = ""
    for query in ("", "languages=hin&languages=tam&languages=ben", "common=1"):
        context = overview_page(QueryDict(query)).context
        table = context["table"]
        assert table.rows, query
        expected = Template(ROW_TEMPLATE).render(
            Context({"table": table, "facts": context["facts"], "published_twins": context["published_twins"]})
        )
        written = overview_rows(table, context["facts"], context["published_twins"])
        assert written == expected, query
        seen += written
    # The boards did hold every kind of row (else the comparison above proves less than it says).
    for marker in ("block-head", "published-twin", "older-engine", "marker trained", "hub-link", "🔒", "&lt;b&gt;"):
        assert marker in seen, marker
