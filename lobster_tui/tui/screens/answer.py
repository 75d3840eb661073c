"""Answering an input request: a JSON editor, prefilled from the defaults and checked as you type."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Label, Static, TextArea

from lobster_tui.core.checkpoints import Checkpoint

from ..answer_check import AnswerCheck, check_answer, initial_answer
from ..formatting import printable
from ..widgets.preview import CheckpointPreview

if TYPE_CHECKING:
    from ..app import LobsterApp


class AnswerScreen(Screen[None]):
    """The request (prompt, subject, schema) beside a JSON editor with live validation.

    ``ctrl+s`` submits through the core runner; an answer the schema refuses is never sent, and
    the reason is shown below the editor in the runner's words.

    | Key | Action |
    | :- | :- |
    | `ctrl+s` | Submit the answer. |
    | `ctrl+r` | Start again from the defaults. |
    | `escape` | Back to the inbox; nothing is sent. |
    """

    BINDINGS: list[BindingType] = [
        Binding("ctrl+s", "submit", "Submit", id="answer.submit", priority=True),
        Binding("ctrl+r", "reset", "Reset to defaults", id="answer.reset"),
        Binding("escape", "back", "Back", id="answer.back"),
    ]

    def __init__(self, checkpoint: Checkpoint) -> None:
        super().__init__()
        self.checkpoint = checkpoint
        self._check: AnswerCheck | None = None

    @property
    def lobster(self) -> LobsterApp:
        """The app, typed."""
        return cast("LobsterApp", self.app)

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
                yield Label(f"Answer for {printable(self.checkpoint.step)} (JSON)", classes="section-title")
                yield TextArea(
                    initial_answer(self.checkpoint),
                    id="answer-editor",
                    show_line_numbers=True,
                    **self._language(),
                )
                yield Static("", id="answer-status", markup=False)
        yield Footer(compact=True)

    @staticmethod
    def _language() -> dict[str, str]:
        # JSON highlighting needs tree-sitter (an optional extra); without it the editor is plain.
        try:
            from textual._tree_sitter import TREE_SITTER
        except ImportError:
            return {}
        return {"language": "json"} if TREE_SITTER else {}

    def on_mount(self) -> None:
        self.sub_title = f"answer · {self.checkpoint.short_id}"
        self.query_one("#answer-preview", CheckpointPreview).show(self.checkpoint)
        editor = self.query_one("#answer-editor", TextArea)
        editor.focus()
        self._validate(editor.text)

    @on(TextArea.Changed, "#answer-editor")
    def _changed(self, message: TextArea.Changed) -> None:
        self._validate(message.text_area.text)

    def _validate(self, text: str) -> AnswerCheck:
        check = check_answer(self.checkpoint, text)
        self._check = check
        status = self.query_one("#answer-status", Static)
        if check.ok:
            status.update("✓ Valid: ctrl+s submits this answer.")
            status.set_classes("-ok")
        else:
            status.update(f"✗ {check.problem}")
            status.set_classes("-error")
        return check

    def action_submit(self) -> None:
        """Send the answer through the runner, unless the schema refuses it."""
        check = self._validate(self.query_one("#answer-editor", TextArea).text)
        if not check.ok:
            self.notify(f"Not submitted: {check.problem}", title="Answer refused", severity="error")
            return
        if self.lobster.submit_answer(self.checkpoint, check.value):
            self.dismiss(None)

    def action_reset(self) -> None:
        """Put the defaults back into the editor."""
        self.query_one("#answer-editor", TextArea).load_text(initial_answer(self.checkpoint))

    def action_back(self) -> None:
        """Leave without answering."""
        self.dismiss(None)
