"""Figures (leaderboard.plots) are plain JSON with the traces the pages expect; no database needed."""

from __future__ import annotations

import json

import pytest

from leaderboard import plots


def roundtrip(figure: dict) -> dict:
    # What json_script will do: the figure must survive plain JSON unchanged.
    assert json.loads(json.dumps(figure)) == figure
    return figure


def test_it_builds_grouped_bars_with_whiskers_in_percent():
    figure = roundtrip(
        plots.language_bars(
            ["Hindi", "Tamil"],
            {"A": [(0.25, 0.2, 0.3), (None, None, None)], "B": [(0.5, None, None), (0.1, None, None)]},
            title="t",
        )
    )
    first, second = figure["data"]
    assert (first["type"], first["name"], first["y"]) == ("bar", "A", [25.0, None])
    assert first["error_y"]["array"] == [5.0, 0] and first["error_y"]["arrayminus"] == [5.0, 0]
    assert "error_y" not in second or not second["error_y"].get("array")
    assert figure["layout"]["barmode"] == "group"


def test_it_builds_a_heatmap_and_a_centred_asymmetry_map():
    matrix = [[0.5, 0.3], [0.2, None]]
    heat = roundtrip(plots.heatmap(matrix, ["Hindi", "Urdu"], title="t"))
    trace = heat["data"][0]
    assert trace["type"] == "heatmap" and trace["z"] == [[50.0, 30.0], [20.0, None]]
    assert trace["text"][1][1] == ""
    diverging = roundtrip(plots.heatmap([[None, 0.1], [-0.3, None]], ["a", "b"], title="t", diverging=True))
    assert diverging["data"][0]["zmid"] == 0 and diverging["data"][0]["zmin"] == -30.0


def test_it_draws_reliability_curves_without_empty_bins():
    bins = [{"count": 0, "mean_p": 0.05, "mean_y": 0.0}, {"count": 10, "mean_p": 0.3, "mean_y": 0.2}]
    figure = roundtrip(plots.reliability_diagram({"before": bins, "after": bins[1:]}, title="t"))
    diagonal, before, after = figure["data"]
    assert diagonal["x"] == [0, 1]
    assert before["x"] == [0.3] and before["y"] == [0.2] and after["customdata"] == [10]


def test_it_gives_every_metric_its_own_axis():
    figure = roundtrip(plots.per_metric_bars(["T1", "T4 AUROC"], {"A": [0.2, 0.75], "B": [0.1, None]}, title="t"))
    traces = figure["data"]
    assert [(t["name"], t["xaxis"], t["yaxis"], t["y"]) for t in traces] == [
        ("A", "x", "y", [20.0]),
        ("B", "x", "y", [10.0]),
        ("A", "x2", "y2", [75.0]),
        ("B", "x2", "y2", [None]),
    ]
    # One legend entry per model, in the model's own colour on every axis.
    assert [t["showlegend"] for t in traces] == [True, True, False, False]
    assert traces[0]["marker"]["color"] == traces[2]["marker"]["color"] == plots.model_colour("A")
    # An axis without any value is not drawn.
    empty = roundtrip(plots.per_metric_bars(["T1", "T5"], {"A": [0.2, None]}, title="t"))
    assert [note["text"] for note in empty["layout"]["annotations"]] == ["T1"] and len(empty["data"]) == 1


def test_it_keeps_one_colour_per_model_whatever_the_rank():
    first = roundtrip(
        plots.language_bars(["Hindi"], {"LaBSE": [(0.3, None, None)], "BGE-M3": [(0.2, None, None)]}, title="t")
    )
    second = roundtrip(
        plots.language_bars(["Hindi"], {"BGE-M3": [(0.4, None, None)], "LaBSE": [(0.1, None, None)]}, title="t")
    )
    colours = {t["name"]: t["marker"]["color"] for t in first["data"]}
    assert colours == {t["name"]: t["marker"]["color"] for t in second["data"]}
    assert colours["LaBSE"] != colours["BGE-M3"]
    # The paper's eight models have eight different colours, whether named by label or Hub id.
    from evaluation.published import CATALOGUE

    assert len({plots.model_colour(entry.display_name) for entry in CATALOGUE}) == 8
    assert plots.model_colour("sentence-transformers/LaBSE") == plots.model_colour("LaBSE")


def test_it_charts_intervals_best_first():
    figure = roundtrip(plots.interval_chart(["A", "B"], [(0.3, 0.25, 0.35), (0.2, None, None)], title="t"))
    trace = figure["data"][0]
    assert trace["x"] == [30.0, 20.0] and trace["error_x"]["array"] == [5.0, 0]


def test_it_charts_the_overall_score_against_size_on_a_log_axis():
    points = [("E5-Large-Instruct", 560_000_000, 0.30, 0.28, 0.33), ("BGE-M3", 568_000_000, 0.25, None, None)]
    figure = roundtrip(plots.size_chart(points, size_label="parameters"))
    assert figure["layout"]["xaxis"]["type"] == "log"
    # One trace per model, in its own colour (the same as in every other chart), with its interval.
    assert [trace["name"] for trace in figure["data"]] == ["E5-Large-Instruct", "BGE-M3"]
    assert [trace["marker"]["color"] for trace in figure["data"]] == [plots.model_colour(p[0]) for p in points]
    first = figure["data"][0]
    assert first["x"] == [560_000_000] and first["y"] == [30.0]
    assert first["error_y"]["array"] == pytest.approx([3.0]) and first["error_y"]["arrayminus"] == pytest.approx([2.0])
