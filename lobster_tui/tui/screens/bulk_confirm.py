"""The one confirmation of a bulk decision: every checkpoint it decides, and those it leaves."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from lobster_tui.core.checkpoints import Checkpoint

from ..bulk import BulkPlan, label
from ..formatting import one_line
from .confirm import ConfirmScreen


class BulkConfirmScreen(ConfirmScreen):
    """Confirm approving or rejecting several approvals at once.

    Lists each checkpoint (workflow, step, prompt, id) and each marked row that is left out, with
    why. As with a single decision, No has focus and only ``y`` (or the Yes button) goes ahead.

    | Key | Action |
    | :- | :- |
    | `y` | Yes, decide them all. |
    | `n` / `escape` | No, back out. |
    | `tab` | Move between the buttons and the list (to scroll it). |
    """

    def __init__(self, plan: BulkPlan, approver: str | None) -> None:
        count = len(plan.decide)
        noun = f"{count} approval{'s' if count != 1 else ''}"
        verb = "Approve" if plan.kind == "approve" else "Reject"
        lines = [
            "Each run resumes in turn and runs the steps after its gate; the log streams beside the inbox."
            if plan.kind == "approve"
            else "Each checkpoint is deleted and its run ends as cancelled. Nothing after the gates runs.",
            f"Recorded approver: {approver or 'none (no --approver or LOBSTER_APPROVAL_APPROVED_BY)'}",
            "One failure does not stop the rest; every outcome is reported.",
        ]
        super().__init__(f"{verb} {noun}?", lines, f"{verb} {count}", plan.kind)
        self.plan = plan

    dialog_classes = "-bulk"

    def compose_details(self) -> ComposeResult:
        table: DataTable[str] = DataTable(id="bulk-items", cursor_type="row", zebra_stripes=True, show_cursor=False)
        yield table
        if self.plan.skipped:
            yield Static(self._skipped_text(), id="bulk-skipped", markup=False)

    def _skipped_text(self) -> str:
        skipped = self.plan.skipped
        lines = [f"Left out ({len(skipped)}):"]
        for entry, why in skipped[:6]:
            lines.append(f"  ⊘ {label(entry)}: {one_line(why, 90)}")
        if len(skipped) > 6:
            lines.append(f"  … and {len(skipped) - 6} more")
        return "\n".join(lines)

    def on_mount(self) -> None:
        table = self.query_one("#bulk-items", DataTable)
        self._widths = widths = self._column_widths()
        for key in ("workflow", "step", "prompt", "id"):
            table.add_column(key, key=key, width=widths[key])
        for checkpoint in self.plan.decide:
            table.add_row(*self._row(checkpoint), key=checkpoint.state_key)
        super().on_mount()

    def _column_widths(self) -> dict[str, int]:
        """Fit the four columns into the dialog: the id whole, the prompt with most of the rest."""
        # The dialog is 100 wide at most (95% of the screen); minus its border, padding, the
        # cells' padding (2 per column) and a scrollbar.
        dialog = min(100, int(self.app.size.width * 0.95))
        spare = max(30, dialog - 2 - 4 - 2 * 4 - 2 - 8)
        step = min(14, max(6, spare // 6))
        workflow = max(8, int((spare - step) * 0.35))
        return {"workflow": workflow, "step": step, "prompt": max(10, spare - step - workflow), "id": 8}

    def _row(self, checkpoint: Checkpoint) -> tuple[Text, Text, Text, str]:
        w = self._widths
        name = checkpoint.workflow if checkpoint.source == "workflow" else f"$ {checkpoint.workflow}"
        # Text, not str: a DataTable reads a str cell as markup, and a prompt may hold "[/tmp]".
        return (
            Text(one_line(name, w["workflow"])),
            Text(one_line(checkpoint.step, w["step"])),
            Text(one_line(checkpoint.prompt, w["prompt"])),
            checkpoint.short_id,
        )
