"""A run's log as a virtual list: only the lines on screen are ever rendered.

The lines live in a :class:`~lobster_tui.tui.run_story.RunStory` (a bounded deque, numbered from
the run's first line); :meth:`RunLogView.sync` tells the view what arrived since last time, which
costs per new line only a width measurement (and a search test while searching). Rendering is
line by line (Textual's line API) with a small cache, so a step printing 100,000 lines costs the
UI a handful of cheap syncs and one screenful of rendering per frame.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import deque
from dataclasses import dataclass
from itertools import accumulate
from typing import ClassVar

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from ..event_lines import EventStyles, event_text
from ..formatting import printable
from ..run_story import EVENT, NOTE, STDERR, RunStory
from .following_log import FollowingLog

_GUTTER = 2  # "│ " before stdout, "! " before stderr
_INDENT = 2  # wrapped rows after a line's first start under its text, not under the gutter


def _plain_width(text: str) -> int:
    return len(text) if text.isascii() else cell_len(text)


class RunLogView(FollowingLog, can_focus=True):
    """The stdout and stderr of a run with its step events, following the newest line.

    | Key | Action |
    | :- | :- |
    | `f` | Stop following the newest line, or follow it again. |
    | `G` / `end` | Jump to the newest line and follow. |
    | `g` / `home` | Jump to the oldest line kept. |
    | `w` | Wrap long lines, or cut them (scroll sideways with `left`/`right`). |
    | `/` | Search (case-insensitive); matches are highlighted. |
    | `n` / `N` | Next / previous match. |
    | `escape` | Clear the search. |
    """

    DEFAULT_CSS = """
    RunLogView {
        background: $surface;
        color: $text;
        overflow: auto auto;
    }
    RunLogView > .run-log--match {
        background: $warning 40%;
    }
    RunLogView > .run-log--current-match {
        background: $warning;
        color: $background;
        text-style: bold;
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"run-log--match", "run-log--current-match"}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "toggle_follow", "Follow", id="runlog.follow"),
        Binding("G,end", "follow_end", "Newest", show=False, id="runlog.end"),
        Binding("g,home", "oldest", "Oldest", show=False, id="runlog.home"),
        Binding("w", "toggle_wrap", "Wrap", id="runlog.wrap"),
        Binding("slash", "search", "Search", id="runlog.search"),
        Binding("n", "next_match", "Next match", id="runlog.next"),
        Binding("N", "previous_match", "Previous match", show=False, id="runlog.previous"),
        Binding("escape", "clear_search", "Clear search", show=False, id="runlog.clear_search"),
        Binding("j", "scroll_down", "Down", show=False, id="runlog.down"),
        Binding("k", "scroll_up", "Up", show=False, id="runlog.up"),
    ]

    HELP_NAME = "run log"

    following: reactive[bool] = reactive(True, init=False)
    """Whether new lines scroll the view to the end."""

    wrap: reactive[bool] = reactive(False, init=False)
    """Whether long lines wrap (otherwise they are cut and scroll sideways)."""

    @dataclass
    class SearchRequested(Message):
        """``/`` was pressed: the screen shows its search box."""

        log_view: RunLogView

        @property
        def control(self) -> RunLogView:
            """The view that asked."""
            return self.log_view

    def __init__(self, story: RunStory | None = None, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.story = story or RunStory()
        self.new_lines = 0
        """Lines that arrived while not following."""
        self.query = ""
        """The current search, as typed."""
        self._needle = ""
        self.matches: list[int] = []
        """Numbers of the lines that contain the search, oldest first."""
        self.current_match: int | None = None
        """Number of the line of the current match."""
        self._first = 0  # story numbers this view has taken in: [_first, _next)
        self._next = 0
        self._width = 0
        self._heights: deque[int] = deque()
        self._prefix: list[int] | None = None
        self._wrap_width = 0
        self._cache: LRUCache[tuple[int, int, int], Strip] = LRUCache(512)
        self._generation = 0  # bumped when every cached line must go (search, theme)
        self._styles: EventStyles | None = None
        self.border_title = "Log"

    # -- data ------------------------------------------------------------------------------------

    def set_story(self, story: RunStory) -> None:
        """Show another story from its start."""
        self.story = story
        self._first = self._next = 0
        self._width = 0
        self._heights.clear()
        self._prefix = None
        self.matches = []
        self.current_match = None
        self.new_lines = 0
        self._invalidate()
        self.sync()

    @property
    def has_marker(self) -> bool:
        """True when older lines scrolled out of the story (a marker row says so at the top)."""
        return self.story.first_number > 0

    @property
    def total_rows(self) -> int:
        """Rows of the virtual list (wrapped lines count for their rows)."""
        marker = 1 if self.has_marker else 0
        if self.wrap:
            prefix = self._row_prefix()
            return (prefix[-1] if prefix else 0) + marker
        return len(self.story.lines) + marker

    def sync(self) -> None:
        """Take in what the story got since the last sync (UI thread)."""
        story = self.story
        lines = story.lines
        had_marker = self._first > 0
        # We hold lines [_first, _next); the story holds [first_number, next_number).
        gone = max(0, min(story.first_number, self._next) - self._first)
        start_number = max(self._next, story.first_number)
        fresh = story.next_number - start_number
        arrived = story.next_number - self._next
        if arrived <= 0 and gone == 0:
            return
        # Rows that left the top, to keep a reader's place while not following.
        evicted_rows = 0
        if self.wrap:
            for _ in range(min(gone, len(self._heights))):
                evicted_rows += self._heights.popleft()
        else:
            evicted_rows = gone
        base = start_number - story.first_number
        new_items = [lines[index] for index in range(base, base + fresh)] if fresh > 0 else []
        widest = 0
        needle = self._needle
        for offset, (kind, payload) in enumerate(new_items):
            plain = self._plain(kind, payload)
            width = _plain_width(plain) + (_GUTTER if kind < EVENT else 0)
            widest = max(widest, width)
            if self.wrap:
                self._heights.append(self._rows_for(width))
            if needle and needle in plain.casefold():
                self.matches.append(start_number + offset)
        if self.wrap and len(self._heights) != len(lines):
            self._rebuild_heights()
        self._prefix = None
        self._width = max(self._width, widest)
        if self.matches and self.matches[0] < story.first_number:
            self.matches = [number for number in self.matches if number >= story.first_number]
            if self.current_match is not None and self.current_match < story.first_number:
                self.current_match = None
        self._first, self._next = story.first_number, story.next_number
        self._update_virtual_size()
        if self.following:
            self._scroll_to_end()
        else:
            self.new_lines += arrived
            shift = evicted_rows - (1 if self.has_marker and not had_marker else 0)
            if shift:
                self.scroll_to(y=max(0, self.scroll_y - shift), animate=False, immediate=False)
        self.refresh()
        self._update_subtitle()

    def _plain(self, kind: int, payload: object) -> str:
        if kind == EVENT:
            text = event_text(payload, self._event_styles(), width=10_000)  # type: ignore[arg-type]
            return text.plain if text is not None else ""
        return str(payload)

    def _rows_for(self, width: int) -> int:
        wrap_width = max(1, self._wrap_width)
        if width <= wrap_width:
            return 1
        rest = max(1, wrap_width - _INDENT)
        return 1 + -(-(width - wrap_width) // rest)

    def _rebuild_heights(self) -> None:
        self._wrap_width = max(1, self.scrollable_content_region.width)
        self._heights = deque(
            self._rows_for(_plain_width(self._plain(kind, payload)) + (_GUTTER if kind < EVENT else 0))
            for kind, payload in self.story.lines
        )
        self._prefix = None

    def _row_prefix(self) -> list[int]:
        if self._prefix is None:
            self._prefix = list(accumulate(self._heights))
        return self._prefix

    def _update_virtual_size(self) -> None:
        width = 0 if self.wrap else self._width
        self.virtual_size = Size(width, self.total_rows)

    def _invalidate(self) -> None:
        self._generation += 1
        self._cache.clear()

    # -- rendering -------------------------------------------------------------------------------

    def _event_styles(self) -> EventStyles:
        if self._styles is None:
            self._styles = EventStyles.from_theme(self.app.theme_variables) if self.is_attached else EventStyles()
        return self._styles

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None
        self._invalidate()

    def on_resize(self) -> None:
        if self.wrap and self.scrollable_content_region.width != self._wrap_width:
            self._rebuild_heights()
            self._invalidate()
            self._update_virtual_size()
            if self.following:
                self._scroll_to_end()

    def row_of_line(self, number: int) -> int:
        """The first row showing the line with this number."""
        index = max(0, number - self.story.first_number)
        marker = 1 if self.has_marker else 0
        if not self.wrap:
            return index + marker
        prefix = self._row_prefix()
        return (prefix[index - 1] if index > 0 and index - 1 < len(prefix) else 0) + marker

    def _line_at_row(self, row: int) -> tuple[int | None, int]:
        """(line number or None for the marker, row within the wrapped line)."""
        if self.has_marker:
            if row == 0:
                return None, 0
            row -= 1
        if not self.wrap:
            return self.story.first_number + row, 0
        prefix = self._row_prefix()
        index = bisect_right(prefix, row)
        before = prefix[index - 1] if index > 0 else 0
        return self.story.first_number + index, row - before

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self.rich_style
        row = scroll_y + y
        if row >= self.total_rows:
            return Strip.blank(width, base)
        number, sub_row = self._line_at_row(row)
        strip = self._line_strip(number, base)
        if self.wrap:
            if sub_row == 0:
                return strip.crop(0, width).extend_cell_length(width, base)
            rest = max(1, width - _INDENT)
            start = width + (sub_row - 1) * rest
            piece = strip.crop(start, start + rest)
            return Strip.join([Strip.blank(_INDENT, base), piece]).extend_cell_length(width, base)
        return strip.crop_extend(scroll_x, scroll_x + width, base)

    def _line_strip(self, number: int | None, base: Style) -> Strip:
        key = (-1 if number is None else number, self._generation, self.story.first_number if number is None else 0)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        text = self._line_text(number)
        text.stylize_before(base)
        segments = list(text.render(self.app.console))
        strip = Strip(segments, sum(segment.cell_length for segment in segments))
        self._cache[key] = strip
        return strip

    def _line_text(self, number: int | None) -> Text:
        styles = self._event_styles()
        if number is None:
            run = self.story.run_id or "<run>"
            return Text(f"… {self.story.first_number:,} earlier lines are not kept here — lobster logs {run}", styles.muted)
        line = self.story.line(number)
        if line is None:
            return Text("")
        kind, payload = line
        if kind == EVENT:
            text = event_text(payload, styles, width=10_000) or Text("")  # type: ignore[arg-type]
        elif kind == NOTE:
            text = Text(str(payload), styles.muted)
        elif kind == STDERR:
            text = Text.assemble(("! ", styles.stderr), (printable(str(payload)).expandtabs(), styles.stderr))
        else:
            text = Text.assemble(("│ ", styles.muted), printable(str(payload)).expandtabs())
        if self._needle:
            self._highlight(text, number)
        return text

    def _highlight(self, text: Text, number: int) -> None:
        needle = self._needle
        haystack = text.plain.casefold()
        if len(haystack) != len(text.plain):
            return  # case folding changed lengths (ß → ss): offsets would not line up
        style = self.get_component_rich_style(
            "run-log--current-match" if number == self.current_match else "run-log--match", partial=True
        )
        start = haystack.find(needle)
        while start >= 0:
            text.stylize(style, start, start + len(needle))
            start = haystack.find(needle, start + len(needle))

    # -- following -------------------------------------------------------------------------------

    def watch_following(self, following: bool) -> None:
        if following:
            self.new_lines = 0
            self._scroll_to_end()
        self._update_subtitle()

    def watch_wrap(self, wrap: bool) -> None:
        # Keep the line at the top of the view at the top.
        number, _ = self._line_at_row(self.scroll_y)
        if wrap:
            self._rebuild_heights()
        self._prefix = None
        self._invalidate()
        self._update_virtual_size()
        if self.following:
            self._scroll_to_end()
        elif number is not None:
            self.scroll_to(y=self.row_of_line(number), animate=False, immediate=False)
        self.refresh()
        self._update_subtitle()

    def _update_subtitle(self) -> None:
        parts = []
        if self.following:
            parts.append("following")
        elif self.new_lines:
            parts.append(f"▼ {self.new_lines:,} new lines (G follows)")
        else:
            parts.append("paused (G follows)")
        if self.wrap:
            parts.append("wrap")
        if self.query:
            if self.matches:
                index = bisect_left(self.matches, self.current_match) if self.current_match is not None else -1
                found = 0 <= index < len(self.matches) and self.matches[index] == self.current_match
                position = index + 1 if found else 0
                parts.append(f"/{self.query} {position}/{len(self.matches)}")
            else:
                parts.append(f"/{self.query} no match")
        self.border_subtitle = Content(" · ".join(parts))  # Content: the typed query is not markup

    def _scroll_to_end(self) -> None:
        # Deferred until after the next layout, when the new height (and scrollbar) are known.
        self.scroll_end(animate=False, immediate=False, x_axis=False)

    def action_oldest(self) -> None:
        """Jump to the oldest line kept."""
        self.pause()
        self.scroll_to(y=0, animate=False, immediate=False)

    def action_toggle_wrap(self) -> None:
        """Wrap long lines, or cut them."""
        self.wrap = not self.wrap

    def action_scroll_home(self) -> None:
        self.action_oldest()

    def show_line(self, number: int) -> None:
        """Scroll so the line with this number is near the top, and stop following."""
        self.pause()
        self.scroll_to(y=max(0, self.row_of_line(number) - 2), animate=False, immediate=False)

    # -- search ----------------------------------------------------------------------------------

    def action_search(self) -> None:
        """Ask the screen for the search box."""
        self.post_message(self.SearchRequested(self))

    def search(self, query: str) -> None:
        """Highlight every line containing ``query`` and go to the first match from the top of the view."""
        self.query = query
        self._needle = query.casefold()
        self.matches = []
        self.current_match = None
        if self._needle:
            needle = self._needle
            first = self.story.first_number
            for offset, (kind, payload) in enumerate(self.story.lines):
                if needle in self._plain(kind, payload).casefold():
                    self.matches.append(first + offset)
        self._invalidate()
        if self.matches:
            top, _ = self._line_at_row(self.scroll_y)
            top = top if top is not None else self.story.first_number
            index = bisect_right(self.matches, top - 1)
            self._go_to_match(self.matches[index] if index < len(self.matches) else self.matches[0])
        self.refresh()
        self._update_subtitle()
        self.refresh_bindings()

    def _go_to_match(self, number: int) -> None:
        self.current_match = number
        self._invalidate()
        self.pause()
        height = self.scrollable_content_region.height
        row = self.row_of_line(number)
        if not (self.scroll_y <= row < self.scroll_y + height):
            self.scroll_to(y=max(0, row - height // 3), animate=False, immediate=False)
        self.refresh()
        self._update_subtitle()

    def action_next_match(self) -> None:
        """Go to the next match (wrapping round)."""
        if not self.matches:
            return
        current = self.current_match if self.current_match is not None else self.story.first_number - 1
        index = bisect_right(self.matches, current)
        self._go_to_match(self.matches[index] if index < len(self.matches) else self.matches[0])

    def action_previous_match(self) -> None:
        """Go to the previous match (wrapping round)."""
        if not self.matches:
            return
        current = self.current_match if self.current_match is not None else self.story.next_number
        index = bisect_right(self.matches, current - 1) - 1
        self._go_to_match(self.matches[index] if index >= 0 else self.matches[-1])

    def action_clear_search(self) -> None:
        """Clear the search and its highlights."""
        self.search("")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Match keys only while searching (escape goes back otherwise)."""
        if action in ("next_match", "previous_match", "clear_search"):
            return bool(self.query)
        return True

    # -- for tests and the screen --------------------------------------------------------------

    def visible_text(self) -> list[str]:
        """The rows on screen as plain text (what a reader sees, for tests)."""
        return [
            "".join(segment.text for segment in self.render_line(y) if not segment.control).rstrip()
            for y in range(self.scrollable_content_region.height)
        ]

