"""Full-screen review of one approval, with the same (confirmed) decisions as the inbox."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Header

from lobster_tui.core.checkpoints import Checkpoint

from ..decisions import DecisionKind
from ..widgets.key_footer import KeyFooter
from ..widgets.preview import CheckpointPreview

if TYPE_CHECKING:
    from ..app import LobsterApp


class ReviewScreen(Screen[None]):
    """One approval at full size: every item, the whole preview text and all step output.

    | Key | Action |
    | :- | :- |
    | `a` | Approve (asks first). |
    | `x` | Reject (asks first). |
    | `c` | Cancel the checkpoint (asks first). |
    | `j` / `k`, arrows, `pageup` / `pagedown` | Scroll. |
    | `escape` | Back to the inbox. |
    """

    BINDINGS: list[BindingType] = [
        Binding("a", "decide('approve')", "Approve", id="review.approve"),
        Binding("x", "decide('reject')", "Reject", id="review.reject"),
        Binding("c", "decide('cancel')", "Cancel", id="review.cancel"),
        Binding("j", "scroll('down')", "Down", show=False, id="review.down"),
        Binding("k", "scroll('up')", "Up", show=False, id="review.up"),
        Binding("escape", "back", "Back", id="review.back"),
    ]

    def __init__(self, checkpoint: Checkpoint) -> None:
        super().__init__()
        self.checkpoint = checkpoint

    @property
    def lobster(self) -> LobsterApp:
        """The app, typed."""
        return cast("LobsterApp", self.app)

    def compose(self) -> ComposeResult:
        app = self.lobster
        yield Header()
        yield CheckpointPreview(
            state=app.state,
            approver=app.approver,
            approver_source=app.approver_source,
            clock=app.clock,
            full=True,
            id="review-preview",
        )
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = f"review · {self.checkpoint.short_id}"
        preview = self.query_one(CheckpointPreview)
        preview.show(self.checkpoint)
        preview.focus()

    def action_decide(self, kind: DecisionKind) -> None:
        """Ask for confirmation; back to the inbox once the decision runs."""

        def after(confirmed: bool) -> None:
            if confirmed and self.is_current:
                self.dismiss(None)

        self.lobster.request_decision(kind, self.checkpoint, after=after)

    def action_scroll(self, direction: str) -> None:
        """Scroll the review."""
        preview = self.query_one(CheckpointPreview)
        if direction == "down":
            preview.scroll_down()
        else:
            preview.scroll_up()

    def action_back(self) -> None:
        """Back to the inbox; nothing changes."""
        self.dismiss(None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Approve and reject apply to approvals only."""
        if action == "decide" and parameters and parameters[0] in ("approve", "reject"):
            return self.checkpoint.kind == "approval"
        return True
