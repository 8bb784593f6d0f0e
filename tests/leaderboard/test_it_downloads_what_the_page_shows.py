"""Every download is the table on the page, read in a browser: the same rows in the same order, for the
view's own state (filters, model, task, metric, pair, runs, sort), with documented columns pandas reads."""

from __future__ import annotations

from pathlib import Path

import pandas
import pytest

from evaluation.engine.languages import LANGUAGES
from evaluation.engine.registry import TASKS
from evaluation.models import Run
from leaderboard.columns import compare_axes
from leaderboard.export_vocabulary import describe, score_column
from tests.leaderboard.figures import assert_figures_drawn

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CODE_OF_NAME = {language.name: language.code for language in LANGUAGES}


def download(page, link, tmp_path: Path) -> Path:
    with page.expect_download(timeout=60_000) as info:
        link.click()
    target = tmp_path / info.value.suggested_filename
    info.value.save_as(target)
    return target


def read(path: Path) -> pandas.DataFrame:
    """The CSV as pandas reads it, after checking it starts with the byte-order mark and every column is documented."""
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    frame = pandas.read_csv(path, encoding="utf-8-sig")
    undocumented = [column for column in frame.columns if describe(column) is None]
    assert not undocumented, undocumented
    return frame


def shown_runs(page, selector: str) -> list[int]:
    return [int(value) for value in page.locator(selector).evaluate_all("rows => rows.map(r => r.dataset.run)")]


def test_it_downloads_the_crosslingual_view_with_its_model_task_metric_and_sort(page, live_server, published, tmp_path):
    bge = Run.objects.get(model__name="BAAI/bge-m3")
    # Not the first cross-lingual task, not its main metric, not the model shown by default, sorted by a column.
    page.goto(f"{live_server.url}/crosslingual/?run={bge.pk}&task=t3x&metric=mrr@10&sort=-cross_script")
    assert_figures_drawn(page)
    rows = shown_runs(page, "#split-rows tr[data-run]")
    assert len(rows) == 8
    frame = read(download(page, page.locator("#exports-models a", has_text="CSV"), tmp_path))
    assert list(frame["run_id"]) == rows
    assert set(frame["task"]) == {"t3x"} and set(frame["metric"]) == {"mrr@10"}
    values = list(frame["cross_script"].dropna())
    assert values == sorted(values, reverse=True)

    # The heatmap's own download: the shown model's pairs, one line per off-diagonal cell with a value.
    cells = page.evaluate(
        """() => {
          const figure = document.querySelector('[data-figure=figure-heatmap]').data[0];
          return figure.z.flatMap((row, i) => row.filter((v, j) => i !== j && v !== null)).length;
        }"""
    )
    pairs = read(download(page, page.locator("#exports-pairs a", has_text="CSV"), tmp_path))
    assert len(pairs) == cells > 0
    assert set(pairs["run_id"]) == {bge.pk} and set(pairs["metric"]) == {"mrr@10"} and set(pairs["task"]) == {"t3x"}
    assert {"query_language", "document_language", "ci_low", "ci_high"} <= set(pairs.columns)


def test_it_downloads_the_pair_ranking(page, live_server, published, tmp_path):
    page.goto(f"{live_server.url}/crosslingual/?query_language=tam&document_language=hin")
    rows = shown_runs(page, "#pair-table tbody tr[data-run]")
    assert len(rows) >= 2
    frame = read(download(page, page.locator("#exports-pair_view a", has_text="CSV"), tmp_path))
    assert list(frame["run_id"]) == rows
    assert set(frame["query_language"]) == {"tam"} and set(frame["document_language"]) == {"hin"}
    ranked = frame[frame["block"] == "ranked"]
    assert ranked["rank_best"].notna().all() and (ranked["ci_low"] <= ranked["value"]).all()


def test_it_downloads_the_compared_runs(page, live_server, published, tmp_path):
    chosen = list(Run.objects.filter(dataset__name="nirdesha").order_by("-pk")[:2])
    page.goto(f"{live_server.url}/compare/?runs={chosen[0].pk}&runs={chosen[1].pk}")
    rows = shown_runs(page, "#compare-table tbody tr[data-run]")
    assert rows == [chosen[0].pk, chosen[1].pk]
    frame = read(download(page, page.locator("#exports-compare a", has_text="CSV"), tmp_path))
    assert list(frame["run_id"]) == rows
    assert {"t1_recall@1", "t1_recall@1_ci_low", "t1_recall@1_ci_high"} <= set(frame.columns)
    differences = read(download(page, page.locator("#exports-differences a", has_text="CSV"), tmp_path))
    assert len(differences) == page.locator("#difference-table tbody tr").count() > 0
    assert set(differences["run_a"]) == {chosen[0].pk} and set(differences["run_b"]) == {chosen[1].pk}


