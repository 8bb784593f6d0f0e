"""Check in a real browser that every figure on a page was drawn by plotly."""

from __future__ import annotations


def assert_figures_drawn(page, *, expected_traces: dict[str, int] | None = None, timeout_ms: int = 15_000) -> dict:
    """Wait until figures.js has handled every [data-figure] element, then require that all were drawn.

    Returns {figure id: number of traces}. Raises AssertionError naming any figure that failed or
    drew no SVG, or whose trace count differs from `expected_traces`.
    """
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-figure]')].every(e => e.dataset.drawn)", timeout=timeout_ms
    )
    states = page.evaluate(
        """() => [...document.querySelectorAll('[data-figure]')].map(e => ({
            id: e.dataset.figure,
            drawn: e.dataset.drawn,
            svg: e.querySelectorAll('.main-svg').length,
            traces: Array.isArray(e.data) ? e.data.length : 0,
        }))"""
    )
    failed = [state["id"] for state in states if state["drawn"] != "true" or state["svg"] == 0]
    assert not failed, f"figures not drawn: {failed}"
    traces = {state["id"]: state["traces"] for state in states}
    for figure, count in (expected_traces or {}).items():
        assert traces.get(figure) == count, f"{figure}: {traces.get(figure)} traces, expected {count}"
    return traces
