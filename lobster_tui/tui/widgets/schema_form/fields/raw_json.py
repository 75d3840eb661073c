"""A small JSON editor for the parts of a schema a form cannot express."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.widgets import TextArea

from lobster_tui.core.jsvalues import UNDEFINED, dumps_pretty, loads

from ..normalise import FieldSpec
from .base import FieldWidget


def json_language() -> dict[str, str]:
    """``TextArea`` keyword arguments for JSON highlighting, when tree-sitter is installed."""
    try:
        # Highlighting needs the optional tree-sitter extra; without it the editor is plain text.
        from textual._tree_sitter import TREE_SITTER
    except ImportError:  # pragma: no cover - private module moved
        return {}
    return {"language": "json"} if TREE_SITTER else {}


# Characters Python counts as line breaks that JSON leaves unescaped: a text area would split
# the line there and the string would no longer parse, so they are written as escapes.
_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def json_text(value: Any) -> str:
    """``value`` as the JSON editors show it: pretty-printed as the runtime prints it."""
    text = dumps_pretty(value)
    for char, escape in _BREAKS.items():
        text = text.replace(char, escape)
    return text


def parse_json(text: str) -> tuple[Any, str | None]:
    """``(value, None)`` for JSON text, ``(UNDEFINED, None)`` for blank text, else ``(UNDEFINED, problem)``."""
    if not text.strip():
        return UNDEFINED, None
    try:
        return loads(text), None
    except (ValueError, RecursionError) as error:
        return UNDEFINED, f"Not valid JSON: {error}"


class RawJsonField(FieldWidget):
    """JSON text for one part of the schema: ``not``, ``if``/``then``/``else``, tuple arrays,
    ``patternProperties`` values, deep recursion, or a schema that allows anything.

    The help line says why this part is JSON. While the text does not parse, the field keeps
    its last good value and the form refuses to submit, naming the problem.

    | Key | Action |
    | :- | :- |
    | `tab` | Go to the next field. |
    """

    DEFAULT_CSS = """
    RawJsonField TextArea {
        height: auto;
        min-height: 1;
        max-height: 10;
        background: $boost;
    }
    """

    def __init__(self, spec: FieldSpec, *, label: str | None = None, required: bool = False, value: Any = UNDEFINED) -> None:
        super().__init__(spec, label=label, required=required, value=value)
        text = "" if self.initial is UNDEFINED else json_text(self.initial)
        self._shown = self._reported = text
        self._last_good: Any = self.initial
        self._problem: str | None = None
        self._area = TextArea(text, compact=True, tab_behavior="focus", soft_wrap=True, **json_language())
        self._shown = self._reported = self._area.text

    @property
    def problem(self) -> str | None:
        """Why the text is not JSON, or None."""
        return self._problem

    def compose_editor(self) -> ComposeResult:
        yield self._area

    def read(self) -> Any:
        return self._last_good

    def read_pristine(self) -> bool:
        return self._area.text == self._shown

    def read_blank(self) -> bool:
        return not self._area.text.strip()

    def load(self, value: Any) -> None:
        text = "" if value is UNDEFINED else json_text(value)
        self._shown = self._reported = text
        self._last_good = value
        self._problem = None
        self._area.load_text(text)
        self._shown = self._reported = self._area.text

    def hints(self) -> list[str]:
        hints = [f"JSON ({self.spec.reason})" if self.spec.reason else "JSON"]
        if self._problem:
            hints.append(self._problem)
        return hints

    @on(TextArea.Changed)
    def _changed(self, event: TextArea.Changed) -> None:
        if event.text_area is not self._area:
            return
        event.stop()
        text = self._area.text
        if text == self._reported:
            return
        self._reported = text
        value, problem = parse_json(text)
        self._problem = problem
        if problem is None:
            self._last_good = value
        self.edited()
