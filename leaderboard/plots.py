"""Plotly figures for the leaderboard pages, built server-side. Pure Python, no Django.

Every function returns a plain JSON-ready dict ({"data": [...], "layout": {...}}) that a page passes
to the browser with `json_script`; static/leaderboard/figures.js draws it with the local plotly.js.
Values come in as fractions (0–1) and are shown as percentages.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from evaluation.safe_text import plain_figure, plain_label

PALETTE = ("#c2410c", "#0369a1", "#6d28d9", "#15803d", "#b45309", "#be185d", "#0f766e", "#4d7c0f")
BASE_LAYOUT = {
    "margin": {"l": 60, "r": 20, "t": 40, "b": 60},
    "font": {"family": "Noto Sans, system-ui, sans-serif", "size": 12},
    "paper_bgcolor": "rgba(0,0,0,0)",
    "plot_bgcolor": "#ffffff",
    "autosize": True,
}


def _as_dict(figure: go.Figure) -> dict:
    # A JSON round trip turns numpy arrays and plotly's typed arrays into plain lists; every label is
    # then made plain text, since Plotly renders HTML (links included) in labels.
    return plain_figure(json.loads(figure.to_json(engine="json")))


def _pct(value: float | None) -> float | None:
    return None if value is None else round(100 * value, 2)


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
) -> dict:
    """Grouped bars: one group per language, one bar per series, with CI whiskers when known."""
    figure = go.Figure()
    for position, (name, points) in enumerate(series.items()):
        values = [point[0] for point in points]
        figure.add_trace(
            go.Bar(
                name=name,
                x=list(categories),
                y=[_pct(v) for v in values],
                error_y=_error(values, [p[1] for p in points], [p[2] for p in points]),
                marker_color=PALETTE[position % len(PALETTE)],
            )
        )
    figure.update_layout(
        **BASE_LAYOUT,
        title={"text": title},
        barmode="group",
        yaxis={"title": {"text": y_title}, "rangemode": "tozero"},
        legend={"orientation": "h", "y": -0.2},
    )
    return _as_dict(figure)


def heatmap(
    matrix: Sequence[Sequence[float | None]],
    labels: Sequence[str],
    *,
    title: str,
    diverging: bool = False,
    colorbar_title: str = "%",
) -> dict:
    """A source×target heatmap (rows = query language, columns = document language)."""
    z = [[_pct(value) for value in row] for row in matrix]
    text = [["" if value is None else f"{value:.1f}" for value in row] for row in z]
    trace: dict = {
        "z": z,
        "x": list(labels),
        "y": list(labels),
        "text": text,
        "texttemplate": "%{text}",
        "hovertemplate": "%{y} → %{x}: %{z:.1f}%<extra></extra>",
        "colorbar": {"title": {"text": colorbar_title}},
        "xgap": 1,
        "ygap": 1,
    }
    if diverging:
        present = [abs(v) for row in z for v in row if v is not None]
        bound = max(present) if present else 1.0
        trace.update(colorscale="RdBu", zmid=0, zmin=-bound, zmax=bound)
    else:
        trace.update(colorscale="YlOrRd")
    figure = go.Figure(go.Heatmap(**trace))
    figure.update_layout(
        **{**BASE_LAYOUT, "margin": {"l": 90, "r": 20, "t": 40, "b": 90}},
        title={"text": title},
        xaxis={"title": {"text": "document language"}, "side": "bottom", "tickangle": -45},
        yaxis={"title": {"text": "query language"}, "autorange": "reversed"},
    )
    return _as_dict(figure)


def reliability_diagram(curves: Mapping[str, Sequence[Mapping]], *, title: str) -> dict:
    """Mean predicted probability against observed frequency per bin, one line per curve.

    Each bin is {"count", "mean_p", "mean_y"}; empty bins are left out. Marker area follows the count.
    """
    figure = go.Figure()
    figure.add_trace(
        go.Scatter(
            x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration", line={"dash": "dash", "color": "#9ca3af"}
        )
    )
    for position, (name, bins) in enumerate(curves.items()):
        used = [b for b in bins if b.get("count")]
        largest = max((b["count"] for b in used), default=1)
        figure.add_trace(
            go.Scatter(
                x=[b["mean_p"] for b in used],
                y=[b["mean_y"] for b in used],
                mode="lines+markers",
                name=name,
                marker={"size": [6 + 14 * (b["count"] / largest) ** 0.5 for b in used]},
                line={"color": PALETTE[position % len(PALETTE)]},
                customdata=[b["count"] for b in used],
                hovertemplate="mean p %{x:.2f}, observed %{y:.2f}, n=%{customdata}<extra>"
                + plain_label(name)
                + "</extra>",
            )
        )
    figure.update_layout(
        **BASE_LAYOUT,
        title={"text": title},
        xaxis={"title": {"text": "mean predicted probability"}, "range": [-0.03, 1.03]},
        yaxis={"title": {"text": "observed frequency of compatible pairs"}, "range": [-0.03, 1.03]},
        legend={"orientation": "h", "y": -0.25},
    )
    return _as_dict(figure)


def radar(axes: Sequence[str], series: Mapping[str, Sequence[float | None]], *, title: str) -> dict:
    """One closed polygon per model over the task axes (percentages)."""
    figure = go.Figure()
    for position, (name, values) in enumerate(series.items()):
        r = [_pct(v) for v in values]
        figure.add_trace(
            go.Scatterpolar(
                r=[*r, r[0]] if r else r,
                theta=[*axes, axes[0]] if axes else [],
                name=name,
                fill="toself",
                opacity=0.55,
                line={"color": PALETTE[position % len(PALETTE)]},
            )
        )
    figure.update_layout(
        **BASE_LAYOUT,
        title={"text": title},
        polar={"radialaxis": {"visible": True, "rangemode": "tozero"}},
        legend={"orientation": "h", "y": -0.15},
    )
    return _as_dict(figure)


def interval_chart(
    labels: Sequence[str], points: Sequence[tuple[float, float | None, float | None]], *, title: str
) -> dict:
    """Each model's overall score with its interval, best at the top."""
    values = [p[0] for p in points]
    figure = go.Figure(
        go.Scatter(
            x=[_pct(v) for v in values],
            y=list(labels),
            mode="markers",
            marker={"size": 9, "color": PALETTE[0]},
            error_x=_error(values, [p[1] for p in points], [p[2] for p in points]),
            hovertemplate="%{y}: %{x:.1f}%<extra></extra>",
        )
    )
    figure.update_layout(
        **{**BASE_LAYOUT, "margin": {"l": 200, "r": 20, "t": 40, "b": 50}},
        title={"text": title},
        xaxis={"title": {"text": "overall Recall@1 (%)"}},
        yaxis={"autorange": "reversed", "automargin": True},
        height=max(260, 28 * len(labels) + 100),
    )
    return _as_dict(figure)
