"""An array of an ``enum``: tick the options you want."""

from __future__ import annotations

import copy
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.widgets import SelectionList

from lobster_tui.core.jsvalues import UNDEFINED, js_number_str

from ..normalise import FieldSpec, json_equal
from .base import FieldWidget


class ChecklistField(FieldWidget):
    """An array whose items are one of a few values (``items: {enum: [...]}``), as a ``SelectionList``.

    The answer lists the ticked values in the order they were ticked (prefilled ones first, in
    their given order). ``minItems``/``maxItems`` show as a hint and are checked by the validator.

    | Key | Action |
    | :- | :- |
    | `up`/`down` | Move between options. |
    | `space`, `enter` | Tick or untick. |
    """

    DEFAULT_CSS = """
    ChecklistField SelectionList {
        height: auto;
        max-height: 14;
        width: auto;
        min-width: 24;
    }
    """

    def __init__(self, spec: FieldSpec, *, label: str | None = None, required: bool = False, value: Any = UNDEFINED) -> None:
        super().__init__(spec, label=label, required=required, value=value)
        order = self._indices(self.initial)
        self._order: list[int] = order
        self._shown = self._reported = list(order)
        self._list: SelectionList[int] = SelectionList(
            *[(Text(text), i, i in order) for i, text in enumerate(spec.labels)], compact=True
        )

    def _indices(self, value: Any) -> list[int]:
        if not isinstance(value, list):
            return []
        out: list[int] = []
        for item in value:
            index = next((i for i, option in enumerate(self.spec.options) if json_equal(option, item)), None)
            if index is not None and index not in out:
                out.append(index)
        return out

    def compose_editor(self) -> ComposeResult:
        yield self._list

    def read(self) -> Any:
        return [copy.deepcopy(self.spec.options[i]) for i in self._order]

    def read_pristine(self) -> bool:
        return self._order == self._shown

    def read_blank(self) -> bool:
        return not self._order

    def load(self, value: Any) -> None:
        order = self._indices(value)
        self._order = order
        self._shown = self._reported = list(order)
        self._list.deselect_all()
        for index in order:
            self._list.select(index)

    def hints(self) -> list[str]:
        low, high = self.spec.number("minItems"), self.spec.number("maxItems")
        if low is not None and high is not None:
            return [f"pick {js_number_str(low)}-{js_number_str(high)}"]
        if low is not None and low > 0:
            return [f"pick at least {js_number_str(low)}"]
        if high is not None:
            return [f"pick at most {js_number_str(high)}"]
        return []

    @on(SelectionList.SelectedChanged)
    def _ticked(self, event: SelectionList.SelectedChanged[int]) -> None:
        if event.selection_list is not self._list:
            return
        event.stop()
        ticked = set(self._list.selected)
        self._order = [i for i in self._order if i in ticked] + sorted(ticked.difference(self._order))
        if self._order != self._reported:
            self._reported = list(self._order)
            self.edited()
