"""A boolean: a checkbox that carries the field's label."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Checkbox

from lobster_tui.core.jsvalues import UNDEFINED

from ..normalise import FieldSpec
from .base import FieldWidget


class BooleanField(FieldWidget):
    """A ``boolean`` property as a ``Checkbox`` labelled with the field's title.

    A required boolean starts unticked (``false``). An optional one starts *not set* and is left
    out of the answer until it is toggled; ``delete`` sets it back to not set.

    | Key | Action |
    | :- | :- |
    | `space`, `enter` | Toggle. |
    | `delete`, `backspace` | (optional fields) Back to not set. |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("delete,backspace", "unset", "Not set", show=False, id="schema_form.boolean.unset"),
    ]

    def __init__(self, spec: FieldSpec, *, label: str | None = None, required: bool = False, value: Any = UNDEFINED) -> None:
        super().__init__(spec, label=label, required=required, value=value)
        self._state: bool | None = self._state_for(self.initial)
        self._shown = self._state
        self._from_blank = self.initial is UNDEFINED
        """Started without a value and not toggled since: a required ``false`` then counts as blank."""
        self._box_known = bool(self._state)
        """What the checkbox was last set to, so its echo of a programmatic change is ignored."""
        self._box = Checkbox(self._caption(), self._box_known, compact=True)

    @property
    def show_header(self) -> bool:  # type: ignore[override]
        """Only the null toggle needs a row of its own; the checkbox carries the label."""
        return self._null_box is not None

    def _state_for(self, value: Any) -> bool | None:
        if isinstance(value, bool):
            return value
        return False if self.required else None

    def _caption(self) -> str:
        caption = self.label or ""
        if self.required and self._null_box is None and not self.has_class("-root"):
            caption += " *"
        if self._state is None:
            caption += " (not set)"
        return caption.strip() or ("yes" if self._state else "no")

    def compose_editor(self) -> ComposeResult:
        yield self._box

    def read(self) -> Any:
        return UNDEFINED if self._state is None else self._state

    def read_pristine(self) -> bool:
        return self._state == self._shown

    def read_blank(self) -> bool:
        return self._state is None or self._from_blank and self._state is False

    def load(self, value: Any) -> None:
        self._state = self._shown = self._state_for(value)
        self._from_blank = value is UNDEFINED
        self._box_known = bool(self._state)
        self._box.value = self._box_known
        self._box.label = self._caption()

    def relabel(self, label: str | None) -> None:
        super().relabel(label)
        self._box.label = self._caption()

    @on(Checkbox.Changed)
    def _toggled(self, event: Checkbox.Changed) -> None:
        if event.checkbox is not self._box:
            return
        event.stop()
        if event.value == self._box_known:
            return
        self._box_known = self._state = event.value
        self._from_blank = False
        self._box.label = self._caption()
        self.edited()

    def action_unset(self) -> None:
        """Leave an optional boolean out of the answer again."""
        if self.required or self._state is None:
            return
        self._state = None
        self._from_blank = False
        self._box_known = False
        self._box.value = False
        self._box.label = self._caption()
        self.edited()
