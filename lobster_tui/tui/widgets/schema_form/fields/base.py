"""The part every form field shares: label row, null toggle, help line, error line, value rules."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Checkbox, Label, Static

from lobster_tui.core.jsvalues import UNDEFINED, dumps_compact, js_number_str

from ..normalise import FieldSpec, fits

_FOREIGN_PREVIEW = 60

_WIDGETS_ONLY: ContextVar[bool] = ContextVar("schema_form_widgets_only", default=False)


@contextmanager
def widgets_only() -> Iterator[None]:
    """Within this block ``FieldWidget.value`` reads the widgets, never a kept value.

    Tests use it to check that what the widgets *show* is the value that was set.
    """
    token = _WIDGETS_ONLY.set(True)
    try:
        yield
    finally:
        _WIDGETS_ONLY.reset(token)


class FieldWidget(Widget):
    """One schema node as widgets; subclasses supply the editor.

    A field keeps the value it was last given (``set_value``). While nobody has edited it since,
    ``value`` returns exactly that value, so whatever the raw JSON tab puts in comes back out
    unchanged, even where the widgets cannot show it (a number written ``1e3``, text with
    ``\\r\\n``, a value of the wrong type). Once edited, ``value`` is read from the widgets.

    Subclasses implement ``compose_editor``, ``read``, ``read_pristine``, ``read_blank`` and
    ``load``; containers also implement ``child_at`` and ``child_fields``.

    | Key | Action |
    | :- | :- |
    | `space` on the null toggle | Make the value `null` (or not). |
    """

    DEFAULT_CSS = """
    FieldWidget {
        height: auto;
        width: 1fr;
        & > .field--header {
            height: 1;
            width: 1fr;
            & > .field--label { width: auto; }
            & > .field--null { margin-left: 2; }
        }
        & > .field--label { width: 1fr; }
        & > .field--body { height: auto; width: 1fr; }
        & > .field--label { width: 1fr; }
        & > .field--help { color: $text-muted; width: 1fr; }
        & > .field--error { color: $text-error; width: 1fr; display: none; }
        & > .field--error.-shown { display: block; }
    }
    """

    show_header: ClassVar[bool] = True
    """Whether the label row is drawn (a checkbox carries its own label)."""

    group: ClassVar[bool] = False
    """Groups (objects, arrays) put their description and errors above their contents."""

    @dataclass
    class Edited(Message):
        """A person changed this field (typed, picked, added a row...); bubbles to the form."""

        field: FieldWidget

        @property
        def control(self) -> FieldWidget:
            """The field that changed."""
            return self.field

    def __init__(self, spec: FieldSpec, *, label: str | None = None, required: bool = False, value: Any = UNDEFINED) -> None:
        """Create a field.

        Args:
            spec: What to render, from :func:`..normalise.normalise`.
            label: The text of the label row (None for none, as for array items).
            required: Whether the parent object lists this property in ``required``.
            value: The first value (UNDEFINED for a blank field).
        """
        super().__init__()
        self.spec = spec
        self.label = label
        self.required = required
        self.touched = False
        """Whether a person has edited this field; errors beside it show from then on."""
        self._loaded: Any = value
        is_null = spec.nullable and value is None
        self._null_box: Checkbox | None = (
            Checkbox("null", is_null, compact=True, classes="field--null") if spec.nullable else None
        )
        self._null_known = is_null
        # Every widget costs layout time on each refresh, so a plain leaf field is just its label
        # and editor: the body container exists for groups (indent) and nullable fields (disable).
        self._body: Widget = Vertical(classes="field--body") if self.group or spec.nullable else self
        if self._body is not self:
            self._body.disabled = is_null
        self._label_widget = Label(self._label_content(), classes="field--label")
        # The help and error lines are mounted only once they have something to say.
        self._help = Static("", classes="field--help", markup=False)
        self._help_text = ""
        self._error = Static("", classes="field--error", markup=False)
        self._error_text = ""

    # --- what subclasses provide ---------------------------------------------------------------

    def compose_editor(self) -> ComposeResult:
        """The widgets that edit the value."""
        yield from ()

    def read(self) -> Any:
        """The value the widgets show, or UNDEFINED when they hold none."""
        return UNDEFINED

    def read_pristine(self) -> bool:
        """Whether the widgets still show exactly what ``load`` put there."""
        return True

    def read_blank(self) -> bool:
        """Whether the widgets hold nothing a person entered (an optional property is then left out)."""
        return True

    def load(self, value: Any) -> None:
        """Show ``value`` (UNDEFINED: blank) in the widgets."""

    def hints(self) -> list[str]:
        """Short constraint hints for the help line (``3-80 characters``, ``>= 0``)."""
        return []

    def child_at(self, token: str) -> FieldWidget | None:
        """The child field at one JSON Pointer step (a property name or an array index)."""
        return None

    def child_fields(self) -> list[FieldWidget]:
        """The fields directly inside this one."""
        return []

    # --- the value -----------------------------------------------------------------------------

    @property
    def initial(self) -> Any:
        """What the editor starts with: the loaded value, or UNDEFINED when it is null."""
        return UNDEFINED if self.is_null else self._loaded

    @property
    def loaded(self) -> Any:
        """The value last given to ``set_value`` (or the constructor)."""
        return self._loaded

    @property
    def is_null(self) -> bool:
        """Whether the null toggle is on."""
        return self._null_box is not None and self._null_box.value

    @property
    def value(self) -> Any:
        """The field's JSON value; UNDEFINED when it has none (a blank number, nothing picked)."""
        if self.is_null:
            return None
        if self._loaded is not UNDEFINED and self.pristine and not _WIDGETS_ONLY.get():
            return copy.deepcopy(self._loaded)
        return self.read()

    @property
    def pristine(self) -> bool:
        """Whether nobody changed the field since its value was last set."""
        if self._null_box is not None and self._null_box.value != (self._loaded is None):
            return False
        return self.is_null or self.read_pristine()

    @property
    def blank(self) -> bool:
        """Whether the field holds nothing a person entered."""
        return not self.is_null and self.read_blank()

    @property
    def present(self) -> bool:
        """Whether an optional property with this field belongs in its object."""
        return not self.blank or (self._loaded is not UNDEFINED and self.pristine)

    def set_value(self, value: Any) -> None:
        """Show ``value``; it is what ``value`` returns until someone edits the field."""
        self._loaded = value
        is_null = self.spec.nullable and value is None
        if self._null_box is not None:
            self._null_known = is_null
            self._null_box.value = is_null
            self._body.disabled = is_null
        self.load(UNDEFINED if is_null else value)
        self._update_help()

    # --- display -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        if self.show_header and self._null_box is not None:
            with Horizontal(classes="field--header"):
                yield self._label_widget
                yield self._null_box
        elif self.show_header and self.label:
            yield self._label_widget
        self._help_text = self.help_text()
        self._help.update(self._help_text)
        lines = [self._help] if self._help_text else []
        if self.group:
            yield from lines
        if self._body is self:
            yield from self.compose_editor()
        else:
            with self._body:
                yield from self.compose_editor()
        if not self.group:
            yield from lines

    def _place_line(self, line: Static) -> None:
        """Mount the help or error line where it belongs, the first time it is needed.

        Leaves read label, editor, help, error; groups put help and error above their contents.
        """
        if line.parent is not None or not self.is_mounted:
            return
        error_mounted = self._error.parent is not None
        if line is self._help and error_mounted:
            self.mount(line, before=self._error)
        elif self.group:
            self.mount(line, before=self._body)
        else:
            self.mount(line)

    def _label_content(self) -> Content:
        # The root is always required; a marker there would say nothing.
        marked = self.required and not self.has_class("-root")
        return Content.from_markup("[b]$label[/b]" + (" [$text-error]*[/]" if marked else ""), label=self.label or "")

    def relabel(self, label: str | None) -> None:
        """Change the label (array items are renumbered when they move)."""
        self.label = label
        self._label_widget.update(self._label_content())

    def help_text(self) -> str:
        """The help line: description, constraint hints, and a note when the value does not fit."""
        parts = []
        if self.spec.description:
            parts.append(self.spec.description.strip())
        hints = self.hints()
        if hints:
            parts.append(" · ".join(hints))
        value = self._loaded
        if value is not UNDEFINED and not self.is_null and not _fits_here(self.spec, value):
            shown = dumps_compact(value)
            if len(shown) > _FOREIGN_PREVIEW:
                shown = shown[: _FOREIGN_PREVIEW - 1] + "…"
            parts.append(f"holds {shown}, which this form cannot show: edit it in the JSON tab")
        return "\n".join(parts)

    def _update_help(self) -> None:
        text = self.help_text()
        # Updating a Static re-lays out the screen; skip it when nothing changed (every keystroke).
        if text != self._help_text:
            self._help_text = text
            self._help.update(text)
            self._help.display = bool(text)
            if text:
                self._place_line(self._help)

    def show_errors(self, messages: list[str]) -> None:
        """Show validation messages under the field (an empty list clears them)."""
        text = "\n".join(messages)
        if text == self._error_text:
            return
        self._error_text = text
        self._error.update("\n".join(f"✗ {m}" for m in messages))
        self._error.set_class(bool(messages), "-shown")
        self.set_class(bool(messages), "-invalid")
        if messages:
            self._place_line(self._error)

    @property
    def errors_shown(self) -> str:
        """The error text under the field (empty when none)."""
        return self._error_text

    def focus_editor(self) -> bool:
        """Focus the first focusable widget of the field; False when it has none."""
        for widget in self._body.query("*"):
            if widget.focusable and widget is not self._null_box:
                widget.focus()
                return True
        if self._null_box is not None:
            self._null_box.focus()
            return True
        return False

    def edited(self) -> None:
        """Tell the form that a person changed this field."""
        self.touched = True
        self._update_help()
        self.post_message(self.Edited(self))

    @on(Checkbox.Changed, ".field--null")
    def _null_toggled(self, event: Checkbox.Changed) -> None:
        if event.checkbox is not self._null_box:
            return
        event.stop()
        self._body.disabled = event.value
        if event.value != self._null_known:
            self._null_known = event.value
            self.edited()


def count_hint(low: int | float | None, high: int | float | None, noun: str) -> list[str]:
    """``3-80 characters``, ``at least 1 item``, ``at most 5 keys``: a length limit as a hint."""

    def words(count: int | float) -> str:
        return f"{js_number_str(count)} {noun if count == 1 else noun + 's'}"

    if low is not None and high is not None:
        return [words(low) if low == high else f"{js_number_str(low)}-{words(high)}"]
    if low is not None and low > 0:
        return [f"at least {words(low)}"]
    if high is not None:
        return [f"at most {words(high)}"]
    return []


def _fits_here(spec: FieldSpec, value: Any) -> bool:
    """Whether this field (not its children, which say so themselves) can show ``value``."""
    if value is None and spec.nullable:
        return True
    if spec.kind == "object":
        return isinstance(value, dict)
    if spec.kind == "array":
        return isinstance(value, list)
    return fits(spec, value)
