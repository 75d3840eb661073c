"""A read-only table of record items (a list of JSON objects), one column per key."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from ..formatting import cell_text


def record_columns(items: Sequence[dict[str, Any]]) -> list[str]:
    """Every key of every record, in order of first appearance."""
    seen: dict[str, None] = {}
    for item in items:
        for key in item:
            seen.setdefault(str(key), None)
    return list(seen)


class ItemsTable(DataTable):
    """The items a gate would pass on, when they are records; a missing key is an empty cell."""

    DEFAULT_CSS = """
    ItemsTable {
        height: auto;
        max-height: 16;
    }
    """

    def __init__(self, items: Sequence[dict[str, Any]], *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="none", zebra_stripes=True, show_row_labels=True)
        self._items = list(items)

    def on_mount(self) -> None:
        columns = record_columns(self._items)
        for column in columns:
            self.add_column(Text(cell_text(column)), key=column)
        for index, item in enumerate(self._items, start=1):
            self.add_row(*(Text(cell_text(item[c])) if c in item else "" for c in columns), label=str(index))
