"""The inbox list: one row per pending checkpoint (or unreadable state file), newest first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import DataTable

from lobster_tui.core.checkpoints import BrokenCheckpoint, Checkpoint

from ..clipboard import copy_id, resume_command
from ..decisions import DecisionKind, short_key
from ..event_lines import theme_colour
from ..formatting import Clock, format_age, one_line, utc_now

Entry = Checkpoint | BrokenCheckpoint

KIND_LABELS = {"approval": "◆ approve", "input": "✎ input"}
BROKEN_LABEL = "✗ broken"
MARK = "●"
"""The mark column of a row marked with ``space`` for a bulk decision."""
NEW_MARK = "+"
"""The mark column of a row that arrived while the app was open and was not looked at yet."""
STALE_MARK = "!"
"""After the age of a checkpoint waiting longer than the stale threshold."""


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
    | `space` | Mark or unmark the row for a bulk decision (and move down). |
    | `*` | Mark every shown row, or clear the marks when all are marked. |
    | `A` / `X` | Ask to approve / reject every marked approval (one confirmation). |
    | `y` / `Y` | Copy the approval id / the `lobster resume` command. |
    | `o` | Sort newest first or oldest first. |
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
        Binding("space", "toggle_mark", "Mark", show=False, id="list.mark"),
        Binding("asterisk", "mark_all", "Mark all", show=False, id="list.mark_all"),
        # Out of the footer (80 columns): the list's border says "N marked · A approve · X reject".
        Binding("A", "bulk('approve')", "Approve marked", show=False, id="list.bulk_approve"),
        Binding("X", "bulk('reject')", "Reject marked", show=False, id="list.bulk_reject"),
        Binding("y", "copy_id", "Copy id", show=False, id="list.copy_id"),
        Binding("Y", "copy_command", "Copy command", show=False, id="list.copy_command"),
        Binding("o", "toggle_sort", "Sort", show=False, id="list.sort"),
    ]

    HELP_NAME = "checkpoint list"

    filter_text: reactive[str] = reactive("", init=False)
    """Only rows whose text contains this (case-insensitive) are shown."""

    oldest_first: reactive[bool] = reactive(False, init=False)
    """Sort the oldest checkpoint first instead of the newest."""

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

    @dataclass
    class BulkRequested(Message):
        """The reviewer asked to approve or reject every marked row; the app confirms first."""

        checkpoint_list: CheckpointList
        entries: list[Entry]
        kind: DecisionKind

        @property
        def control(self) -> CheckpointList:
            """The list that sent the message."""
            return self.checkpoint_list

    def __init__(
        self,
        *,
        clock: Clock = utc_now,
        stale_after: timedelta | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=True)
        self._clock = clock
        self.stale_after = stale_after
        """Checkpoints waiting longer than this get a stale mark beside their age (None: never)."""
        self._marked: set[str] = set()
        self._new: set[str] = set()
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
        # "12h!" fits the age column: the stale mark costs no width of its own.
        fixed = {"mark": 1, "kind": 9, "age": 4, "id": 8}
        # One cell of padding either side of each of 6 columns, and room for a scrollbar.
        spare = max(24, total - sum(fixed.values()) - 2 * 6 - 2)
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
        labels = {"mark": "", "kind": "kind", "where": "workflow › step", "prompt": "prompt", "age": "age", "id": "id"}
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
        # A mark on a checkpoint that is gone (decided, here or elsewhere) goes with it.
        self._marked &= self._by_key.keys()
        self._new &= self._by_key.keys()
        self._rebuild()

    @property
    def marked(self) -> list[Entry]:
        """The marked entries, in the order the list shows them (hidden by the filter or not)."""
        order = {entry.state_key: index for index, entry in enumerate(self._sorted(self._entries))}
        keys = sorted(self._marked & self._by_key.keys(), key=lambda key: order.get(key, 0))
        return [self._by_key[key] for key in keys]

    def set_marked(self, state_keys: Sequence[str]) -> None:
        """Mark exactly these checkpoints (those listed)."""
        self._marked = set(state_keys) & self._by_key.keys()
        self._repaint_marks()

    def set_new(self, state_keys: Sequence[str] | set[str]) -> None:
        """Flag these rows as new arrivals not looked at yet."""
        self._new = set(state_keys) & self._by_key.keys()
        self._repaint_marks()

    def is_stale(self, entry: Entry, now: datetime | None = None) -> bool:
        """True when the checkpoint has waited longer than the stale threshold."""
        if self.stale_after is None:
            return False
        created = entry.created_at
        return ((now or self._clock()) - created) > self.stale_after

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

    def watch_oldest_first(self) -> None:
        self._rebuild()

    def _sorted(self, entries: Sequence[Entry]) -> list[Entry]:
        # Stable: checkpoints made in the same instant keep the scan's order.
        return sorted(entries, key=lambda entry: entry.created_at, reverse=not self.oldest_first)

    def _rebuild(self) -> None:
        keep = self._last_highlight
        old_row = self.cursor_row
        self._shown = [entry for entry in self._sorted(self._entries) if entry_matches(entry, self.filter_text)]
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
        self._update_subtitle()
        self._announce()

    def _cells(self, entry: Entry, now: datetime) -> list[Text | str]:
        variables: Mapping[str, str] = self.app.theme_variables if self.is_attached else {}
        w = self._widths
        if isinstance(entry, BrokenCheckpoint):
            style = theme_colour(variables, "error") or "bold"
            return [
                self._mark_cell(entry),
                Text(BROKEN_LABEL, style=style),
                Text(one_line(entry.path.name, w["where"]), style=style),
                Text(one_line(entry.reason, w["prompt"]), style=style),
                self._age_cell(entry, now),
                short_key(entry.state_key),
            ]
        kind_style = theme_colour(variables, "warning" if entry.kind == "approval" else "accent") or ""
        name = entry.workflow if entry.source == "workflow" else f"$ {entry.workflow}"
        step = one_line(entry.step, 16)
        # The step is what tells gates of one workflow apart: cut the name, not the step.
        room = max(4, w["where"] - len(step) - 3)
        return [
            self._mark_cell(entry),
            Text(KIND_LABELS[entry.kind], style=kind_style),
            Text.assemble(one_line(name, room), (" › ", "dim"), step),
            one_line(entry.prompt, w["prompt"]),
            self._age_cell(entry, now),
            entry.short_id,
        ]

    def _mark_cell(self, entry: Entry) -> Text:
        variables: Mapping[str, str] = self.app.theme_variables if self.is_attached else {}
        if entry.state_key in self._marked:
            return Text(MARK, style=theme_colour(variables, "accent") or "bold")
        if entry.state_key in self._new:
            return Text(NEW_MARK, style=theme_colour(variables, "success") or "bold")
        return Text("")

    def _age_cell(self, entry: Entry, now: datetime) -> Text:
        age = format_age(entry.created_at, now)
        if not self.is_stale(entry, now):
            return Text(age)
        variables: Mapping[str, str] = self.app.theme_variables if self.is_attached else {}
        return Text(f"{age}{STALE_MARK}", style=theme_colour(variables, "warning") or "bold")

    def _repaint_marks(self) -> None:
        for entry in self._shown:
            self.update_cell(entry.state_key, "mark", self._mark_cell(entry))
        self._update_subtitle()
        self.refresh_bindings()

    def _update_subtitle(self) -> None:
        parts = []
        marked = len(self._marked)
        if marked:
            parts.append(f"{marked} marked · A approve · X reject")
        if self.oldest_first:
            parts.append("oldest first")
        self.border_subtitle = " · ".join(parts) or None

    def refresh_ages(self) -> None:
        """Repaint the age column against the clock."""
        now = self._clock()
        for entry in self._shown:
            self.update_cell(entry.state_key, "age", self._age_cell(entry, now))

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

    def action_toggle_mark(self) -> None:
        """Mark the highlighted row for a bulk decision (or unmark it), then move down."""
        entry = self.highlighted
        if entry is None:
            return
        self._marked ^= {entry.state_key}
        self._repaint_marks()
        if self.cursor_row < len(self._shown) - 1:
            self.move_cursor(row=self.cursor_row + 1)

    def action_mark_all(self) -> None:
        """Mark every shown row; when they all are marked already, clear every mark."""
        shown = {entry.state_key for entry in self._shown}
        if shown and shown <= self._marked:
            self._marked.clear()
        else:
            self._marked |= shown
        self._repaint_marks()

    def action_bulk(self, kind: DecisionKind) -> None:
        """Ask for one decision on every marked row; the app confirms them all in one modal."""
        marked = self.marked
        if not marked:
            self.notify("Mark checkpoints with space first (* marks every shown row).", severity="warning")
            return
        self.post_message(self.BulkRequested(self, marked, kind))

    def action_copy_id(self) -> None:
        """Copy the highlighted checkpoint's approval id (its state key when it has none)."""
        entry = self.highlighted
        if entry is not None:
            self._copy(copy_id(entry), "Copied id")

    def action_copy_command(self) -> None:
        """Copy the shell command that decides the highlighted checkpoint with the CLI."""
        entry = self.highlighted
        if entry is not None:
            self._copy(resume_command(entry), "Copied command")

    def _copy(self, text: str, title: str) -> None:
        # OSC 52: the terminal puts it on the clipboard (over ssh too); the toast shows exactly it.
        self.app.copy_to_clipboard(text)
        self.notify(text, title=title, markup=False)

    def action_toggle_sort(self) -> None:
        """Newest first, or oldest first."""
        self.oldest_first = not self.oldest_first

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
        if action in ("toggle_mark", "copy_id", "copy_command"):
            return entry is not None
        return True
