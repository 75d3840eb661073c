"""The inbox list: one row per pending checkpoint (or unreadable state file), newest first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import DataTable

from lobster_tui.core.checkpoints import BrokenCheckpoint, Checkpoint

from ..decisions import DecisionKind, short_key
from ..event_lines import theme_colour
from ..formatting import Clock, format_age, one_line, utc_now

Entry = Checkpoint | BrokenCheckpoint

KIND_LABELS = {"approval": "◆ approve", "input": "✎ input"}
BROKEN_LABEL = "✗ broken"


def entry_matches(entry: Entry, needle: str) -> bool:
    """Case-insensitive substring match over everything a row shows (and the full state key)."""
    if not needle:
        return True
    if isinstance(entry, BrokenCheckpoint):
        haystack = [BROKEN_LABEL, entry.state_key, entry.reason]
    else:
        haystack = [
            KIND_LABELS[entry.kind],
            entry.workflow,
            entry.step,
            entry.prompt,
            entry.short_id,
            entry.state_key,
        ]
    needle = needle.casefold()
    return any(needle in part.casefold() for part in haystack)


class CheckpointList(DataTable):
    """The pending checkpoints of a state directory as a table with a row cursor.

    Decisions are never taken here: ``a``, ``x`` and ``c`` only *ask* for one (the screen then
    opens a confirm modal), so a stray key cannot approve anything.

    | Key | Action |
    | :- | :- |
    | `j` / `down` | Next checkpoint. |
    | `k` / `up` | Previous checkpoint. |
    | `g` / `G` | First / last checkpoint. |
    | `enter` | Open the review (approval) or answer (input) screen. |
    | `a` | Ask to approve. |
    | `x` | Ask to reject. |
    | `c` | Ask to cancel (drop) the checkpoint. |
    """

    BINDINGS: list[BindingType] = [
        Binding("j", "cursor_down", "Down", show=False, id="list.down"),
        Binding("k", "cursor_up", "Up", show=False, id="list.up"),
        Binding("down", "cursor_down", "Down", show=False, id="list.down_arrow"),
        Binding("up", "cursor_up", "Up", show=False, id="list.up_arrow"),
        Binding("g,home", "first", "First", show=False, id="list.first"),
        Binding("G,end", "last", "Last", show=False, id="list.last"),
        Binding("enter", "open", "Open", id="list.open"),
        Binding("a", "decide('approve')", "Approve", id="list.approve"),
        Binding("x", "decide('reject')", "Reject", id="list.reject"),
        Binding("c", "decide('cancel')", "Cancel", id="list.cancel"),
    ]

    HELP_NAME = "checkpoint list"

    filter_text: reactive[str] = reactive("", init=False)
    """Only rows whose text contains this (case-insensitive) are shown."""

    @dataclass
    class Highlighted(Message):
        """The highlighted checkpoint changed (None when the list is empty)."""

        checkpoint_list: CheckpointList
        entry: Entry | None

        @property
        def control(self) -> CheckpointList:
            """The list that sent the message."""
            return self.checkpoint_list

    @dataclass
    class Opened(Message):
        """The reviewer asked to open a checkpoint (``enter`` or a click on the highlighted row)."""

        checkpoint_list: CheckpointList
        entry: Entry

        @property
        def control(self) -> CheckpointList:
            """The list that sent the message."""
            return self.checkpoint_list

    @dataclass
    class DecisionRequested(Message):
        """The reviewer pressed a decision key; the screen confirms before anything happens."""

        checkpoint_list: CheckpointList
        entry: Entry
        kind: DecisionKind

        @property
        def control(self) -> CheckpointList:
            """The list that sent the message."""
            return self.checkpoint_list

    def __init__(self, *, clock: Clock = utc_now, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=True)
        self._clock = clock
        self._entries: list[Entry] = []
        self._shown: list[Entry] = []
        self._by_key: dict[str, Entry] = {}
        self._last_highlight: str | None = None
        self._widths: dict[str, int] = {}
        self._announced: Entry | None = None
        self._has_announced = False
        self._widths_for = -1

    def on_mount(self) -> None:
        self._add_columns()
        # Ages move on by themselves; repaint them now and then (cheap: one column).
        self.set_interval(15, self.refresh_ages)

    def on_resize(self) -> None:
        if self._widths_for != self.size.width:
            self._rebuild()

    def _column_widths(self) -> dict[str, int]:
        """Fit the columns to the widget: "workflow › step" and prompt share what is left."""
        total = self.size.width or 100
        fixed = {"kind": 9, "age": 4, "id": 8}
        # One cell of padding either side of each of 5 columns, and room for a scrollbar.
        spare = max(24, total - sum(fixed.values()) - 2 * 5 - 2)
        # Room for the longest "name › step" (a pipeline's text counts as 16), but the prompt
        # keeps at least 45%: it is what a reviewer reads first.
        wanted = max([len(self._where_text(e, 16)) for e in self._shown] + [15])
        where = max(12, min(wanted, 44, int(spare * 0.55)))
        return {**fixed, "where": where, "prompt": max(10, spare - where)}

    @staticmethod
    def _where_text(entry: Entry, name_width: int) -> str:
        if isinstance(entry, BrokenCheckpoint):
            return one_line(entry.path.name, 28)
        name = entry.workflow if entry.source == "workflow" else f"$ {entry.workflow}"
        return f"{one_line(name, name_width)} › {one_line(entry.step, 16)}"

    def _add_columns(self) -> None:
        widths = self._column_widths()
        self._widths = widths
        self._widths_for = self.size.width
        labels = {"kind": "kind", "where": "workflow › step", "prompt": "prompt", "age": "age", "id": "id"}
        for key, label in labels.items():
            self.add_column(label, key=key, width=widths[key])

    # -- data ------------------------------------------------------------------------------------

    @property
    def entries(self) -> Sequence[Entry]:
        """Every entry, filtered or not, newest first."""
        return tuple(self._entries)

    @property
    def shown(self) -> Sequence[Entry]:
        """The entries matching the filter, in row order."""
        return tuple(self._shown)

    @property
    def highlighted(self) -> Entry | None:
        """The entry under the cursor."""
        if not self._shown or not self.is_valid_row_index(self.cursor_row):
            return None
        return self._shown[self.cursor_row]

    def set_entries(self, entries: Sequence[Entry]) -> None:
        """Replace the rows, keeping the cursor on the same checkpoint when it is still there."""
        self._entries = list(entries)
        self._by_key = {entry.state_key: entry for entry in self._entries}
        self._rebuild()

    def entry(self, state_key: str) -> Entry | None:
        """The entry with this state key, if listed."""
        return self._by_key.get(state_key)

    def select_key(self, state_key: str) -> bool:
        """Move the cursor to a checkpoint; False when it is not shown."""
        for index, entry in enumerate(self._shown):
            if entry.state_key == state_key:
                self.move_cursor(row=index)
                return True
        return False

    def watch_filter_text(self) -> None:
        self._rebuild()

    def _rebuild(self) -> None:
        keep = self._last_highlight
        old_row = self.cursor_row
        self._shown = [entry for entry in self._entries if entry_matches(entry, self.filter_text)]
        now = self._clock()
        self.clear(columns=True)
        self._add_columns()
        for entry in self._shown:
            self.add_row(*self._cells(entry, now), key=entry.state_key)
        target = next((i for i, e in enumerate(self._shown) if e.state_key == keep), None)
        if target is None and self._shown:
            # The checkpoint went away: stay at the same height rather than jump to the top.
            target = min(max(old_row, 0), len(self._shown) - 1)
        if target is not None:
            self.move_cursor(row=target, animate=False)
        self._announce()

    def _cells(self, entry: Entry, now: datetime) -> list[Text | str]:
        variables: Mapping[str, str] = self.app.theme_variables if self.is_attached else {}
        w = self._widths
        if isinstance(entry, BrokenCheckpoint):
            style = theme_colour(variables, "error") or "bold"
            return [
                Text(BROKEN_LABEL, style=style),
                Text(one_line(entry.path.name, w["where"]), style=style),
                Text(one_line(entry.reason, w["prompt"]), style=style),
                format_age(entry.created_at, now),
                short_key(entry.state_key),
            ]
        kind_style = theme_colour(variables, "warning" if entry.kind == "approval" else "accent") or ""
        name = entry.workflow if entry.source == "workflow" else f"$ {entry.workflow}"
        step = one_line(entry.step, 16)
        # The step is what tells gates of one workflow apart: cut the name, not the step.
        room = max(4, w["where"] - len(step) - 3)
        return [
            Text(KIND_LABELS[entry.kind], style=kind_style),
            Text.assemble(one_line(name, room), (" › ", "dim"), step),
            one_line(entry.prompt, w["prompt"]),
            format_age(entry.created_at, now),
            entry.short_id,
        ]

    def refresh_ages(self) -> None:
        """Repaint the age column against the clock."""
        now = self._clock()
        for entry in self._shown:
            self.update_cell(entry.state_key, "age", format_age(entry.created_at, now))

    # -- cursor and messages -----------------------------------------------------------------------

    def _announce(self) -> None:
        entry = self.highlighted
        if entry is not None:
            self._last_highlight = entry.state_key
        # Rebuilds and cursor events repeat themselves; the preview and the footer only need to
        # hear about a different checkpoint (recomposing them is the costly part of a keypress).
        if entry == self._announced and self._has_announced:
            return
        self._announced = entry
        self._has_announced = True
        self.refresh_bindings()
        self.post_message(self.Highlighted(self, entry))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        # Re-sent as our own message carrying the checkpoint, not a row index.
        event.stop()
        self._announce()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        # Only a click on the already highlighted row gets here (``enter`` is bound to open).
        event.stop()
        self.action_open()

    def action_first(self) -> None:
        """Jump to the newest checkpoint."""
        if self._shown:
            self.move_cursor(row=0)

    def action_last(self) -> None:
        """Jump to the oldest checkpoint."""
        if self._shown:
            self.move_cursor(row=len(self._shown) - 1)

    def action_open(self) -> None:
        """Ask the screen to open the highlighted checkpoint."""
        entry = self.highlighted
        if entry is not None:
            self.post_message(self.Opened(self, entry))

    def action_decide(self, kind: DecisionKind) -> None:
        """Ask the screen for a decision; it confirms in a modal before anything runs."""
        entry = self.highlighted
        if entry is not None:
            self.post_message(self.DecisionRequested(self, entry, kind))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer only the keys that apply to the highlighted row (the footer follows)."""
        entry = self.highlighted
        if action == "decide":
            if entry is None:
                return False
            kind = parameters[0] if parameters else None
            if kind in ("approve", "reject"):
                return isinstance(entry, Checkpoint) and entry.kind == "approval"
            return True
        if action == "open":
            return entry is not None and isinstance(entry, Checkpoint)
        return True
