"""The live log: a resumed run's steps, their output and its outcome, as they happen.

The panel is a virtual list (Textual's line API): written lines are kept with their width
measured (output lines as plain strings, styled only when drawn; events as styled texts), and
only the rows on screen are ever rendered, with a small cache. Long lines wrap at the panel's
width, continuing under their text.

Its costs stay bounded however loud a step is:

- A feed is drained at most every :attr:`LogPanel.DRAIN_INTERVAL` seconds, and the first drain of
  a burst waits :attr:`LogPanel.FIRST_DRAIN_DELAY` (invisible to a reader), so the UI thread does
  not compete with the runner's thread for every block of output: a short step costs one drain.
- Each drain takes at most :attr:`LogPanel.BATCH_LINES` output lines (the newest; a marker counts
  the rest, which the run log on disk keeps), and a drain costs appends and width measurements.
- The panel keeps at most :attr:`LogPanel.max_lines` lines; a frame renders one screenful.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from itertools import accumulate
from typing import ClassVar
from weakref import WeakKeyDictionary

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.timer import Timer

from ..event_feed import EventFeed, FeedItem, OutputBlock, Skipped
from ..event_lines import EventStyles, event_text, output_mark, skipped_text
from ..formatting import printable
from .following_log import FollowingLog

_OUTPUT_INDENT = 4  # wrapped rows of output continue under the text, after "  │ "
_EVENT_INDENT = 2


class _Line:
    """One written line: plain text (the transcript's), what is drawn, its width and indent.

    Output lines keep only their string and stream (a drain costs no rich ``Text``); they are
    styled when drawn. Events, headings and markers keep their styled text.
    """

    __slots__ = ("indent", "plain", "shown", "stream", "text", "width")

    def __init__(self, plain: str, *, text: Text | None = None, stream: str | None = None,
                 indent: int = _EVENT_INDENT) -> None:
        self.plain = plain
        self.text = text
        self.stream = stream
        """``stdout`` or ``stderr`` for a line a step printed, else None."""
        self.shown = plain.expandtabs() if "\t" in plain else plain
        self.width = len(self.shown) if self.shown.isascii() else cell_len(self.shown)
        self.indent = indent

    @classmethod
    def of_text(cls, text: Text, indent: int = _EVENT_INDENT) -> _Line:
        """A styled line (an event, a heading, a marker)."""
        plain = text.plain
        if "\t" in plain:
            text = text.copy()
            text.expand_tabs()
        return cls(plain, text=text, indent=indent)

    @classmethod
    def of_output(cls, line: str, stream: str) -> _Line:
        """A line a step printed, as :func:`~lobster_tui.tui.event_lines.output_text` draws it."""
        if not line.isprintable():  # fast path: most output has no control characters
            line = printable(line).rstrip("\n")
        return cls(output_mark(stream) + line, stream=stream, indent=_OUTPUT_INDENT)


def _row_spans(line: _Line, wrap_width: int) -> list[tuple[int, int]]:
    """The ``(start, end)`` cells of each row of a line wider than ``wrap_width``.

    Rows after the first start under the text (``indent``). Output is cut at the width, as a
    terminal does; an event's prose (a prompt, a message) breaks after a space when the row has
    one, so words stay whole. Heights and drawing both use this, so they always agree.
    """
    indent = min(line.indent, wrap_width - 1)
    rest = wrap_width - indent
    if line.text is None:
        return [(0, wrap_width)] + [(at, min(at + rest, line.width)) for at in range(wrap_width, line.width, rest)]
    spans: list[tuple[int, int]] = []
    start, room, cell = 0, wrap_width, 0
    after_space: int | None = None  # the cell just after the row's last space
    for char in line.shown:
        width = 1 if char < "\x80" else cell_len(char)
        if cell + width - start > room:
            if char == " ":  # the space just past a full row is dropped, not carried over
                spans.append((start, cell))
                start, room, after_space, cell = cell + width, rest, None, cell + width
                continue
            cut = after_space if after_space is not None and after_space > start + indent else cell
            spans.append((start, cut))
            start, room, after_space = cut, rest, None
        cell += width
        if char == " ":
            after_space = cell
    if start < cell:
        spans.append((start, cell))
    return spans


class LogPanel(FollowingLog, can_focus=True):
    """Streams run events into a scrolling log that follows the newest line by default.

    Events arrive through :meth:`new_feed` from a worker thread in batches (see
    :class:`~lobster_tui.tui.event_feed.EventFeed`), so a step printing thousands of lines a
    second costs one message per batch, not one per line.

    | Key | Action |
    | :- | :- |
    | `f` | Follow the newest line, or stop following. |
    | `G` / `end` | Jump to the newest line and follow. |
    | `g` / `home` | Jump to the first line (stops following). |
    | `j` / `k` | Scroll down / up (up stops following). |
    """

    DEFAULT_CSS = """
    LogPanel {
        background: $surface;
        color: $foreground;
        overflow-x: hidden;
        overflow-y: scroll;
        &:focus {
            background-tint: $foreground 5%;
        }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "toggle_follow", "Follow", id="log.follow"),
        Binding("G,end", "follow_end", "Newest", show=False, id="log.end"),
        Binding("g,home", "scroll_home", "Oldest", show=False, id="log.home"),
        Binding("j", "scroll_down", "Down", show=False, id="log.down"),
        Binding("k", "scroll_up", "Up", show=False, id="log.up"),
    ]

    HELP_NAME = "run log"

    BATCH_LINES = 100
    """Output lines shown per drain at most (the newest of the batch)."""

    DRAIN_INTERVAL = 0.2
    """Seconds between two drains of one feed, so a flood costs a few drains a second."""

    FIRST_DRAIN_DELAY = 0.05
    """Seconds from a feed's first notification of a burst to its drain (a reader cannot see it;
    meanwhile the runner's thread has the interpreter to itself)."""

    MIN_WRAP_WIDTH = 20
    """Lines wrap at the panel's width, but never narrower than this."""

    running: reactive[int] = reactive(0)
    """How many runs are streaming into the panel now."""

    @dataclass
    class EventsReady(Message):
        """A feed has events waiting; drained by the panel on its own thread."""

        feed: EventFeed

    def __init__(self, *, id: str | None = None, classes: str | None = None, max_lines: int = 5000) -> None:
        super().__init__(id=id, classes=classes)
        self.border_title = "Run log"
        self.max_lines = max(1, max_lines)
        """Lines kept; older ones leave the top."""
        self._lines: deque[_Line] = deque(maxlen=self.max_lines)
        self._first_number = 0  # number of _lines[0], counted from the first line ever written
        self._heights: deque[int] = deque(maxlen=self.max_lines)  # rows of each line when wrapped
        self._prefix: list[int] | None = None  # running sum of _heights, rebuilt when needed
        self._wrap_width = 0  # the width _heights were measured at (0: not laid out yet)
        self._cache: LRUCache[tuple[int, int], list[Strip]] = LRUCache(256)
        self._styles: EventStyles | None = None
        self._base_style: tuple[Style, Style, Style] | None = None
        self._render_width = 0  # the content's width, looked up once per render
        # Weak: a feed whose run ended (or was dropped by its worker) leaves nothing behind.
        self._last_drain: WeakKeyDictionary[EventFeed, float] = WeakKeyDictionary()
        self._drain_timers: dict[EventFeed, Timer] = {}

    @property
    def transcript(self) -> list[str]:
        """Every line kept, as plain text before wrapping (what a reader would copy)."""
        return [line.plain for line in self._lines]

    def on_mount(self) -> None:
        self._update_subtitle()

    # -- writing -------------------------------------------------------------------------------------

    def write_line(self, line: Text) -> None:
        """Write one line."""
        self.write_lines([line])

    def write_lines(self, lines: list[Text]) -> None:
        """Write lines (each a single line of text) at the end of the log."""
        if not lines:
            return
        self._append([_Line.of_text(text) for text in lines])

    def clear(self) -> None:
        """Remove every line."""
        self._first_number += len(self._lines)
        self._lines.clear()
        self._heights.clear()
        self._prefix = None
        self._cache.clear()
        self._update_virtual_size()
        self.scroll_to(y=0, animate=False)
        self.refresh()

    def _append(self, lines: list[_Line]) -> None:
        evicted = max(0, len(self._lines) + len(lines) - self.max_lines)
        evicted_rows = 0
        if evicted and not self.following:
            evicted_rows = sum(self._heights[index] for index in range(min(evicted, len(self._heights))))
        self._first_number += evicted
        self._lines.extend(lines)
        self._heights.extend(self._rows_of(line) for line in lines)
        self._prefix = None
        self._update_virtual_size()
        if self.following:
            self._scroll_to_end()
        elif evicted_rows:
            # Keep the reader's place while older lines leave the top.
            self.scroll_to(y=max(0, self.scroll_y - evicted_rows), animate=False)
        self.refresh()

    def _event_styles(self) -> EventStyles:
        if self._styles is None:
            self._styles = EventStyles.from_theme(self.app.theme_variables) if self.is_attached else EventStyles()
        return self._styles

    # -- feeding -------------------------------------------------------------------------------------

    def new_feed(self, title: str) -> EventFeed:
        """Start a section for one run and return the feed its worker pushes events into."""
        feed: EventFeed
        # The notify callback runs on the worker thread: post_message is thread-safe. The feed
        # holds no more than a few batches of output while the UI is busy.
        feed = EventFeed(lambda: self.post_message(self.EventsReady(feed)), keep_lines=4 * self.BATCH_LINES)
        self.running += 1
        self.write_line(Text(f"── {title} ──", style=self._event_styles().heading))
        return feed

    def on_log_panel_events_ready(self, message: LogPanel.EventsReady) -> None:
        message.stop()
        feed = message.feed
        # The feed does not notify again until drained, so at most one drain is scheduled.
        if feed in self._drain_timers:
            return
        since_last = time.monotonic() - self._last_drain.get(feed, float("-inf"))
        wait = max(self.FIRST_DRAIN_DELAY, self.DRAIN_INTERVAL - since_last)
        self._drain_timers[feed] = self.set_timer(wait, partial(self._drain, feed))

    def _drain(self, feed: EventFeed) -> None:
        timer = self._drain_timers.pop(feed, None)
        if timer is not None:
            timer.stop()
        self._last_drain[feed] = time.monotonic()
        items, _dropped = feed.drain(self.BATCH_LINES)
        self.write_items(items)

    def write_items(self, items: Iterable[FeedItem]) -> None:
        """Write a drained batch: events, blocks of output and markers for lines not shown."""
        styles = self._event_styles()
        width = self._text_width()
        lines: list[_Line] = []
        for item in items:
            if isinstance(item, OutputBlock):
                stream = item.stream
                lines.extend(_Line.of_output(line, stream) for line in item.lines())
            elif isinstance(item, Skipped):
                lines.append(_Line.of_text(skipped_text(item.count, item.run_id, styles), _OUTPUT_INDENT))
            else:
                text = event_text(item, styles, width=width)
                if text is not None:
                    lines.append(_Line.of_text(text))
        if lines:
            self._append(lines)

    def _text_width(self) -> int:
        return max(20, self.scrollable_content_region.width - 4) if self.is_mounted else 120

    def finish(self, feed: EventFeed | None, status: str, message: str) -> None:
        """End a run's section with its outcome, after writing whatever was still queued."""
        if feed is not None:
            self._drain(feed)
            self._last_drain.pop(feed, None)
        styles = self._event_styles()
        style = styles.ok if status == "ok" else styles.warning if status in ("cancelled", "needs_approval", "needs_input") else styles.error
        self.write_line(Text(f"⏹ {message}", style=style))
        self.running = max(0, self.running - 1)

    # -- layout --------------------------------------------------------------------------------------

    def _current_wrap_width(self) -> int:
        width = self.scrollable_content_region.width
        return max(self.MIN_WRAP_WIDTH, width) if width > 0 else 0

    def _rows_of(self, line: _Line) -> int:
        wrap_width = self._wrap_width
        if wrap_width <= 0 or line.width <= wrap_width:
            return 1
        return len(_row_spans(line, wrap_width))

    def _row_prefix(self) -> list[int]:
        if self._prefix is None:
            self._prefix = list(accumulate(self._heights))
        return self._prefix

    @property
    def total_rows(self) -> int:
        """Rows of the log with every line wrapped."""
        prefix = self._row_prefix()
        return prefix[-1] if prefix else 0

    def _update_virtual_size(self) -> None:
        size = Size(0, self.total_rows)
        if size == self.virtual_size:
            return
        if not self.is_mounted or self._wrap_width == 0:
            self.virtual_size = size
            return
        # Our size never depends on our lines (the screen gives the panel its height), so a new
        # line needs no layout of the whole screen: the scrollbar is told the new length here.
        self.set_reactive(LogPanel.virtual_size, size)
        self.vertical_scrollbar.window_virtual_size = size.height

    def on_resize(self) -> None:
        wrap_width = self._current_wrap_width()
        if wrap_width != self._wrap_width:
            top = self._line_at_row(round(self.scroll_y))[0]
            self._wrap_width = wrap_width
            self._heights = deque((self._rows_of(line) for line in self._lines), maxlen=self.max_lines)
            self._prefix = None
            self._cache.clear()
            self._update_virtual_size()
            if not self.following and top is not None:
                self.scroll_to(y=self._row_of_line(top), animate=False)
        if self.following:
            self._scroll_to_end()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None
        self._base_style = None
        self._cache.clear()

    def _row_of_line(self, number: int) -> int:
        index = number - self._first_number
        if index <= 0:
            return 0
        prefix = self._row_prefix()
        return prefix[min(index, len(prefix)) - 1]

    def _line_at_row(self, row: int) -> tuple[int | None, int]:
        """(number of the line shown on this row, or None past the end; row within that line)."""
        prefix = self._row_prefix()
        index = bisect_right(prefix, row)
        if index >= len(prefix):
            return None, 0
        before = prefix[index - 1] if index > 0 else 0
        return self._first_number + index, row - before

    # -- rendering -----------------------------------------------------------------------------------

    def render_lines(self, crop: Region) -> list[Strip]:
        # Looked up once per render, not once per row (the style walks the DOM).
        self._base_style = None
        self._render_width = self.scrollable_content_region.width
        return super().render_lines(crop)

    def _render_styles(self) -> tuple[Style, Style, Style]:
        """The widget's style, and it combined with the output mark's and stderr's styles."""
        if self._base_style is None:
            base = self.rich_style
            styles = self._event_styles()
            self._base_style = (base, base + Style.parse(styles.muted), base + Style.parse(styles.stderr))
        return self._base_style

    def render_line(self, y: int) -> Strip:
        width = self._render_width or self.scrollable_content_region.width
        if not self._lines:
            base = self._render_styles()[0]
            if y == 0 and self.running == 0:
                return self._placeholder(width, base)
            return Strip.blank(width, base)
        number, sub_row = self._line_at_row(round(self.scroll_y) + y)
        if number is None:
            return Strip.blank(width, self._render_styles()[0])
        rows = self._line_rows(number, width)
        return rows[sub_row] if sub_row < len(rows) else Strip.blank(width, self._render_styles()[0])

    def _placeholder(self, width: int, base: Style) -> Strip:
        text = Text("Decisions you take stream their run here.", style=self._event_styles().muted)
        text.stylize_before(base)
        strip = Strip(list(text.render(self.app.console)))
        return strip.extend_cell_length(width, base).crop(0, width)

    def _line_rows(self, number: int, width: int) -> list[Strip]:
        """The rows of one line, each ``width`` cells (cached until the width or style changes)."""
        key = (number, width)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        wrap_width = max(self.MIN_WRAP_WIDTH, width)
        line = self._lines[number - self._first_number]
        base, mark_style, stderr_style = self._render_styles()
        if line.text is None:
            # Output: at most two segments, no rich Text (the mark, then the line as printed).
            if line.stream == "stderr":
                segments = [Segment(line.shown, stderr_style)]
            else:
                cut = len(output_mark("stdout"))
                segments = [Segment(line.shown[:cut], mark_style), Segment(line.shown[cut:], base)]
        else:
            text = line.text.copy()
            text.stylize_before(base)
            segments = list(text.render(self.app.console))
        strip = Strip(segments)
        if line.width <= wrap_width:
            rows = [strip]
        else:
            pad = Strip.blank(min(line.indent, wrap_width - 1), base)
            spans = _row_spans(line, wrap_width)
            rows = [strip.crop(*spans[0])] + [Strip.join([pad, strip.crop(*span)]) for span in spans[1:]]
        rows = [row.extend_cell_length(width, base).crop(0, width) for row in rows]
        self._cache[key] = rows
        return rows

    def visible_text(self) -> list[str]:
        """The rows on screen as plain text (what a reader sees; for tests and benchmarks)."""
        self._base_style = None
        self._render_width = self.scrollable_content_region.width
        return [
            "".join(segment.text for segment in self.render_line(y) if not segment.control).rstrip()
            for y in range(self.scrollable_content_region.height)
        ]

    # -- following -----------------------------------------------------------------------------------

    def _scroll_to_end(self) -> None:
        # At once, not after the next refresh: the frame that shows a new line shows it in view.
        self.scroll_to(y=self.max_scroll_y, animate=False)

    def watch_following(self, following: bool) -> None:
        if following:
            self._scroll_to_end()
        self._update_subtitle()

    def watch_running(self) -> None:
        self._update_subtitle()

    def _update_subtitle(self) -> None:
        state = "running" if self.running else "idle"
        self.border_subtitle = f"{state} · {'following' if self.following else 'paused (f follows)'}"