def test_it_downloads_the_compared_runs_on_the_language_pair_chosen_on_the_page(page, live_server, published, tmp_path):
    chosen = list(Run.objects.filter(dataset__name="nirdesha").order_by("-pk")[:2])
    page.goto(f"{live_server.url}/compare/?runs={chosen[0].pk}&runs={chosen[1].pk}&languages=hin&languages=tam")
    # The pair is chosen in the page's own form, as a visitor does.
    page.select_option("#compare-language-pair", label="Tamil → Hindi only")
    page.get_by_role("button", name="Compare").click()
    page.wait_for_url("**language_pair=tam-hin**")
    assert "compared on one pair: Tamil queries retrieving Hindi documents" in page.inner_text("#compared-over")
    target = download(page, page.locator("#exports-differences a", has_text="CSV"), tmp_path)
    assert "language_pair-tam-hin" in target.name
    differences = read(target)
    assert len(differences) == page.locator("#difference-table tbody tr").count() > 0
    languages = dict(zip(differences["task"], differences["languages"], strict=False))
    assert languages["t2"] == languages["t3x"] == "tam hin"
    # The monolingual tasks stay means over the selected languages both models cover.
    assert languages["t1"].split() and set(languages["t1"].split()) <= {"hin", "tam"}
    # The summary's T2 column is the pair's value, as the page shows it.
    summary = read(download(page, page.locator("#exports-compare a", has_text="CSV"), tmp_path))
    label = next(label for task, _, label in compare_axes() if task == "t2")
    column = page.locator("#compare-table thead th").all_inner_texts().index(label)
    shown = page.locator("#compare-table tbody tr").first.locator("td").nth(column).inner_text()
    as_shown = summary[f"{score_column('t2', TASKS['t2'].main_metric)}_as_shown"][0]
    assert shown.startswith(f"{as_shown:.1f} [")


def test_it_downloads_the_filtered_and_sorted_overview(page, live_server, published, tmp_path):
    page.goto(f"{live_server.url}/?script=Deva&sort=-params")
    traces = assert_figures_drawn(page)
    # The performance-against-size chart: one trace (one colour) per ranked model with a known size.
    assert traces["figure-size"] >= 2
    rows = shown_runs(page, "#overview-table tbody tr[data-run]")
    target = download(page, page.locator("#exports-overview a", has_text="CSV"), tmp_path)
    assert target.name == "nirdesha-1.0-overview-script-deva_sort-params.csv"
    frame = read(target)
    assert list(frame["run_id"]) == rows and len(rows) == 8
    assert (frame["t1_recall@1_expected"] == 2).all()


@pytest.mark.parametrize("task", ["t1", "t2"])
def test_it_downloads_a_task_page_in_its_order(page, live_server, published, tmp_path, task):
    page.goto(f"{live_server.url}/tasks/{task}/")
    assert_figures_drawn(page)
    # The runs as the first table lists them (ranking blocks, best first); every table shares that order.
    first_table = page.locator("table.task-table").first
    ids = first_table.locator("tbody tr[id^=run-]").evaluate_all("rows => rows.map(r => r.id)")
    rows = [int(value.removeprefix("run-")) for value in ids]
    assert len(rows) == 8 and rows != sorted(rows)
    columns = [CODE_OF_NAME[name] for name in first_table.locator("thead th").all_inner_texts()[1:-1]]
    frame = read(download(page, page.locator(f"#exports-{task} a", has_text="CSV"), tmp_path))
    assert list(dict.fromkeys(frame["run_id"])) == rows
    # Within a run: the languages in the order of the table's columns, then the task's metrics in the registry's order.
    metrics = [metric for metric in TASKS[task].reported_metrics if metric in set(frame["metric"])]
    for _, run_rows in frame.groupby("run_id", sort=False):
        keys = list(zip(run_rows["query_language"], run_rows["metric"], strict=True))
        assert keys == sorted(keys, key=lambda key: (columns.index(key[0]), metrics.index(key[1])))


def test_it_downloads_a_sentence_for_an_empty_selection(client, published):
    response = client.get("/?q=no-such-model-anywhere&format=csv")
    body = response.content.decode("utf-8-sig")
    assert body.startswith("No rows: nothing on this page matches the chosen filters")
    assert "run_id" not in body
