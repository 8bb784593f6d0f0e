"""Plotly figures for the leaderboard pages, built server-side. Pure Python, no Django.

Every function returns a plain JSON-ready dict ({"data": [...], "layout": {...}}) that a page passes
to the browser with `json_script`; static/leaderboard/figures.js draws it with the local plotly.js.
Values come in as fractions (0–1) and are shown as percentages.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from evaluation.published import CATALOGUE
from evaluation.safe_text import plain_figure, plain_label
from leaderboard.tables.cells import format_metric

# One colour per model, the same in every chart. Paul Tol's colour-blind-safe "muted" scheme (nine
# colours) followed by three Okabe–Ito colours and a grey, all distinguishable with the common
# colour-vision deficiencies. The paper's eight models have fixed slots (their catalogue order);
# any other model gets one of the remaining slots from a hash of its name, so it keeps its colour
# across pages and restarts (two such models can share a slot; the legend still names them).
PALETTE = (
    "#332288",  # indigo
    "#88CCEE",  # cyan
    "#44AA99",  # teal
    "#117733",  # green
    "#999933",  # olive
    "#DDCC77",  # sand
    "#CC6677",  # rose
    "#882255",  # wine
    "#AA4499",  # purple
    "#0072B2",  # blue (Okabe–Ito)
    "#E69F00",  # orange (Okabe–Ito)
    "#D55E00",  # vermillion (Okabe–Ito)
    "#777777",  # grey
)
PINNED = {
    key.lower(): position
    for position, entry in enumerate(CATALOGUE)
    for key in (entry.name, entry.display_name, entry.name.rsplit("/", 1)[-1], *entry.aliases)
}
# Curves that are not models (before / after calibration) use two colours no model is pinned to.
CURVE_COLOURS = ("#D55E00", "#0072B2", "#E69F00", "#777777")


def model_colour(name: str) -> str:
    """The colour of a model in every chart, from its Hub id or its label."""
    position = PINNED.get(name.strip().lower())
    if position is None:
        spare = len(PALETTE) - len(CATALOGUE)
        digest = int(hashlib.sha1(name.strip().lower().encode("utf-8")).hexdigest(), 16)
        position = len(CATALOGUE) + digest % spare
    return PALETTE[position]


BASE_LAYOUT = {
    "margin": {"l": 60, "r": 20, "t": 40, "b": 60},
    "font": {"family": "Noto Sans, system-ui, sans-serif", "size": 12},
    "paper_bgcolor": "rgba(0,0,0,0)",
    "plot_bgcolor": "#ffffff",
    "autosize": True,
}


def _as_dict(figure: go.Figure, layout: Mapping | None = None, *, kept_first: Mapping | None = None) -> dict:
    """The figure as plain JSON types, its labels as plain text (Plotly renders HTML, links included, in them).

    `layout` is the layout the figure was built with, when it was given to the constructor: its keys are
    then put in the order `update_layout` used to give them (`_in_update_order`), so the pages' figures
    stay byte for byte what they were."""
    # A JSON round trip turns numpy arrays and plotly's typed arrays into plain lists.
    chart = json.loads(figure.to_json(engine="json"))
    if layout is not None:
        chart["layout"] = _in_update_order(layout, chart["layout"], kept_first=kept_first or {})
    return plain_figure(chart)


def _in_update_order(given: Mapping, validated: dict, *, kept_first: Mapping) -> dict:
    """`validated` (a layout as plotly's constructor writes it: alphabetical, the template last) in the
    order `update_layout(**given)` on an empty figure writes it: the template first, then the given keys,
    those holding objects before those holding values (plotly sets plain values at the end of its batch),
    then whatever was added after (shapes and annotations of a reference line). The keys of
    `kept_first` (a layout the figure started from, such as make_subplots' grid) come before the given
    ones, in their own order.

    The constructor validates a layout about ten times faster than `update_layout` (2 against 15 ms a
    chart, warm): a board's page draws several charts, and every rebuild pays for them."""

    def ordered(given_level: Mapping, validated_level: dict) -> dict:
        objects = [key for key in given_level if isinstance(given_level[key], Mapping)]
        values = [key for key in given_level if not isinstance(given_level[key], Mapping)]
        result = {}
        for key in (*objects, *values):
            if key in validated_level:
                value = validated_level[key]
                if isinstance(given_level[key], Mapping) and isinstance(value, dict):
                    value = ordered(given_level[key], value)
                result[key] = value
        result.update((key, value) for key, value in validated_level.items() if key not in result)
        return result

    head = {"template": validated["template"]} if "template" in validated else {}
    head.update((key, ordered(value, validated[key]) if isinstance(value, Mapping) else validated[key])
                for key, value in kept_first.items())  # fmt: skip
    rest = {key: value for key, value in validated.items() if key != "template" and key not in kept_first}
    return {**head, **ordered(given, rest)}


def _pct(value: float | None) -> float | None:
    # Not rounded: the labels and hover texts round once, from the stored value (MetricSpec.format).
    return None if value is None else 100 * value


def _error(values: Sequence[float | None], lows: Sequence[float | None], highs: Sequence[float | None]) -> dict | None:
    if not any(low is not None for low in lows):
        return None
    plus = [(_pct(h) - _pct(v)) if v is not None and h is not None else 0 for v, h in zip(values, highs, strict=True)]
    minus = [
        (_pct(v) - _pct(lo)) if v is not None and lo is not None else 0 for v, lo in zip(values, lows, strict=True)
    ]
    return {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus, "visible": True}


def language_bars(
    categories: Sequence[str],
    series: Mapping[str, Sequence[tuple[float | None, float | None, float | None]]],
    *,
    title: str,
    y_title: str = "Recall@1 (%)",
    chance: float | None = None,
) -> dict:
    """Grouped bars: one group per language, one bar per series, with CI whiskers when known.

    `chance` (a fraction) draws the metric's chance level as a dashed reference line."""
    bars = []
    for name, points in series.items():
        values = [point[0] for point in points]
        bars.append(
            go.Bar(
                name=name,
                x=list(categories),
                y=[_pct(v) for v in values],
                error_y=_error(values, [p[1] for p in points], [p[2] for p in points]),
                marker_color=model_colour(name),
            )
        )
    layout = {
        # Room at the top for the title and, under it, the legend.
        **BASE_LAYOUT,
        "margin": {**BASE_LAYOUT["margin"], "t": 80},
        "title": {"text": title, "y": 0.98, "yanchor": "top"},
        "barmode": "group",
        "yaxis": {"title": {"text": y_title}, "rangemode": "tozero"},
        # The legend sits above the plot area, so that long language labels below never run into it.
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
        "xaxis": {"automargin": True},
    }
    figure = go.Figure(data=bars, layout=layout)
    if chance is not None:
        figure.add_hline(
            y=_pct(chance),
            line_dash="dash",
            line_color="#888888",
            annotation_text=f"chance {100 * chance:.3g}%",
            annotation_position="top left",
        )
    return _as_dict(figure, layout)


def heatmap(
    matrix: Sequence[Sequence[float | None]],
    labels: Sequence[str],
    *,
    title: str,
    diverging: bool = False,
    colorbar_title: str = "%",
    metric: str = "recall@1",
    links: Sequence[Sequence[str]] | None = None,
    within_noise: Sequence[Sequence[bool | None]] | None = None,
    notes: Sequence[Sequence[str]] | None = None,
) -> dict:
    """A source×target heatmap (rows = query language, columns = document language).

    `links` gives each cell what a click opens ("pair:<query>:<document>", the pair view), as its customdata.
    `within_noise` marks cells whose interval contains 0: they are drawn in the scale's neutral colour
    (z = 0 on a diverging scale) with their figure in parentheses, so that only differences beyond noise
    are coloured; `notes` adds a line per cell to the hover (its interval and verdict)."""
    z = [[_pct(value) for value in row] for row in matrix]
    # Each label is the stored value rounded once, as the tables print it (never the rounded z again).
    text = [[format_metric(metric, value) for value in row] for row in matrix]
    if within_noise is not None:
        for i, row in enumerate(within_noise):
            for j, noise in enumerate(row):
                if noise and z[i][j] is not None:
                    z[i][j] = 0.0
                    text[i][j] = f"({text[i][j]})"
    trace: dict = {
        "z": z,
        "x": list(labels),
        "y": list(labels),
        "text": text,
        "texttemplate": "%{text}",
        "hovertemplate": "%{y} → %{x}: %{text}%<extra></extra>",
        "colorbar": {"title": {"text": colorbar_title}},
        "xgap": 1,
        "ygap": 1,
    }
    if links is not None:
        trace["customdata"] = [list(row) for row in links]
    elif notes is not None:
        trace["customdata"] = [list(row) for row in notes]
        trace["hovertemplate"] = "%{y} → %{x}: %{text}<br>%{customdata}<extra></extra>"
    if diverging:
        present = [abs(v) for row in z for v in row if v is not None]
        bound = max(present) if present else 1.0
        trace.update(colorscale="RdBu", zmid=0, zmin=-bound, zmax=bound)
    else:
        trace.update(colorscale="YlOrRd")
    layout = {
        **BASE_LAYOUT,
        "margin": {"l": 90, "r": 20, "t": 40, "b": 90},
        "title": {"text": title},
        "xaxis": {"title": {"text": "document language"}, "side": "bottom", "tickangle": -45},
        "yaxis": {"title": {"text": "query language"}, "autorange": "reversed"},
    }
    figure = go.Figure(data=[go.Heatmap(**trace)], layout=layout)
    return _as_dict(figure, layout)


def reliability_diagram(curves: Mapping[str, Sequence[Mapping]], *, title: str) -> dict:
    """Mean predicted probability against observed frequency per bin, one line per curve.

    Each bin is {"count", "mean_p", "mean_y"}; empty bins are left out. Marker area follows the count.
    """
    lines = [
        go.Scatter(
            x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration", line={"dash": "dash", "color": "#9ca3af"}
        )
    ]
    for position, (name, bins) in enumerate(curves.items()):
        used = [b for b in bins if b.get("count")]
        largest = max((b["count"] for b in used), default=1)
        lines.append(
            go.Scatter(
                x=[b["mean_p"] for b in used],
                y=[b["mean_y"] for b in used],
                mode="lines+markers",
                name=name,
                marker={"size": [6 + 14 * (b["count"] / largest) ** 0.5 for b in used]},
                line={"color": CURVE_COLOURS[position % len(CURVE_COLOURS)]},
                customdata=[b["count"] for b in used],
                hovertemplate="mean p %{x:.2f}, observed %{y:.2f}, n=%{customdata}<extra>"
                + plain_label(name)
                + "</extra>",
            )
        )
    layout = {
        **BASE_LAYOUT,
        "title": {"text": title},
        "xaxis": {"title": {"text": "mean predicted probability"}, "range": [-0.03, 1.03]},
        "yaxis": {"title": {"text": "observed frequency of compatible pairs"}, "range": [-0.03, 1.03]},
        "legend": {"orientation": "h", "y": -0.25},
    }
    figure = go.Figure(data=lines, layout=layout)
    return _as_dict(figure, layout)


def per_metric_bars(axes: Sequence[str], series: Mapping[str, Sequence[float | None]], *, title: str) -> dict:
    """One small bar chart per metric, each on its own axis, one bar per model in the model's colour.

    A radar puts AUROC (~75) and Recall@1 (~20) on one scale; separate axes keep each comparison
    readable. Values are fractions, shown as percentages. An axis no model has a value on is left out.
    """
    kept = [
        index
        for index in range(len(axes))
        if any(index < len(values) and values[index] is not None for values in series.values())
    ]
    columns = max(1, len(kept))
    # The grid (each axis's domain, each small chart's title) is make_subplots' own, read from a copy
    # made once for this many columns; the titles are then written into it.
    grid = json.loads(_subplot_row(columns, bool(kept)))
    for annotation, index in zip(grid.get("annotations", []), kept, strict=True):
        annotation["text"] = axes[index]
    for column in range(1, len(kept) + 1):
        suffix = "" if column == 1 else str(column)
        grid[f"xaxis{suffix}"]["showticklabels"] = False
        grid[f"yaxis{suffix}"]["rangemode"] = "tozero"
    bars = [
        go.Bar(
            x=[name],
            y=[_pct(values[index])],
            name=name,
            marker_color=model_colour(name),
            showlegend=column == 1,
            legendgroup=name,
            hovertemplate=f"{plain_label(name)}: %{{y:.1f}}%<extra></extra>",
            xaxis=f"x{column if column > 1 else ''}",
            yaxis=f"y{column if column > 1 else ''}",
        )
        for column, index in enumerate(kept, start=1)
        for name, values in series.items()
    ]
    layout = {
        # Room at the top for the title above the small charts' own titles.
        **BASE_LAYOUT,
        "margin": {**BASE_LAYOUT["margin"], "t": 80},
        "title": {"text": title, "y": 0.98, "yanchor": "top"},
        "legend": {"orientation": "h", "x": 0, "y": -0.08, "yanchor": "top"},
        "bargap": 0.15,
    }
    chart = _as_dict(go.Figure(data=bars, layout={**grid, **layout}), layout, kept_first=grid)
    # make_subplots' add_trace sets a trace's axes after validating it, so they came last.
    chart["data"] = [
        {**{key: value for key, value in trace.items() if key not in ("xaxis", "yaxis")}, "xaxis": trace["xaxis"],
         "yaxis": trace["yaxis"]}
        for trace in chart["data"]
    ]  # fmt: skip
    return chart


@functools.lru_cache(maxsize=16)
def _subplot_row(columns: int, titled: bool) -> str:
    """make_subplots' layout (its template left out) for `columns` small charts in one row, as JSON text."""
    figure = make_subplots(
        rows=1, cols=columns, subplot_titles=["title"] * columns if titled else [], horizontal_spacing=0.06
    )
    layout = json.loads(figure.to_json(engine="json"))["layout"]
    return json.dumps({key: value for key, value in layout.items() if key != "template"})


def interval_chart(
    labels: Sequence[str], points: Sequence[tuple[float, float | None, float | None]], *, title: str
) -> dict:
    """Each model's overall score with its interval, best at the top."""
    values = [p[0] for p in points]
    arrays = {
        "x": [_pct(v) for v in values],
        "y": list(labels),
        "color": [model_colour(label) for label in labels],
        "error": _error(values, [p[1] for p in points], [p[2] for p in points]),
    }

    def scatter(upto: int) -> go.Scatter:
        error = arrays["error"]
        return go.Scatter(
            x=arrays["x"][:upto],
            y=arrays["y"][:upto],
            mode="markers",
            marker={"size": 9, "color": arrays["color"][:upto]},
            error_x=error and {**error, "array": error["array"][:upto], "arrayminus": error["arrayminus"][:upto]},
            hovertemplate="%{y}: %{x:.1f}%<extra></extra>",
        )

    layout = {
        **BASE_LAYOUT,
        "margin": {"l": 200, "r": 20, "t": 40, "b": 50},
        "title": {"text": title},
        "xaxis": {"title": {"text": "overall Recall@1 (%)"}},
        "yaxis": {"autorange": "reversed", "automargin": True},
        "height": max(260, 28 * len(labels) + 100),
    }
    # plotly validates each element of an array (each colour against its colour names): over half of
    # this chart's time at 1,000 models. The arrays hold one kind of value each, built just above, so
    # plotly validates the chart with their first elements and the whole arrays join its JSON after.
    chart = _as_dict(go.Figure(data=[scatter(1)], layout=layout), layout)
    if len(labels) > 1:
        trace = chart["data"][0]
        trace["x"], trace["y"], trace["marker"]["color"] = arrays["x"], plain_figure(arrays["y"]), arrays["color"]
        if arrays["error"]:
            trace["error_x"].update(array=arrays["error"]["array"], arrayminus=arrays["error"]["arrayminus"])
    return chart


def _in_plotly_order(trace: dict) -> dict:
    """A trace's properties as plotly's validation gives them: alphabetical at every level, with the
    top level's "type" last, and a property set to None left out."""

    def ordered(value: object) -> object:
        if isinstance(value, dict):
            return {key: ordered(value[key]) for key in sorted(value) if value[key] is not None}
        return value

    top = {key: ordered(trace[key]) for key in sorted(trace) if key != "type" and trace[key] is not None}
    return {**top, "type": trace["type"]}


def size_chart(points: Sequence[tuple[str, float, float, float | None, float | None]], *, size_label: str) -> dict:
    """Overall score against model size (parameters, log axis), one colour and legend entry per model.

    `points` are (label, size, overall, ci_low, ci_high), the scores as stored fractions."""
    traces = [
        {
            "type": "scatter",
            "x": [size],
            "y": [_pct(value)],
            "name": label,
            "mode": "markers",
            "marker": {"size": 11, "color": model_colour(label)},
            "error_y": _error([value], [low], [high]),
            # The hover template is ours and left unescaped, so the name inside it is escaped here.
            "hovertemplate": f"{plain_label(label)}: %{{y:.1f}}% at %{{x:.3s}} {size_label}<extra></extra>",
        }
        for label, size, value, low, high in points
    ]
    layout = {
        **BASE_LAYOUT,
        "title": {"text": f"Overall score against size ({size_label}, log scale)"},
        "xaxis": {"title": {"text": size_label}, "type": "log"},
        "yaxis": {"title": {"text": "overall (%)"}},
        "legend": {"orientation": "h", "y": -0.25},
        "height": 420,
    }
    figure = go.Figure(layout=layout)
    # Every trace has the same properties, so plotly validates one of them and the others join the
    # figure as its JSON: validating each of 1,000 one-point traces took more than half of this chart's
    # time. They are given the order a validated trace's JSON has, so the chart is the same either way.
    if traces:
        go.Scatter({key: value for key, value in traces[0].items() if key != "type"})
    chart = _as_dict(figure, layout)
    chart["data"] = plain_figure([_in_plotly_order(trace) for trace in traces])
    return chart


def warm_up() -> None:
    """Build one small figure of every kind the pages draw, for a web process before its first request.

    plotly builds the validators of a trace type when a figure first uses it: over a second for the
    run page's bars on a busy machine, paid by whichever visitor first opens a page with that figure
    in that process. The figures built here are thrown away."""
    series = {"warm-up": [(0.5, 0.4, 0.6)]}
    language_bars(["Hindi"], series, title="", chance=0.1)
    heatmap([[0.5]], ["Hindi"], title="", within_noise=[[True]], notes=[["n"]], links=[["#"]])
    reliability_diagram({"warm-up": [{"mean_p": 0.5, "mean_y": 0.5, "count": 1}]}, title="")
    per_metric_bars(["Recall@1"], {"warm-up": [0.5]}, title="")
    interval_chart(["warm-up"], [(0.5, 0.4, 0.6)], title="")
    size_chart([("warm-up", 1e8, 0.5, 0.4, 0.6)], size_label="parameters")
