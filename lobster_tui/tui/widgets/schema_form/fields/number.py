"""A number or an integer: an ``Input`` that refuses anything but digits as you type."""

from __future__ import annotations

import math
import re
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.widgets import Input

from lobster_tui.core.jsvalues import UNDEFINED, js_number_str

from ..normalise import FieldSpec
from .base import FieldWidget

_WHOLE = re.compile(r"[-+]?[\d_]+")
_SAFE = 2**53


def parse_number(text: str, *, integer: bool) -> Any:
    """The JSON number ``text`` spells; UNDEFINED when empty; the text itself when it is no number.

    Returning the text lets the validator say ``must be number`` in its own words, beside the field.
    """
    text = text.strip()
    if not text:
        return UNDEFINED
    try:
        # Beyond 2**53 a JSON number is a double, as in the JavaScript runtime.
        if _WHOLE.fullmatch(text) and abs(whole := int(text)) <= _SAFE:
            return whole
        number = float(text)
    except ValueError:
        return text
    if not math.isfinite(number):
        return text
    if integer and number.is_integer():
        return int(number)
    return number


class NumberField(FieldWidget):
    """A ``number`` or ``integer`` property.

    The ``Input`` uses Textual's ``type="integer"``/``"number"`` restriction, so letters are
    refused as they are typed. Bounds (``minimum``, ``exclusiveMaximum``...) and ``multipleOf``
    are shown as hints and checked by the validator. An empty optional number is left out.

    | Key | Action |
    | :- | :- |
    | `enter` | Go to the next field. |
    """

    def __init__(self, spec: FieldSpec, *, label: str | None = None, required: bool = False, value: Any = UNDEFINED) -> None:
        super().__init__(spec, label=label, required=required, value=value)
        self._integer = spec.kind == "integer"
        text = _number_text(self.initial)
        self._shown = self._reported = text
        self._input = Input(
            text,
            placeholder="integer" if self._integer else "number",
            type="integer" if self._integer else "number",
            compact=True,
        )

    def compose_editor(self) -> ComposeResult:
        yield self._input

    def read(self) -> Any:
        return parse_number(self._input.value, integer=self._integer)

    def read_pristine(self) -> bool:
        return self._input.value == self._shown

    def read_blank(self) -> bool:
        return not self._input.value.strip()

    def load(self, value: Any) -> None:
        text = _number_text(value)
        self._shown = self._reported = text
        self._input.value = text

    def hints(self) -> list[str]:
        hints = []
        for keyword, sign in (
            ("minimum", ">="),
            ("exclusiveMinimum", ">"),
            ("maximum", "<="),
            ("exclusiveMaximum", "<"),
        ):
            bound = self.spec.number(keyword)
            if bound is not None:
                hints.append(f"{sign} {js_number_str(bound)}")
        step = self.spec.number("multipleOf")
        if step is not None:
            hints.append(f"multiple of {js_number_str(step)}")
        return hints

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        if event.input is self._input:
            event.stop()
            if self._input.value != self._reported:
                self._reported = self._input.value
                self.edited()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        if event.input is self._input:
            event.stop()
            self.screen.focus_next()


def _number_text(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return ""
    # Python's integers are exact; JavaScript's formatting would round those beyond 2**53.
    return str(value) if isinstance(value, int) else js_number_str(value)
