"""Read tables out of rendered pages, as a reader would see them."""

from __future__ import annotations

from html.parser import HTMLParser


class _Tables(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._stack: list[str] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._anonymous = 0

    def handle_starttag(self, tag: str, attrs) -> None:
        attributes = dict(attrs)
        if tag == "table":
            name = attributes.get("id") or f"table-{self._anonymous}"
            self._anonymous += 1
            self._stack.append(name)
            self.tables[name] = []
        elif tag == "tr" and self._stack:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None and self._stack:
            self.tables[self._stack[-1]].append(self._row)
            self._row = None
        elif tag == "table" and self._stack:
            self._stack.pop()

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def tables(html: str | bytes) -> dict[str, list[list[str]]]:
    parser = _Tables()
    parser.feed(html.decode() if isinstance(html, bytes) else html)
    return parser.tables


def rows_by_first_cells(table: list[list[str]], column: int = 1) -> dict[str, list[str]]:
    """Body rows keyed by the text of one column (the model name on the overview)."""
    return {row[column]: row for row in table[1:] if len(row) > column}
