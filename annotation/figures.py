"""Plotly figures of the annotation pages, built in Python and drawn by a small page script."""

from __future__ import annotations

import json

import plotly.graph_objects as go

from evaluation.safe_text import plain_figure


def agreement_figure(rows: list[dict]) -> dict:
    """κ per language with both 95% intervals, beside Gwet's AC1 and Krippendorff's α."""
    names = [row["language_name"] for row in rows]

    def bars(low_key: str, high_key: str) -> dict:
        kappas = [row["kappa"] or 0 for row in rows]
        return {
            "type": "data",
            "symmetric": False,
            "array": [(row[high_key] or 0) - k for row, k in zip(rows, kappas, strict=True)],
            "arrayminus": [k - (row[low_key] or 0) for row, k in zip(rows, kappas, strict=True)],
        }

    figure = go.Figure()
    figure.add_trace(
        go.Scatter(
            x=names,
            y=[row["kappa"] for row in rows],
            mode="markers",
            name="Cohen's κ (95% CI, Fleiss–Cohen–Everitt SE)",
            error_y=bars("kappa_ci_low", "kappa_ci_high"),
            marker={"size": 11, "color": "#c2410c"},
        )
    )
    figure.add_trace(
        go.Scatter(
            x=names,
            y=[row["kappa"] for row in rows],
            mode="markers",
            name="Cohen's κ (95% CI, simple SE as published)",
            error_y=bars("kappa_ci_low_simple", "kappa_ci_high_simple"),
            marker={"size": 7, "color": "#94a3b8", "symbol": "line-ew-open"},
        )
    )
    figure.add_trace(
        go.Scatter(
            x=names,
            y=[row["ac1"] for row in rows],
            mode="markers",
            name="Gwet's AC1",
            marker={"size": 10, "symbol": "diamond", "color": "#0369a1"},
        )
    )
    figure.add_trace(
        go.Scatter(
            x=names,
            y=[row["alpha"] for row in rows],
            mode="markers",
            name="Krippendorff's α",
            marker={"size": 9, "symbol": "square", "color": "#6d28d9"},
        )
    )
    figure.update_layout(
        yaxis={"title": "agreement", "range": [0, 1.02]},
        margin={"l": 50, "r": 10, "t": 10, "b": 40},
        legend={"orientation": "h", "y": -0.2},
        height=380,
        template="plotly_white",
    )
    # Through JSON so that numpy values become plain numbers json_script can serialise.
    # Labels as plain text (Plotly renders HTML in them), like every figure of the site.
    return plain_figure(json.loads(figure.to_json()))
