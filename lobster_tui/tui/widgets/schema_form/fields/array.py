"""An array: one row per item, with add, remove and move buttons."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import Button

from lobster_tui.core.jsvalues import UNDEFINED

from ..normalise import FieldSpec, prefill
from .base import FieldWidget, count_hint
from .factory import build_field


@dataclass
class _Row:
    """One item row: its field and its buttons."""

    box: Horizontal
    field: FieldWidget
    up: Button
    down: Button
    remove: Button


class ArrayField(FieldWidget):
    """An ``array`` of strings, numbers, objects... as rows with ``↑``, ``↓`` and ``✕`` buttons.

    ``+ Add`` appends an item (prefilled from the items' ``default``). The buttons are disabled at
    the limits: no adding at ``maxItems``, no removing at ``minItems``, no moving the first item
    up or the last one down. Items of object type are numbered groups.

    | Key | Action |
    | :- | :- |
    | `enter`/`space` on a button | Add, move or remove. |
    | `ctrl+up` / `ctrl+down` | Move the item holding the cursor. |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+up", "move(-1)", "Move item up", show=False, id="schema_form.array.up"),
        Binding("ctrl+down", "move(1)", "Move item down", show=False, id="schema_form.array.down"),
    ]

    DEFAULT_CSS = """
    ArrayField {
        & .array--row { height: auto; width: 1fr; }
        & .array--row > FieldWidget { width: 1fr; }
        & .array--row > Button { width: auto; min-width: 3; margin-left: 1; }
        & .array--add { width: auto; min-width: 0; }
        & > .field--body {
            border-left: outer $primary-muted;
            padding-left: 1;
        }
    }
    """

    group = True

    def __init__(self, spec: FieldSpec, *, label: str | None = None, required: bool = False, value: Any = UNDEFINED) -> None:
        super().__init__(spec, label=label, required=required, value=value)
        assert spec.items is not None
        self._item_spec = spec.items
        self._rows: list[_Row] = []
        self._reshaped = False
        """Whether items were added, removed or moved since the value was set."""
        noun = self._item_spec.title or "item"
        self._add = Button(f"+ Add {noun.lower() if noun.isascii() else noun}", compact=True, classes="array--add")
        for item in self.initial if isinstance(self.initial, list) else []:
            self._rows.append(self._make_row(item))
        self._renumber()

    @property
    def _groups(self) -> bool:
        """Whether items are groups (objects, unions) that carry a numbered label."""
        return self._item_spec.kind in ("object", "union", "array", "checklist") or self._item_spec.nullable

    def _make_row(self, item: Any) -> _Row:
        field = build_field(self._item_spec, required=True, value=item)
        up = Button("↑", compact=True, classes="array--up", tooltip="Move up")
        down = Button("↓", compact=True, classes="array--down", tooltip="Move down")
        remove = Button("✕", compact=True, classes="array--remove", tooltip="Remove")
        return _Row(Horizontal(field, up, down, remove, classes="array--row"), field, up, down, remove)

    def compose_editor(self) -> ComposeResult:
        for row in self._rows:
            yield row.box
        yield self._add

    def read(self) -> Any:
        # A blank item (an empty number) cannot be left out without shifting the others: null.
        return [None if (item := row.field.value) is UNDEFINED else item for row in self._rows]

    def read_pristine(self) -> bool:
        return not self._reshaped and all(row.field.pristine for row in self._rows)

    def read_blank(self) -> bool:
        return not self._rows

    def load(self, value: Any) -> None:
        items = value if isinstance(value, list) else []
        for index, item in enumerate(items):
            if index < len(self._rows):
                self._rows[index].field.set_value(item)
            else:
                row = self._make_row(item)
                self._rows.append(row)
                self._body.mount(row.box, before=self._add)
        for row in self._rows[len(items) :]:
            row.box.remove()
        del self._rows[len(items) :]
        self._reshaped = False
        self._renumber()

    def child_at(self, token: str) -> FieldWidget | None:
        if token.isdigit() and int(token) < len(self._rows):
            return self._rows[int(token)].field
        return None

    def child_fields(self) -> list[FieldWidget]:
        return [row.field for row in self._rows]

    def hints(self) -> list[str]:
        return count_hint(self.spec.number("minItems"), self.spec.number("maxItems"), "item")

    def _renumber(self) -> None:
        """Relabel the items and enable only the buttons that make sense at this length."""
        low, high = self.spec.number("minItems"), self.spec.number("maxItems")
        count = len(self._rows)
        self._add.disabled = high is not None and count >= high
        noun = self._item_spec.title or "Item"
        for index, row in enumerate(self._rows):
            if self._groups:
                row.field.relabel(f"{noun} {index + 1}")
            row.up.disabled = index == 0
            row.down.disabled = index == count - 1
            row.remove.disabled = low is not None and count <= low

    def _row_of(self, button: Button) -> _Row | None:
        return next((r for r in self._rows if button in (r.up, r.down, r.remove)), None)

    def _row_with_focus(self) -> _Row | None:
        focused = self.screen.focused
        for row in self._rows:
            node = focused
            while node is not None and node is not self:
                if node is row.box:
                    return row
                node = node.parent  # type: ignore[assignment]
        return None

    @on(Button.Pressed, ".array--add, .array--up, .array--down, .array--remove")
    async def _pressed(self, event: Button.Pressed) -> None:
        if event.button is self._add:
            event.stop()
            row = self._make_row(prefill(self._item_spec))
            self._rows.append(row)
            await self._body.mount(row.box, before=self._add)
            self._changed_shape()
            if not row.field.focus_editor():
                row.remove.focus()
            return
        row = self._row_of(event.button)
        if row is None:
            return
        event.stop()
        if event.button is row.remove:
            index = self._rows.index(row)
            self._rows.remove(row)
            await row.box.remove()
            self._changed_shape()
            following = self._rows[min(index, len(self._rows) - 1)] if self._rows else None
            (following.remove if following is not None and not following.remove.disabled else self._add).focus()
        else:
            self._move(row, -1 if event.button is row.up else 1)
            # Keep the cursor on the button that was pressed, or its twin when it is now disabled.
            target = event.button if not event.button.disabled else (row.down if event.button is row.up else row.up)
            target.focus()

    def _move(self, row: _Row, step: int) -> None:
        index = self._rows.index(row)
        other = index + step
        if not 0 <= other < len(self._rows):
            return
        self._rows[index], self._rows[other] = self._rows[other], self._rows[index]
        if step < 0:
            self._body.move_child(row.box, before=self._rows[index].box)
        else:
            self._body.move_child(row.box, after=self._rows[index].box)
        self._changed_shape()

    def _changed_shape(self) -> None:
        self._reshaped = True
        self._renumber()
        self.edited()

    def action_move(self, step: int) -> None:
        """Move the item that holds the cursor up (-1) or down (1)."""
        row = self._row_with_focus()
        if row is not None:
            self._move(row, step)
