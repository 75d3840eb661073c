"""Answering an input request: a form generated from its JSON Schema, checked as you type."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Header, Label, Static

from lobster_tui.core.checkpoints import Checkpoint
from lobster_tui.core.jsvalues import UNDEFINED

from ..answer_check import check_value
from ..formatting import printable
from ..widgets.key_footer import KeyFooter
from ..widgets.preview import CheckpointPreview
from ..widgets.schema_form import SchemaForm
from .confirm import ConfirmScreen

if TYPE_CHECKING:
    from ..app import LobsterApp
    from ..decisions import DecisionResult


class AnswerScreen(Screen[None]):
    """The request (prompt, subject, schema) beside a form built from its response schema.

    ``ctrl+s`` submits through the core runner. An answer the schema refuses is never sent: the
    reason shows beside the field and below the form in the runner's words. The screen stays
    open until the runner answers, so an error it reports keeps the form and your answer.

    | Key | Action |
    | :- | :- |
    | `ctrl+s` | Submit the answer. |
    | `f2` | Switch between the form and the raw JSON. |
    | `ctrl+r` | Start again from the defaults. |
    | `c` | Cancel the run instead (asks first). |
    | `escape` | Back to the inbox (asks first when you changed something). |
    """

    BINDINGS: list[BindingType] = [
        Binding("ctrl+s", "submit", "Submit", id="answer.submit", priority=True),
        Binding("ctrl+r", "reset", "Reset to defaults", id="answer.reset"),
        Binding("c", "cancel_run", "Cancel run", id="answer.cancel"),
        Binding("escape", "back", "Back", id="answer.back"),
    ]

    def __init__(self, checkpoint: Checkpoint) -> None:
        super().__init__()
        self.checkpoint = checkpoint
        self.submitting = False

    @property
    def lobster(self) -> LobsterApp:
        """The app, typed."""
        return cast("LobsterApp", self.app)

    @property
    def form(self) -> SchemaForm:
        """The answer form."""
        return self.query_one("#answer-form", SchemaForm)

    def compose(self) -> ComposeResult:
        app = self.lobster
        yield Header()
        with Horizontal(id="answer-body"):
            yield CheckpointPreview(
                state=app.state,
                approver=app.approver,
                approver_source=app.approver_source,
                clock=app.clock,
                id="answer-preview",
            )
            with Vertical(id="answer-pane"):
                yield Label(f"Answer for {printable(self.checkpoint.step)}", classes="section-title", markup=False)
                defaults = self.checkpoint.defaults if self.checkpoint.has_defaults else UNDEFINED
                yield SchemaForm(self.checkpoint.response_schema, defaults=defaults, id="answer-form")
                yield Static("", id="answer-status", markup=False)
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = f"answer · {self.checkpoint.short_id}"
        self.query_one("#answer-preview", CheckpointPreview).show(self.checkpoint)
        if not self.form.focus_first_field():
            self.form.focus()
        self._show_check()

    @on(SchemaForm.Changed, "#answer-form")
    def _changed(self, _message: SchemaForm.Changed) -> None:
        if not self.submitting:
            self._show_check()

    def _show_check(self) -> str | None:
        """Show whether the runner would take the answer now; returns its refusal, if any."""
        problem = check_value(self.checkpoint, self.form.value).problem
        status = self.query_one("#answer-status", Static)
        if problem is None:
            status.update("✓ Valid: ctrl+s submits this answer.")
            status.set_classes("-ok")
        else:
            status.update(f"✗ {problem}")
            status.set_classes("-error")
        return problem

    def action_submit(self) -> None:
        """Send the answer through the runner, unless the schema refuses it."""
        if self.submitting:
            return
        self.form.validate()  # every error beside its field from now on
        problem = self._show_check()
        if problem is not None:
            self.notify(f"Not submitted: {problem}", title="Answer refused", severity="error")
            return
        if self.lobster.submit_answer(self.checkpoint, self.form.value):
            self.submitting = True
            status = self.query_one("#answer-status", Static)
            status.update("Submitting… the run resumes; its log streams in the inbox.")
            status.set_classes("-ok")

    def decision_finished(self, result: DecisionResult) -> None:
        """The runner answered: leave on success, keep the form and say why on an error."""
        self.submitting = False
        if result.status in ("error", "stale"):
            status = self.query_one("#answer-status", Static)
            status.update(f"✗ Not accepted: {result.message}")
            status.set_classes("-error")
            return
        self.dismiss(None)

    def action_reset(self) -> None:
        """Put the defaults back into the form."""
        self.form.reset()

    def action_cancel_run(self) -> None:
        """Cancel the whole run instead of answering, after a confirmation."""

        def cancelled(confirmed: bool) -> None:
            if confirmed:
                self.dismiss(None)

        self.lobster.request_decision("cancel", self.checkpoint, after=cancelled)

    def action_back(self) -> None:
        """Leave without answering; a changed answer is only dropped after a confirmation."""
        if not self.form.dirty:
            self.dismiss(None)
            return
        lines = ["Your answer has not been sent. Leaving drops it; the request stays in the inbox."]

        def leave(confirmed: bool | None) -> None:
            if confirmed:
                self.dismiss(None)

        self.app.push_screen(ConfirmScreen("Discard this answer?", lines, "Yes, discard", "cancel"), leave)
