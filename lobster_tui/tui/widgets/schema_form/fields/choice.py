"""An ``enum`` or a ``const``: radio buttons for a few options, a drop-down for more."""

from __future__ import annotations

import copy
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.widgets import RadioSet, Select, Static

from lobster_tui.core.jsvalues import UNDEFINED

from ..normalise import FieldSpec, json_equal, value_label
from .base import FieldWidget
from .picker import OptionPicker

_INLINE_WIDTH = 60
"""Radio buttons whose labels fit in this many cells sit on one line."""


class ChoiceField(FieldWidget):
    """One value out of a list: ``enum``, titled ``oneOf`` constants, or a fixed ``const``.

    Up to four options are a ``RadioSet`` (an optional field gets a first ``(not set)`` button);
    more are a ``Select`` with type-to-search. A ``const`` has nothing to choose: it is shown,
    not edited, and part of the answer when required (or when it is a union's discriminator).

    | Key | Action |
    | :- | :- |
    | `left`/`right`, `up`/`down` | (radio buttons) Move between options. |
    | `enter`, `space` | (radio buttons) Pick the highlighted option. |
    | `enter` | (drop-down) Open the list; type to search; `enter` picks. |
    """

    DEFAULT_CSS = """
    ChoiceField {
        & RadioSet { width: auto; }
        & RadioSet.-inline { layout: horizontal; }
        & RadioSet.-inline > RadioButton { width: auto; margin-right: 2; }
        & Select { width: 1fr; max-width: 60; }
        & .choice--const { color: $text-muted; }
    }
    """

    def __init__(self, spec: FieldSpec, *, label: str | None = None, required: bool = False, value: Any = UNDEFINED) -> None:
        super().__init__(spec, label=label, required=required, value=value)
        self._const = spec.kind == "const"
        self._labels = spec.labels or tuple(value_label(v) for v in spec.options)
        index = self._index_of(self.initial)
        self._shown: int | None = index
        self._reported: int | None = index
        self._picked: int | None = index
        """The picked option, tracked here so it is right before the widgets are mounted."""
        self._picker = None if self._const else OptionPicker(
            self._labels, required=required, picked=index, inline_width=_INLINE_WIDTH
        )

    def _index_of(self, value: Any) -> int | None:
        if value is UNDEFINED:
            return None
        return next((i for i, option in enumerate(self.spec.options) if json_equal(option, value)), None)

    def compose_editor(self) -> ComposeResult:
        if self._picker is not None:
            yield self._picker.widget
        else:
            yield Static(value_label(self.spec.options[0]), classes="choice--const", markup=False)

    @property
    def picked(self) -> int | None:
        """The index of the picked option, or None."""
        return 0 if self._const else self._picked

    def read(self) -> Any:
        index = self.picked
        return UNDEFINED if index is None else copy.deepcopy(self.spec.options[index])

    def read_pristine(self) -> bool:
        return self._const or self.picked == self._shown

    def read_blank(self) -> bool:
        # A const holds nothing a person entered; its object includes it when it must.
        return self._const or self.picked is None

    def load(self, value: Any) -> None:
        index = self._index_of(value)
        self._shown = self._reported = self._picked = index
        if self._picker is not None:
            self._picker.show(index)

    def _picked_changed(self, index: int | None) -> None:
        self._picked = index
        if index != self._reported:
            self._reported = index
            self.edited()

    @on(RadioSet.Changed)
    @on(Select.Changed)
    def _pick_changed(self, event: RadioSet.Changed | Select.Changed) -> None:
        if self._picker is not None and self._picker.sent(event):
            event.stop()
            self._picked_changed(self._picker.index_in(event))
