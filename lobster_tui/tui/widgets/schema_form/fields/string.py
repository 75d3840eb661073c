"""A string: one line of text, or a multi-line editor for long text."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.widgets import Input, TextArea

from lobster_tui.core.jsvalues import UNDEFINED

from ..normalise import FieldSpec
from .base import FieldWidget, count_hint

# What a value of each format looks like; the validator has the final word.
_PLACEHOLDERS = {
    "email": "name@example.com",
    "idn-email": "name@example.com",
    "uri": "https://example.com/path",
    "url": "https://example.com/path",
    "iri": "https://example.com/path",
    "uri-reference": "/path or https://…",
    "date": "YYYY-MM-DD",
    "date-time": "YYYY-MM-DDThh:mm:ssZ",
    "time": "hh:mm:ss",
    "duration": "P1DT2H",
    "uuid": "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx",
    "hostname": "host.example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
}


class StringField(FieldWidget):
    """A string property: an ``Input``, or a ``TextArea`` when the text may be long.

    Long means ``maxLength`` over 200, ``x-multiline: true``, a ``contentMediaType``, or a
    text-ish ``format`` (``markdown``...). ``format`` shows as a placeholder and a hint;
    ``maxLength`` stops typing at the limit. An optional string left empty is left out.

    | Key | Action |
    | :- | :- |
    | `enter` | (one-line) Go to the next field. |
    | `tab` | (multi-line) Go to the next field. |
    """

    DEFAULT_CSS = """
    StringField TextArea {
        height: auto;
        min-height: 3;
        max-height: 10;
        background: $boost;
    }
    """

    def __init__(self, spec: FieldSpec, *, label: str | None = None, required: bool = False, value: Any = UNDEFINED) -> None:
        super().__init__(spec, label=label, required=required, value=value)
        text = self.initial if isinstance(self.initial, str) else ""
        self._shown = self._reported = text
        self._editor: Input | TextArea
        if spec.multiline:
            self._editor = TextArea(text, soft_wrap=True, compact=True, tab_behavior="focus")
            # A text area re-spells line breaks (\r\n, U+2028...); compare with what it holds.
            self._shown = self._reported = self._editor.text
        else:
            limit = spec.number("maxLength")
            self._editor = Input(
                text,
                placeholder=_PLACEHOLDERS.get(spec.format or "", ""),
                max_length=int(limit) if limit is not None and limit >= 1 else 0,
                compact=True,
            )

    def compose_editor(self) -> ComposeResult:
        yield self._editor

    @property
    def text(self) -> str:
        """The text in the editor."""
        return self._editor.text if isinstance(self._editor, TextArea) else self._editor.value

    def read(self) -> Any:
        return self.text

    def read_pristine(self) -> bool:
        return self.text == self._shown

    def read_blank(self) -> bool:
        return self.text == ""

    def load(self, value: Any) -> None:
        text = value if isinstance(value, str) else ""
        self._shown = self._reported = text
        if isinstance(self._editor, TextArea):
            self._editor.load_text(text)
            self._shown = self._reported = self._editor.text
        else:
            self._editor.value = text

    def hints(self) -> list[str]:
        hints = []
        if self.spec.format:
            hints.append(f"format: {self.spec.format}")
        hints += count_hint(self.spec.number("minLength"), self.spec.number("maxLength"), "character")
        pattern = self.spec.schema.get("pattern")
        if isinstance(pattern, str):
            hints.append(f"pattern: {pattern}")
        return hints

    def _text_changed(self) -> None:
        if self.text != self._reported:
            self._reported = self.text
            self.edited()

    @on(Input.Changed)
    def _input_changed(self, event: Input.Changed) -> None:
        if event.input is self._editor:
            event.stop()
            self._text_changed()

    @on(TextArea.Changed)
    def _area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area is self._editor:
            event.stop()
            self._text_changed()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        # Enter moves on, as in a paper form; submitting the whole answer is the screen's key.
        if event.input is self._editor:
            event.stop()
            self.screen.focus_next()
