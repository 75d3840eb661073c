"""The inbox list: one row per pending checkpoint (or unreadable state file), newest first.

A virtual list (Textual's line API on a :class:`~textual.scroll_view.ScrollView`): only the rows on
screen are ever rendered, so 10,000 checkpoints cost a sort, a filter and a width measurement per
update, not 10,000 table rows of cells.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

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

COLUMNS = ("mark", "kind", "where", "prompt", "age", "id")
"""Column keys, left to right."""
COLUMN_LABELS = {"mark": "", "kind": "kind", "where": "workflow › step", "prompt": "prompt", "age": "age", "id": "id"}
_PADDING = 1  # cells of padding either side of every column


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


@dataclass
class ListMessage(Message):
    """A message from a :class:`CheckpointList`; ``control`` is the list, for ``@on`` selectors."""

    checkpoint_list: CheckpointList

    @property
    def control(self) -> CheckpointList:
        """The list that sent the message."""
        return self.checkpoint_list


class CheckpointList(ScrollView, can_focus=True):
    """The pending checkpoints of a state directory as a list with a row cursor and a header.

    Decisions are never taken here: ``a``, ``x`` and ``c`` only *ask* for one (the screen then
    opens a confirm modal), so a stray key cannot approve anything.

    | Key | Action |
    | :- | :- |
    | `j` / `down` | Next checkpoint. |
    | `k` / `up` | Previous checkpoint. |
    | `pagedown` / `pageup` | A screenful down / up. |
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

    A click highlights a row; a click on the highlighted row opens it.
    """

    # The look of Textual's DataTable (which this list replaced): zebra stripes, a bold header.
    DEFAULT_CSS = """
    CheckpointList {
        background: $surface;
        color: $foreground;
        overflow-x: hidden;
        overflow-y: auto;
        &:focus {
            background-tint: $foreground 5%;
            & > .checkpoint-list--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
            & > .checkpoint-list--header {
                background-tint: $foreground 5%;
            }
        }
        &:dark > .checkpoint-list--even-row {
            background: $surface-darken-1 40%;
        }
        & > .checkpoint-list--header {
            text-style: bold;
            background: $panel;
            color: $foreground;
        }
        &:ansi > .checkpoint-list--header {
            background: ansi_bright_blue;
            color: ansi_default;
        }
        & > .checkpoint-list--even-row {
            background: $surface-lighten-1 50%;
        }
        & > .checkpoint-list--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
        & > .checkpoint-list--hover {
            background: $block-hover-background;
        }
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "checkpoint-list--header",
        "checkpoint-list--even-row",
        "checkpoint-list--cursor",
        "checkpoint-list--hover",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="list.down"),
        Binding("k", "cursor_up", "Up", show=False, id="list.up"),
        Binding("down", "cursor_down", "Down", show=False, id="list.down_arrow"),
        Binding("up", "cursor_up", "Up", show=False, id="list.up_arrow"),
        Binding("pagedown", "page_down", "Page down", show=False, id="list.page_down"),
        Binding("pageup", "page_up", "Page up", show=False, id="list.page_up"),
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
    class Highlighted(ListMessage):
        """The highlighted checkpoint changed (None when the list is empty)."""

        entry: Entry | None

    @dataclass
    class Opened(ListMessage):
        """The reviewer asked to open a checkpoint (``enter`` or a click on the highlighted row)."""

        entry: Entry

    @dataclass
    class DecisionRequested(ListMessage):
        """The reviewer pressed a decision key; the screen confirms before anything happens."""

        entry: Entry
        kind: DecisionKind

    @dataclass
    class BulkRequested(ListMessage):
        """The reviewer asked to approve or reject every marked row; the app confirms first."""

        entries: list[Entry]
        kind: DecisionKind

    def __init__(
        self,
        *,
        clock: Clock = utc_now,
        stale_after: timedelta | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self._clock = clock
        self.stale_after = stale_after
        """Checkpoints waiting longer than this get a stale mark beside their age (None: never)."""
        self._marked: set[str] = set()
        self._new: set[str] = set()
        self._entries: list[Entry] = []
        self._shown: list[Entry] = []
        self._index: dict[str, int] | None = None  # state key → row, built when first needed
        self._by_key: dict[str, Entry] = {}
        self._cursor = 0
        self._hover: int | None = None
        self._last_highlight: str | None = None
        self._widths: dict[str, int] = {}
        self._widths_for = -1
        self._now = clock()
        self._announced: Entry | None = None
        self._has_announced = False
        # Rendered rows by (row, state key, cursor?, hover?, width); cleared whenever what a row
        # shows may have changed (marks, ages, widths, theme, focus).
        self._cache: LRUCache[tuple[int, str, bool, bool, int], Strip] = LRUCache(256)

    def on_mount(self) -> None:
        self._fit_columns()
        # Ages move on by themselves; repaint them now and then.
        self.set_interval(15, self.refresh_ages)

    def on_resize(self) -> None:
        if self._widths_for != self.size.width:
            self._fit_columns()
            self._invalidate()
        self._update_virtual_size()
        self._scroll_cursor_into_view()

    # -- columns -----------------------------------------------------------------------------------

    def _column_widths(self) -> dict[str, int]:
        """Fit the columns to the widget: "workflow › step" and prompt share what is left."""
        total = self.size.width or 100
        # "12h!" fits the age column: the stale mark costs no width of its own.
        fixed = {"mark": 1, "kind": 9, "age": 4, "id": 8}
        # One cell of padding either side of each of 6 columns, and room for a scrollbar.
        spare = max(24, total - sum(fixed.values()) - 2 * _PADDING * len(COLUMNS) - 2)
        # Room for the longest "name › step" (a pipeline's text counts as 16), but the prompt
        # keeps at least 45%: it is what a reviewer reads first.
        limit = min(44, int(spare * 0.55))
        wanted = 15
        seen: set[tuple[str, str, str]] = set()
        for entry in self._shown:
            if isinstance(entry, BrokenCheckpoint):
                width = min(len(_flat(entry.path.name)), 28)
            else:
                shape = (entry.source, entry.workflow, entry.step)
                if shape in seen:
                    continue  # many checkpoints share a workflow and step
                seen.add(shape)
                name = entry.workflow if entry.source == "workflow" else f"$ {entry.workflow}"
                # The width "name › step" takes, without building it (one_line keeps lengths).
                width = min(len(_flat(name)), 16) + 3 + min(len(_flat(entry.step)), 16)
            if width > wanted:
                wanted = width
                if wanted >= limit:
                    break  # nothing wider can change the result
        where = max(12, min(wanted, limit))
        return {**fixed, "where": where, "prompt": max(10, spare - where)}

    def _fit_columns(self) -> None:
        widths = self._column_widths()
        if widths != self._widths:
            self._widths = widths
            self._invalidate()
        self._widths_for = self.size.width

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
    def row_count(self) -> int:
        """How many rows are shown."""
        return len(self._shown)

    @property
    def cursor_row(self) -> int:
        """The row of the cursor (0 when the list is empty)."""
        return self._cursor

    @property
    def highlighted(self) -> Entry | None:
        """The entry under the cursor."""
        if 0 <= self._cursor < len(self._shown):
            return self._shown[self._cursor]
        return None

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
        new = set(state_keys) & self._by_key.keys()
        if new != self._new:
            self._new = new
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

    def row_of(self, state_key: str) -> int | None:
        """The row showing this checkpoint, or None when it is not shown."""
        if self._index is None:
            self._index = {entry.state_key: row for row, entry in enumerate(self._shown)}
        return self._index.get(state_key)

    def select_key(self, state_key: str) -> bool:
        """Move the cursor to a checkpoint; False when it is not shown."""
        row = self.row_of(state_key)
        if row is None:
            return False
        self.move_cursor(row=row)
        return True

    def cell(self, state_key: str, column: str) -> Text:
        """What a row shows in a column (``mark``, ``kind``, ``where``, ``prompt``, ``age``, ``id``)."""
        entry = self._by_key[state_key]
        return self._cells(entry)[COLUMNS.index(column)]

    def watch_filter_text(self) -> None:
        self._rebuild()

    def watch_oldest_first(self) -> None:
        self._rebuild()

    def _sorted(self, entries: Sequence[Entry]) -> list[Entry]:
        # Stable: checkpoints made in the same instant keep the scan's order.
        return sorted(entries, key=_created_at, reverse=not self.oldest_first)

    def _rebuild(self) -> None:
        keep = self._last_highlight
        old_row = self._cursor
        ordered = self._sorted(self._entries)
        needle = self.filter_text
        self._shown = [entry for entry in ordered if entry_matches(entry, needle)] if needle else ordered
        self._index = None
        self._now = self._clock()
        self._fit_columns()
        self._invalidate()
        target = self.row_of(keep) if keep is not None else None
        if target is None and self._shown:
            # The checkpoint went away: stay at the same height rather than jump to the top.
            target = min(max(old_row, 0), len(self._shown) - 1)
        self._cursor = target if target is not None else 0
        self._update_virtual_size()
        self._scroll_cursor_into_view()
        self._update_subtitle()
        self._announce()

    def _update_virtual_size(self) -> None:
        # One line for the header, then one per row.
        self.virtual_size = Size(self.size.width, len(self._shown) + 1)

    def _invalidate(self) -> None:
        self._cache.clear()
        self.refresh()

    def _repaint_marks(self) -> None:
        self._invalidate()
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
        self._now = self._clock()
        self._invalidate()

    # -- cells -------------------------------------------------------------------------------------

    def _cells(self, entry: Entry) -> list[Text]:
        variables: Mapping[str, str] = self.app.theme_variables if self.is_attached else {}
        w = self._widths or self._column_widths()
        if isinstance(entry, BrokenCheckpoint):
            style = theme_colour(variables, "error") or "bold"
            return [
                self._mark_cell(entry, variables),
                Text(BROKEN_LABEL, style=style),
                Text(one_line(entry.path.name, w["where"]), style=style),
                Text(one_line(entry.reason, w["prompt"]), style=style),
                self._age_cell(entry, variables),
                Text(short_key(entry.state_key)),
            ]
        kind_style = theme_colour(variables, "warning" if entry.kind == "approval" else "accent") or ""
        name = entry.workflow if entry.source == "workflow" else f"$ {entry.workflow}"
        step = one_line(entry.step, 16)
        # The step is what tells gates of one workflow apart: cut the name, not the step.
        room = max(4, w["where"] - len(step) - 3)
        return [
            self._mark_cell(entry, variables),
            Text(KIND_LABELS[entry.kind], style=kind_style),
            Text.assemble(one_line(name, room), (" › ", "dim"), step),
            Text(one_line(entry.prompt, w["prompt"])),
            self._age_cell(entry, variables),
            Text(entry.short_id),
        ]

    def _mark_cell(self, entry: Entry, variables: Mapping[str, str]) -> Text:
        if entry.state_key in self._marked:
            return Text(MARK, style=theme_colour(variables, "accent") or "bold")
        if entry.state_key in self._new:
            return Text(NEW_MARK, style=theme_colour(variables, "success") or "bold")
        return Text("")

    def _age_cell(self, entry: Entry, variables: Mapping[str, str]) -> Text:
        now = self._now
        age = format_age(entry.created_at, now)
        if not self.is_stale(entry, now):
            return Text(age)
        return Text(f"{age}{STALE_MARK}", style=theme_colour(variables, "warning") or "bold")

    # -- rendering ---------------------------------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()  # theme colours and component styles may have changed

    def on_focus(self, event: events.Focus) -> None:
        self._invalidate()  # the cursor's colours depend on focus

    def on_blur(self, event: events.Blur) -> None:
        self._invalidate()

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if y == 0:
            return self._header_strip(width)
        row = y - 1 + self.scroll_offset.y
        if not 0 <= row < len(self._shown):
            return Strip.blank(width, self.rich_style)
        entry = self._shown[row]
        cursor = row == self._cursor
        hover = row == self._hover
        key = (row, entry.state_key, cursor, hover, width)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._cache[key] = self._row_strip(row, entry, cursor, hover, width)
        return strip

    def _line(self, cells: Sequence[Text]) -> Text:
        line = Text(no_wrap=True, end="")
        pad = " " * _PADDING
        for column, cell in zip(COLUMNS, cells):
            cell = cell.copy()
            cell.truncate(self._widths[column], pad=True)
            line.append(pad)
            line.append_text(cell)
            line.append(pad)
        return line

    def _strip(self, line: Text, style: Style, post_style: Style | None, width: int) -> Strip:
        segments = Segment.apply_style(line.render(self.app.console), style, post_style)
        return Strip(segments).adjust_cell_length(width, style).simplify()

    def _header_strip(self, width: int) -> Strip:
        line = self._line([Text(COLUMN_LABELS[column]) for column in COLUMNS])
        style = self.rich_style + self.get_component_rich_style("checkpoint-list--header")
        return self._strip(line, style, None, width)

    def _row_strip(self, row: int, entry: Entry, cursor: bool, hover: bool, width: int) -> Strip:
        style = self.rich_style
        if row % 2 == 0:
            style += self.get_component_rich_style("checkpoint-list--even-row")
        post_style: Style | None = None
        if hover:
            style += self.get_component_rich_style("checkpoint-list--hover")
        if cursor:
            cursor_style = self.get_component_rich_style("checkpoint-list--cursor")
            style += cursor_style
            # The cursor's text colour wins over the cells' own (kind, stale age), as in DataTable.
            post_style = Style.from_color(color=cursor_style.color)
        return self._strip(self._line(self._cells(entry)), style, post_style, width)

    # -- cursor and messages -----------------------------------------------------------------------

    def move_cursor(self, *, row: int, animate: bool = False, scroll: bool = True) -> None:
        """Put the cursor on a row (clamped to the rows shown) and bring it into view."""
        if not self._shown:
            return
        row = min(max(row, 0), len(self._shown) - 1)
        if row != self._cursor:
            self._cursor = row
            self.refresh()
        if scroll:
            self._scroll_cursor_into_view(animate=animate)
        self._announce()

    def _scroll_cursor_into_view(self, animate: bool = False) -> None:
        rows = self.scrollable_content_region.height - 1  # the header takes a line
        if rows <= 0:
            return
        top = round(self.scroll_offset.y)
        if self._cursor < top:
            self.scroll_to(y=self._cursor, animate=animate, immediate=True)
        elif self._cursor >= top + rows:
            self.scroll_to(y=self._cursor - rows + 1, animate=animate, immediate=True)

    def _announce(self) -> None:
        entry = self.highlighted
        if entry is not None:
            self._last_highlight = entry.state_key
        # Rebuilds and cursor moves repeat themselves; the preview and the footer only need to
        # hear about a different checkpoint (recomposing them is the costly part of a keypress).
        if entry == self._announced and self._has_announced:
            return
        self._announced = entry
        self._has_announced = True
        self.refresh_bindings()
        self.post_message(self.Highlighted(self, entry))

    def _row_at(self, event: events.MouseEvent) -> int | None:
        offset = event.get_content_offset(self)
        if offset is None or offset.y < 1:
            return None  # the header, border or scrollbar
        row = offset.y - 1 + round(self.scroll_offset.y)
        return row if 0 <= row < len(self._shown) else None

    def on_click(self, event: events.Click) -> None:
        row = self._row_at(event)
        if row is None:
            return
        if row == self._cursor and self.highlighted is not None:
            self.action_open()  # a click on the highlighted row opens it
        else:
            self.move_cursor(row=row)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        row = self._row_at(event)
        if row != self._hover:
            self._hover = row
            self._invalidate()

    def on_leave(self, event: events.Leave) -> None:
        if self._hover is not None:
            self._hover = None
            self._invalidate()

    def _move_by_keys(self, row: int) -> None:
        # Keyboard moves hide the mouse's hover row, as DataTable does.
        if self._hover is not None:
            self._hover = None
            self._invalidate()
        self.move_cursor(row=row)

    def action_cursor_down(self) -> None:
        """Next checkpoint."""
        self._move_by_keys(self._cursor + 1)

    def action_cursor_up(self) -> None:
        """Previous checkpoint."""
        self._move_by_keys(self._cursor - 1)

    def action_page_down(self) -> None:
        """A screenful down."""
        self._move_by_keys(self._cursor + max(1, self.scrollable_content_region.height - 1))

    def action_page_up(self) -> None:
        """A screenful up."""
        self._move_by_keys(self._cursor - max(1, self.scrollable_content_region.height - 1))

    def action_first(self) -> None:
        """Jump to the newest checkpoint."""
        if self._shown:
            self._move_by_keys(0)

    def action_last(self) -> None:
        """Jump to the oldest checkpoint."""
        if self._shown:
            self._move_by_keys(len(self._shown) - 1)

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
        if self._cursor < len(self._shown) - 1:
            self.move_cursor(row=self._cursor + 1)

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


def _created_at(entry: Entry) -> datetime:
    return entry.created_at


def _flat(text: str) -> str:
    return " ".join(text.split())
