"""The form generated from a response schema, with a raw JSON tab kept in step with it."""

from __future__ import annotations

from time import monotonic
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.css.query import NoMatches
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static, TabbedContent, TabPane, TextArea

from lobster_tui.core.jsvalues import UNDEFINED
from lobster_tui.core.schema import CompiledSchema, SchemaCompileError, compile_schema

from .fields import FieldWidget, build_field
from .fields.raw_json import json_language, json_text, parse_json
from .normalise import json_equal, normalise, prefill
from .problems import Problem, Problems

_FORM_TAB = "schema-form-tab-form"
_JSON_TAB = "schema-form-tab-json"


class SchemaForm(Widget):
    """An answer form generated from a JSON Schema, with a raw JSON tab.

    Build it from the request's ``responseSchema`` and ``defaults``; read ``value``; call
    ``validate()`` before submitting (it returns ``"<path>: <message>"`` in the core
    validator's words, or None). Errors show beside the field they concern once that field
    has been edited, and everywhere after ``validate()``; a summary line under the form
    counts them. Parts a form cannot express are small JSON editors; the JSON tab edits
    the whole answer and stays in step with the form both ways.

    | Key | Action |
    | :- | :- |
    | `f2` | Switch between the Form and JSON tabs. |
    | `tab` / `shift+tab` | Next / previous field, in the schema's property order. |
    """

    DEFAULT_CSS = """
    SchemaForm {
        height: 1fr;
        layout: vertical;
        & > TabbedContent { height: 1fr; }
        & > TabbedContent > ContentSwitcher { height: 1fr; }
        & TabPane { padding: 0 1; height: 1fr; }
        & .schema-form--scroll { height: 1fr; }
        & .schema-form--json { height: 1fr; }
        & .schema-form--json-status { height: auto; color: $text-error; }
        & > .schema-form--summary {
            height: 1;
            padding: 0 1;
            color: $text-muted;
            text-wrap: nowrap;
            text-overflow: ellipsis;
        }
        & > .schema-form--summary.-error { color: $text-error; }
        & > .schema-form--summary.-ok { color: $text-success; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f2", "toggle_view", "Form/JSON", id="schema_form.toggle_view"),
    ]

    DEBOUNCE: ClassVar[float] = 0.3
    """Seconds of quiet before errors are redrawn and JSON-tab edits reach the form."""

    class Changed(Message):
        """The answer changed (a field, the JSON tab, ``set_value``).

        Rapid changes replace each other in the queue, so a fast typist does not flood it.
        """

        def __init__(self, form: SchemaForm, value: Any, error: str | None) -> None:
            super().__init__()
            self.form = form
            """The form that changed."""
            self.value = value
            """The answer as it is now."""
            self.error = error
            """Why the answer would be refused (``<path>: <message>``), or None."""

        @property
        def control(self) -> SchemaForm:
            """The form that changed."""
            return self.form

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, SchemaForm.Changed) and message.form is self.form

    def __init__(
        self,
        schema: Any,
        *,
        defaults: Any = UNDEFINED,
        id: str | None = None,
        classes: str | None = None,
        name: str | None = None,
    ) -> None:
        """Build the fields.

        Args:
            schema: The response schema (draft-07 unless its ``$schema`` says otherwise).
            defaults: The request's ``defaults``; UNDEFINED when it has none.
            id: The widget id.
            classes: CSS classes.
            name: The widget name.
        """
        super().__init__(id=id, classes=classes, name=name)
        self.schema = schema
        self._compiled: CompiledSchema | None = None
        self._compile_problem: str | None = None
        try:
            # Unknown-format warnings are the runtime's stderr chatter, not the reviewer's concern.
            self._compiled = compile_schema(schema, warn=lambda _line: None)
        except SchemaCompileError as error:
            self._compile_problem = f"response schema is invalid: {error.message}"
        self.spec = normalise(schema)
        self._root = self._build_root(prefill(self.spec, defaults))
        self._initial = self._root_value()
        self._json_area = TextArea("", classes="schema-form--json", tab_behavior="focus", **json_language())
        self._json_shown = ""
        self._json_stale = True
        self._json_problem: str | None = None
        self._json_status = Static("", classes="schema-form--json-status", markup=False)
        self._summary = Static("", classes="schema-form--summary", markup=False)
        self._summary_text = ""
        self._reveal = False
        self._check_timer: Timer | None = None
        self._check_due = 0.0
        self._json_timer: Timer | None = None
        self._json_due = 0.0
        self._problems = Problems(schema, self._compiled, self._compile_problem, self._root)

    # --- public API ----------------------------------------------------------------------------

    @property
    def value(self) -> Any:
        """The answer as JSON (the JSON tab's text once it parses; null when nothing is entered)."""
        self._apply_json()
        return self._root_value()

    def _build_root(self, value: Any) -> FieldWidget:
        root = build_field(self.spec, label=self.spec.title, required=True, value=value)
        root.add_class("-root")
        root.relabel(self.spec.title)
        return root

    def set_value(self, value: Any) -> None:
        """Show ``value`` in the form and the JSON tab (``dirty`` still compares with the prefill)."""
        if self.is_mounted:
            self._root.set_value(value)
        else:
            # Widgets take new values only inside a running app; before that, build them anew.
            self._root = self._problems.root = self._build_root(value)
        self._json_problem = None
        self._sync_json(force=True)
        self._changed()

    def reset(self) -> None:
        """Back to the prefilled answer."""
        self.set_value(self._initial)

    @property
    def dirty(self) -> bool:
        """Whether the answer differs from the prefilled one."""
        return not json_equal(self.value, self._initial)

    def validate(self) -> str | None:
        """Why the answer would be refused, as ``<path>: <message>``, or None when it is valid.

        The message is the core validator's (Ajv's wording). From now on every error is shown
        beside its field, not only those of fields that were edited.
        """
        self._apply_json()
        self._reveal = True
        problems = self._assess(self._root_value())
        self._show_problems(problems)
        return problems[0].sentence if problems else None

    @property
    def summary(self) -> str:
        """The summary line under the form (``✓ Valid`` or ``✗ N problems: <first>``)."""
        return self._summary_text

    def field_at(self, path: str) -> FieldWidget | None:
        """The field for a JSON Pointer (``""`` is the root), or None when no field shows it."""
        return self._problems.field_at(path)

    def focus_first_field(self) -> bool:
        """Put the cursor in the first field; False when the form has nothing focusable."""
        return self._root.focus_editor()

    # --- composition ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with TabbedContent(initial=_FORM_TAB):
            with TabPane("Form", id=_FORM_TAB):
                # The scroll area follows the focus; it need not take the focus itself.
                with VerticalScroll(classes="schema-form--scroll", can_focus=False):
                    yield self._root
            # Its editor is mounted when the tab is first shown: most answers never open it.
            yield TabPane("JSON", id=_JSON_TAB)
        yield self._summary

    def on_mount(self) -> None:
        self._show_problems(self._assess(self._root_value()))

    # --- values and the JSON tab ---------------------------------------------------------------

    def _root_value(self) -> Any:
        value = self._root.value
        return None if value is UNDEFINED else value

    def _json_text(self) -> str:
        # Nothing entered reads as an empty editor, not "null": null is an answer of its own.
        value = self._root.value
        return "" if value is UNDEFINED else json_text(value)

    @property
    def _json_active(self) -> bool:
        try:
            return self.query_one(TabbedContent).active == _JSON_TAB
        except NoMatches:  # not composed yet
            return False

    def _show_json_editor(self) -> None:
        """Mount the JSON editor the first time the JSON tab is shown."""
        if self._json_area.parent is None:
            self.query_one(f"#{_JSON_TAB}", TabPane).mount(self._json_area, self._json_status)

    def _sync_json(self, *, force: bool = False) -> None:
        """Write the form's value into the JSON tab (now if it is showing or ``force``, else later)."""
        if not (force or self._json_active):
            self._json_stale = True
            return
        self._json_stale = False
        text = self._json_text()
        if text != self._json_area.text:
            self._json_shown = text
            self._json_area.load_text(text)
        self._json_problem = None
        self._json_status.update("")

    def _apply_json(self) -> None:
        """Bring the JSON tab's text into the form when it changed and parses."""
        if self._json_timer is not None:
            self._json_timer.stop()
            self._json_timer = None
        text = self._json_area.text
        if text == self._json_shown:
            return
        value, problem = parse_json(text)
        self._json_problem = problem
        self._json_status.update(f"✗ {problem}" if problem else "")
        if problem is not None:
            return
        self._json_shown = text
        self._root.set_value(value)

    @on(TextArea.Changed, ".schema-form--json")
    def _json_typed(self, event: TextArea.Changed) -> None:
        if event.text_area is not self._json_area:
            return
        event.stop()
        if self._json_area.text == self._json_shown:
            return
        self._json_due = monotonic() + self.DEBOUNCE
        # One timer per pause rather than one per keystroke: it re-arms itself until typing stops.
        if self._json_timer is None:
            self._json_timer = self.set_timer(self.DEBOUNCE, self._json_settled)

    def _json_settled(self) -> None:
        remaining = self._json_due - monotonic()
        if remaining > 0.005:
            self._json_timer = self.set_timer(remaining, self._json_settled)
            return
        self._json_timer = None
        self._apply_json()
        self._changed(from_json=True)

    @on(TabbedContent.TabActivated)
    def _tab_switched(self, event: TabbedContent.TabActivated) -> None:
        if event.tabbed_content.parent is not self:
            return
        event.stop()
        if event.pane.id == _JSON_TAB:
            self._show_json_editor()
            if self._json_stale:
                self._sync_json(force=True)
        else:
            self._apply_json()
            self._changed(from_json=True)

    def action_toggle_view(self) -> None:
        """Switch between the Form and JSON tabs, and put the cursor there."""
        tabs = self.query_one(TabbedContent)
        if tabs.active == _FORM_TAB:
            self._show_json_editor()
            tabs.active = _JSON_TAB
            self._json_area.focus()
        else:
            tabs.active = _FORM_TAB
            self.focus_first_field()

    # --- changes and errors --------------------------------------------------------------------

    @on(FieldWidget.Edited)
    def _field_edited(self, event: FieldWidget.Edited) -> None:
        event.stop()
        self._changed()

    def _changed(self, *, from_json: bool = False) -> None:
        if not from_json:
            self._sync_json()
        value = self._root_value()
        problems = self._assess(value)
        self.post_message(self.Changed(self, value, problems[0].sentence if problems else None))
        self._check_due = monotonic() + self.DEBOUNCE
        # Before mounting there is nothing to redraw; on_mount draws the first check.
        if self._check_timer is None and self.is_mounted:
            self._check_timer = self.set_timer(self.DEBOUNCE, self._checked)

    def _checked(self) -> None:
        remaining = self._check_due - monotonic()
        if remaining > 0.005:
            self._check_timer = self.set_timer(remaining, self._checked)
            return
        self._check_timer = None
        self._show_problems(self._assess(self._root_value()))

    def _assess(self, value: Any) -> list[Problem]:
        return self._problems.assess(value, self._json_problem)

    def _touched(self, field: FieldWidget) -> bool:
        node: Any = field
        while node is not None and node is not self:
            if isinstance(node, FieldWidget) and node.touched:
                return True
            node = node.parent
        return False

    def _show_problems(self, problems: list[Problem]) -> None:
        """Show each problem beside its field (edited fields only, until ``validate()``) and the summary."""
        shown: dict[int, list[str]] = {}
        for problem in problems:
            if self._reveal or self._touched(problem.field):
                messages = shown.setdefault(id(problem.field), [])
                if problem.message not in messages:
                    messages.append(problem.message)
        for field in [self._root, *self._root.query(FieldWidget)]:
            messages = shown.get(id(field), [])
            if messages or field.errors_shown:
                field.show_errors(messages)
        if problems:
            count = len(problems)
            head = "1 problem" if count == 1 else f"{count} problems"
            text, state = f"✗ {head}: {problems[0].sentence}", "-error"
        else:
            text, state = "✓ Valid", "-ok"
        if text != self._summary_text:
            self._summary_text = text
            # One line, always: no need to lay the screen out again for new words.
            self._summary.update(text, layout=False)
            self._summary.set_classes(f"schema-form--summary {state}")


