"""Layout checks in a real browser: tables that do not fit their box, pages that scroll sideways."""

from __future__ import annotations

LAPTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}


def overflowing_tables(page) -> list[str]:
    """Every table wider than the box it sits in (its scrolling wrapper, else its parent), described."""
    return page.evaluate(
        """() => [...document.querySelectorAll('main table')].flatMap(table => {
            const box = table.closest('.table-wrap') || table.parentElement;
            const width = table.getBoundingClientRect().width;
            if (width <= box.clientWidth + 1) return [];
            const heading = table.id || table.className || 'table';
            return [`${heading}: ${Math.round(width)} px in a ${box.clientWidth} px box`];
        })"""
    )


def page_width(page) -> int:
    return page.evaluate("() => document.documentElement.scrollWidth")


def elements_past_the_edge(page, width: int) -> list[str]:
    """The outermost elements that reach past the right edge of the viewport, for a failure message."""
    return page.evaluate(
        """width => [...document.querySelectorAll('body *')].filter(e => {
            const box = e.getBoundingClientRect();
            return box.right > width + 1 && box.width > 0 && !e.closest('.table-wrap, .plot, pre');
        }).slice(0, 8).map(e =>
            `${e.tagName.toLowerCase()}.${e.className}#${e.id}: ${Math.round(e.getBoundingClientRect().right)}`)""",
        width,
    )
