"""A run's steps and checkpoints in order: status, duration, exit code, and the decisions taken."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ..event_lines import theme_colour
from ..formatting import one_line
from ..run_story import CheckpointEntry, RunStory, StepEntry, elapsed_ms, span

STEP_MARKS = {"running": "●", "ok": "✓", "failed": "✗", "skipped": "↷", "timed_out": "⏱", "interrupted": "↯"}
DECISION_WORDS = {"approve": "approved", "reject": "rejected", "answer": "answered", "cancel": "cancelled"}


class RunTimeline(OptionList):
    """Every step of a run (and each checkpoint with its decision) as one row.

    | Key | Action |
    | :- | :- |
    | `j` / `k` | Next / previous row. |
    | `enter` | Show where this step (or checkpoint) is in the log. |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="timeline.down"),
        Binding("k", "cursor_up", "Up", show=False, id="timeline.up"),
        Binding("enter", "select", "Show in log", id="timeline.show"),
    ]

    HELP_NAME = "steps"

    @dataclass
    class LineRequested(Message):
        """Show the log at this line (a step's or checkpoint's first line)."""

        timeline: RunTimeline
        line: int

        @property
        def control(self) -> RunTimeline:
            """The timeline that asked."""
            return self.timeline

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.border_title = "Steps"
        self._rows: list[tuple[int, Text]] = []

    def show(self, story: RunStory, now: datetime | None = None) -> None:
        """Show the story's timeline (keeps the highlighted row)."""
        variables: Mapping[str, str] = self.app.theme_variables if self.is_attached else {}
        rows = [(self._line_of(entry), self._row(entry, variables, now)) for entry in story.timeline]
        if [text.plain for _, text in rows] == [text.plain for _, text in self._rows]:
            return
        follow = self.highlighted is None or self.highlighted == len(self._rows) - 1
        keep = self.highlighted
        self._rows = rows
        self.set_options(Option(text) for _, text in rows)
        if rows:
            # Stay on the row the reader chose; follow the newest row otherwise.
            self.highlighted = len(rows) - 1 if follow or keep is None else min(keep, len(rows) - 1)
        count = len(story.steps)
        self.border_title = f"Steps ({count})" if count else "Steps"

    @staticmethod
    def _line_of(entry: StepEntry | CheckpointEntry) -> int:
        return entry.first_line if isinstance(entry, StepEntry) else entry.line

    def _row(self, entry: StepEntry | CheckpointEntry, variables: Mapping[str, str], now: datetime | None) -> Text:
        ok = theme_colour(variables, "success") or ""
        error = theme_colour(variables, "error") or "bold"
        warning = theme_colour(variables, "warning") or ""
        accent = theme_colour(variables, "accent") or ""
        if isinstance(entry, CheckpointEntry):
            what = "approval" if entry.kind == "approval" else "input"
            text = Text.assemble(("⏸ ", warning), (f"{what}", warning))
            if entry.approval_id:
                text.append(f" {entry.approval_id}", "dim")
            text.append(f"  {one_line(entry.prompt, 60)}")
            if entry.decision:
                word = DECISION_WORDS.get(entry.decision, entry.decision)
                who = f" by {one_line(entry.approver, 20)}" if entry.approver else ""
                style = ok if entry.decision in ("approve", "answer") else error
                text.append("\n  ↻ ", "dim")
                text.append(f"{word}{who}", style)
            else:
                text.append("\n  waiting for " + ("a decision" if entry.kind == "approval" else "an answer"), warning)
            return text
        status = entry.status
        style = {"running": accent, "ok": ok, "skipped": "dim"}.get(status, error)
        text = Text.assemble((f"{STEP_MARKS.get(status, '?')} ", style), (one_line(entry.step_id, 28), "bold"))
        details = []
        if status == "running":
            running_for = elapsed_ms(entry.started, None, now)
            details.append(f"running {span(running_for)}".rstrip())
        elif status not in ("ok",):
            details.append(status)
        if entry.duration_ms is not None:
            details.append(span(entry.duration_ms))
        if entry.exit_code is not None:
            details.append(f"exit {entry.exit_code}")
        if entry.lines:
            details.append(f"{entry.lines:,} lines")
        if details:
            text.append("  " + " · ".join(details), "dim" if status in ("ok", "skipped") else style)
        if entry.error and status not in ("ok", "skipped"):
            text.append(f"\n  {one_line(entry.error, 60)}", error)
        return text

    def action_select(self) -> None:
        """Ask the screen to show the highlighted row's place in the log."""
        index = self.highlighted
        if index is not None and 0 <= index < len(self._rows):
            self.post_message(self.LineRequested(self, self._rows[index][0]))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        # A click on a row (enter is bound to action_select above).
        event.stop()
        if 0 <= event.option_index < len(self._rows):
            self.post_message(self.LineRequested(self, self._rows[event.option_index][0]))
