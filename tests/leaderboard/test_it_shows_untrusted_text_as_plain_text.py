"""Text from people is shown as text: no live markup in Plotly labels, no formulas in CSV exports, and a
Hub model's display name comes from staff or the model's files, never from the first submitter."""

from __future__ import annotations

import csv
import io
import json

import pytest

from annotation.figures import agreement_figure
from evaluation.models import EmbeddingModel, Run
from evaluation.safe_text import csv_cell, plain_figure
from evaluation.submissions import Submission, trusted_description
from leaderboard import plots
from tests.factories import make_dataset, make_run

pytestmark = pytest.mark.django_db

KEYS = ("kappa_ci_low", "kappa_ci_high", "kappa_ci_low_simple", "kappa_ci_high_simple")
LINK = '<a href="https://evil.example/">pwn</a> & co'
FORMULA = '=HYPERLINK("https://evil.example/","click")'


def strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for name, inner in value.items() if name != "template" for text in strings(inner)]
    if isinstance(value, list):
        return [text for inner in value for text in strings(inner)]
    return []


def test_it_escapes_markup_in_every_figure_builder():
    figures = [
        plots.language_bars(["hin", "tam"], {LINK: [(0.5, 0.4, 0.6), (0.3, None, None)]}, title=LINK),
        plots.heatmap([[0.1, 0.2], [0.3, None]], [LINK, "tam"], title=LINK),
        plots.per_metric_bars(["T1", "T2", "T3"], {LINK: [0.1, 0.2, 0.3]}, title=LINK),
        plots.interval_chart([LINK], [(0.5, 0.4, 0.6)], title=LINK),
        plots.reliability_diagram({LINK: [{"count": 3, "mean_p": 0.2, "mean_y": 0.3}]}, title=LINK),
        plots.size_chart([(LINK, 1.2e8, 0.4, 0.3, 0.5), ("other", 3e8, 0.2, None, None)], size_label="parameters"),
        agreement_figure([{"language_name": LINK, "kappa": 0.5, "alpha": 0.5, "ac1": 0.6,
                           **dict.fromkeys(KEYS, 0.5)}]),
    ]  # fmt: skip
    for figure in figures:
        shown = " ".join(strings(figure))
        assert "<a" not in shown and "&lt;a href=" in shown and "&amp; co" in shown


def test_it_leaves_our_own_hover_templates_alone():
    figure = plain_figure({"data": [{"hovertemplate": "%{x}<br>%{y}", "name": "<b>"}], "layout": {}})
    assert figure["data"][0] == {"hovertemplate": "%{x}<br>%{y}", "name": "&lt;b&gt;"}


@pytest.mark.parametrize("cell", ["=1+1", "+1", "-1+2", "@SUM(A1)", "\t=1", "\r=1"])
def test_it_quotes_cells_a_spreadsheet_would_run(cell):
    assert csv_cell(cell) == "'" + cell
    assert csv_cell(-0.5) == -0.5 and csv_cell("plain") == "plain" and csv_cell(None) == ""


def test_it_writes_formula_safe_csv_exports(client):
    run = make_run(make_dataset(), "org/alpha", display_name=FORMULA)
    for url in ("/?format=csv", "/tasks/t1/?format=csv", "/crosslingual/?format=csv", f"/results/{run.pk}/?format=csv"):
        body = client.get(url).content.decode()
        cells = [cell for row in csv.reader(io.StringIO(body)) for cell in row]
        assert not any(cell.startswith(("=", "+", "@")) for cell in cells), url
    overview = client.get("/?format=csv").content.decode()
    assert "'" + FORMULA in [cell for row in csv.reader(io.StringIO(overview)) for cell in row]


def test_it_keeps_a_submitter_free_text_off_the_shared_model_row(client):
    from evaluation.preflight import ModelCheck
    from tests.people import make_admin, make_researcher

    check = ModelCheck(name="org/m", is_local=False, commit="c" * 40, files={}, config={})
    check.license, check.parameter_count = "apache-2.0", 1000
    wish = Submission(model="org/m", display_name=LINK, license="<b>mine</b>", parameter_count=5)
    # Only the model's own files speak for it on a shared row; the submitter's claims stay on the run.
    assert trusted_description(make_researcher(), wish, check) == {"license": "apache-2.0", "parameter_count": 1000}
    assert trusted_description(make_admin(), wish, check)["display_name"] == LINK


def test_it_escapes_a_display_name_in_the_page_figures(client):
    run = make_run(make_dataset(), "org/alpha", display_name=LINK)
    page = client.get(f"/results/{run.pk}/").content.decode()
    data = [json.loads(chunk.split(">", 1)[1].split("</script>")[0])
            for chunk in page.split('<script type="application/json"')[1:]]  # fmt: skip
    assert not any("<a href" in text for figure in data for text in strings(figure))
    assert EmbeddingModel.objects.get(pk=Run.objects.get(pk=run.pk).model_id).display_name == LINK
