"""A modal that says what a decision will do and waits for a deliberate yes."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from ..decisions import Decision
from ..formatting import printable
from ..widgets.key_footer import KeyFooter


class ConfirmScreen(ModalScreen[bool]):
    """Confirm a decision: dismisses with True only on ``y`` or the Yes button.

    The No button has focus, so ``enter`` (or any stray key) backs out.

    | Key | Action |
    | :- | :- |
    | `y` | Yes, do it. |
    | `n` / `escape` | No, back out. |
    | `tab` / `left` / `right` | Move between the buttons. |
    """

    BINDINGS: list[BindingType] = [
        Binding("y", "confirm", "Yes", id="confirm.yes"),
        Binding("n,escape", "back_out", "No", id="confirm.no"),
        Binding("left,right", "switch_button", "Switch", show=False, id="confirm.switch"),
    ]

    def __init__(self, title: str, lines: list[str], yes_label: str, tone: str = "approve") -> None:
        super().__init__()
        self.title_text = title
        self.lines = lines
        self.yes_label = yes_label
        self.tone = tone

    @classmethod
    def for_decision(cls, decision: Decision) -> ConfirmScreen:
        """The modal for approving, rejecting or cancelling a checkpoint."""
        return cls(decision.title, decision.summary(), f"Yes, {decision.kind}", decision.kind)

    dialog_classes = ""
    """Extra classes of the dialog box (a subclass's own layout)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog", classes=f"-{self.tone} {self.dialog_classes}".strip()):
            yield Label(printable(self.title_text), id="confirm-title", markup=False)
            yield from self.compose_details()
            yield Static("\n".join(printable(line) for line in self.lines), id="confirm-summary", markup=False)
            with Horizontal(id="confirm-buttons"):
                yield Button("No (n)", id="no", variant="primary")
                yield Button(
                    f"{self.yes_label} (y)",
                    id="yes",
                    variant="success" if self.tone == "approve" else "error",
                )
        yield KeyFooter()

    def compose_details(self) -> ComposeResult:
        """What a subclass shows between the title and the summary (nothing here)."""
        yield from ()

    def on_mount(self) -> None:
        # The safe answer has focus, so enter backs out unless the reviewer moved on purpose.
        self.query_one("#no", Button).focus()

    @on(Button.Pressed, "#yes")
    def _yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#no")
    def _no(self) -> None:
        self.dismiss(False)

    def action_confirm(self) -> None:
        """Carry the decision out."""
        self.dismiss(True)

    def action_back_out(self) -> None:
        """Change nothing."""
        self.dismiss(False)

    def action_switch_button(self) -> None:
        """Move focus to the other button."""
        self.focus_next(Button)
