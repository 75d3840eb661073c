"""A map (``additionalProperties``): key-value rows, each value edited per the value schema."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, Input

from lobster_tui.core.jsvalues import UNDEFINED

from ..normalise import FieldSpec, prefill
from .base import FieldWidget, count_hint
from .factory import build_field


@dataclass
class _Row:
    """One key-value row: its widgets and the key it was given."""

    box: Horizontal
    key: Input
    field: FieldWidget
    remove: Button
    shown_key: str
    reported_key: str
    loaded: bool
    """Whether the row came with the value (an empty key then still counts)."""


class KeyValueField(FieldWidget):
    """An object's free-form keys as rows of ``key`` + value + remove, and an add button.

    Values are edited with the field their schema calls for (``additionalProperties``; JSON
    for ``patternProperties`` or when any value is allowed). ``minProperties``/``maxProperties``
    disable the buttons at the limits. A key typed twice is marked; the first row wins.

    | Key | Action |
    | :- | :- |
    | `enter` on a key | Go to its value. |
    | `enter` on ``+ Add key`` | Add a row and put the cursor in its key. |
    """

    DEFAULT_CSS = """
    KeyValueField {
        & .kv--row { height: auto; width: 1fr; }
        & .kv--key { width: 24; margin-right: 1; }
        & .kv--key.-duplicate { color: $text-error; }
        & .kv--row > FieldWidget { width: 1fr; }
        & .kv--remove { width: auto; min-width: 3; margin-left: 1; }
        & .kv--add { width: auto; min-width: 0; }
    }
    """

    group = True

    def __init__(
        self,
        spec: FieldSpec,
        *,
        label: str | None = None,
        required: bool = False,
        value: Any = UNDEFINED,
        reserved: frozenset[str] = frozenset(),
    ) -> None:
        """Create the rows.

        Args:
            spec: The object's spec; ``spec.extra`` is the value schema.
            label: The label row.
            required: Whether the parent requires this property.
            value: The first value (a dict of the free-form keys).
            reserved: Property names handled elsewhere (rows with these keys are marked).
        """
        super().__init__(spec, label=label, required=required, value=value)
        self._value_spec = spec.extra if spec.extra is not None else FieldSpec("raw", {}, reason="any JSON value")
        self._reserved = reserved
        self._rows: list[_Row] = []
        self._reshaped = False
        """Whether rows were added or removed since the value was set."""
        self._add = Button("+ Add key", compact=True, classes="kv--add")
        initial = self.initial if isinstance(self.initial, dict) else {}
        for key, item in initial.items():
            self._rows.append(self._make_row(key, item))
        self._update_buttons()

    def _make_row(self, key: str, item: Any, *, loaded: bool = True) -> _Row:
        key_input = Input(key, placeholder="key", compact=True, classes="kv--key")
        field = build_field(self._value_spec, required=True, value=item)
        remove = Button("✕", compact=True, classes="kv--remove", tooltip="Remove this key")
        box = Horizontal(key_input, field, remove, classes="kv--row")
        return _Row(box, key_input, field, remove, key, key, loaded)

    def compose_editor(self) -> ComposeResult:
        for row in self._rows:
            yield row.box
        yield self._add

    def read(self) -> Any:
        out: dict[str, Any] = {}
        for row in self._rows:
            key = row.key.value
            if key in out or key in self._reserved:
                continue
            if key == "" and row.field.blank and not (row.loaded and row.field.pristine):
                # A row added and left empty is not an answer yet.
                continue
            item = row.field.value
            out[key] = None if item is UNDEFINED else item
        return out

    def read_pristine(self) -> bool:
        return not self._reshaped and all(r.key.value == r.shown_key and r.field.pristine for r in self._rows)

    def read_blank(self) -> bool:
        return not self._rows

    def load(self, value: Any) -> None:
        items = list(value.items()) if isinstance(value, dict) else []
        for index, (key, item) in enumerate(items):
            if index < len(self._rows):
                row = self._rows[index]
                row.shown_key = row.reported_key = key
                row.loaded = True
                row.key.value = key
                row.field.set_value(item)
            else:
                row = self._make_row(key, item)
                self._rows.append(row)
                self._body.mount(row.box, before=self._add)
        for row in self._rows[len(items) :]:
            row.box.remove()
        del self._rows[len(items) :]
        self._reshaped = False
        self._update_buttons()

    def child_at(self, token: str) -> FieldWidget | None:
        return next((row.field for row in self._rows if row.key.value == token), None)

    def key_of(self, child: FieldWidget) -> str | None:
        """The key of the row holding ``child``."""
        return next((row.key.value for row in self._rows if row.field is child), None)

    def child_fields(self) -> list[FieldWidget]:
        return [row.field for row in self._rows]

    def hints(self) -> list[str]:
        if self._reserved:
            return []
        return count_hint(self.spec.number("minProperties"), self.spec.number("maxProperties"), "key")

    def _update_buttons(self) -> None:
        low, high = self.spec.number("minProperties"), self.spec.number("maxProperties")
        self._add.disabled = bool(not self._reserved and high is not None and len(self._rows) >= high)
        for row in self._rows:
            row.remove.disabled = bool(not self._reserved and low is not None and len(self._rows) <= low)
        seen: set[str] = set()
        for row in self._rows:
            key = row.key.value
            row.key.set_class(key in seen or key in self._reserved, "-duplicate")
            seen.add(key)

    @on(Input.Changed, ".kv--key")
    def _key_changed(self, event: Input.Changed) -> None:
        row = next((r for r in self._rows if r.key is event.input), None)
        if row is None:
            return
        event.stop()
        if event.value != row.reported_key:
            row.reported_key = event.value
            self._update_buttons()
            self.edited()

    @on(Input.Submitted, ".kv--key")
    def _key_submitted(self, event: Input.Submitted) -> None:
        row = next((r for r in self._rows if r.key is event.input), None)
        if row is not None:
            event.stop()
            row.field.focus_editor()

    @on(Button.Pressed, ".kv--add, .kv--remove")
    async def _pressed(self, event: Button.Pressed) -> None:
        if event.button is self._add:
            event.stop()
            row = self._make_row("", prefill(self._value_spec), loaded=False)
            self._rows.append(row)
            await self._body.mount(row.box, before=self._add)
            row.key.focus()
        else:
            row = next((r for r in self._rows if r.remove is event.button), None)
            if row is None:
                return
            event.stop()
            index = self._rows.index(row)
            self._rows.remove(row)
            await row.box.remove()
            following = self._rows[index] if index < len(self._rows) else None
            (following.key if following is not None else self._add).focus()
        self._reshaped = True
        self._update_buttons()
        self.edited()
