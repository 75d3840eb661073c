"""The live log: a resumed run's steps, their output and its outcome, as they happen.

A RichLog renders every line it is given, so the panel never gets more than it can show: each
drain of a feed takes at most :attr:`LogPanel.BATCH_LINES` output lines (the newest; a marker
counts the rest, which the run log on disk keeps), drains happen at most every
:attr:`LogPanel.DRAIN_INTERVAL` seconds, a batch is written as one text, and the panel keeps at
most ``max_lines`` lines. A step printing 200,000 lines therefore costs the UI a few dozen small
writes, not 200,000.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import RichLog

from ..event_feed import EventFeed, FeedItem, OutputBlock, Skipped
from ..event_lines import EventStyles, event_text, output_text, skipped_text


class LogPanel(RichLog):
    """Streams run events into a scrolling log that follows the newest line by default.

    Events arrive through :meth:`new_feed` from a worker thread in batches (see
    :class:`~lobster_tui.tui.event_feed.EventFeed`), so a step printing thousands of lines a
    second costs one message per batch, not one per line.

    | Key | Action |
    | :- | :- |
    | `f` | Follow the newest line, or stop following. |
    | `G` / `end` | Jump to the newest line and follow. |
    | `g` / `home` | Jump to the first line. |
    """

    BINDINGS: list[BindingType] = [
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
    """Seconds between two drains of one feed, so a flood costs a few writes a second."""

    following: reactive[bool] = reactive(True)
    """Whether new lines scroll the log to the end."""

    running: reactive[int] = reactive(0)
    """How many runs are streaming into the panel now."""

    @dataclass
    class EventsReady(Message):
        """A feed has events waiting; drained by the panel on its own thread."""

        feed: EventFeed

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, wrap=True, markup=False, max_lines=5000, auto_scroll=True, min_width=20)
        self.border_title = "Run log"
        self._has_lines = False
        self.transcript: list[str] = []
        """Every line written, as plain text before wrapping (what a reader would copy)."""
        self._last_drain: dict[int, float] = {}
        self._drain_scheduled: set[int] = set()

    def on_mount(self) -> None:
        self._update_subtitle()
        self.write(Text("Decisions you take stream their run here.", style=self._styles().muted))

    def write_line(self, line: Text) -> None:
        """Write one line and keep it in the transcript."""
        self.write_lines([line])

    def write_lines(self, lines: list[Text]) -> None:
        """Write lines as one text (one render, not one per line) and keep them in the transcript."""
        if not lines:
            return
        self.transcript.extend(line.plain for line in lines)
        if self.max_lines and len(self.transcript) > self.max_lines:
            del self.transcript[: len(self.transcript) - self.max_lines]
        self.write(lines[0] if len(lines) == 1 else Text("\n").join(lines))

    def _styles(self) -> EventStyles:
        return EventStyles.from_theme(self.app.theme_variables)

    # -- feeding -------------------------------------------------------------------------------------

    def new_feed(self, title: str) -> EventFeed:
        """Start a section for one run and return the feed its worker pushes events into."""
        feed: EventFeed
        # The notify callback runs on the worker thread: post_message is thread-safe. The feed
        # holds no more than a few batches of output while the UI is busy.
        feed = EventFeed(lambda: self.post_message(self.EventsReady(feed)), keep_lines=4 * self.BATCH_LINES)
        self._begin(title)
        return feed

    def _begin(self, title: str) -> None:
        if not self._has_lines:
            self.clear()
        self._has_lines = True
        self.running += 1
        self.write_line(Text(f"── {title} ──", style=self._styles().heading))

    def on_log_panel_events_ready(self, message: LogPanel.EventsReady) -> None:
        message.stop()
        feed = message.feed
        # The feed does not notify again until drained, so at most one drain is scheduled.
        wait = self._last_drain.get(id(feed), 0.0) + self.DRAIN_INTERVAL - time.monotonic()
        if wait > 0:
            if id(feed) not in self._drain_scheduled:
                self._drain_scheduled.add(id(feed))
                self.set_timer(wait, lambda: self._drain(feed))
            return
        self._drain(feed)

    def _drain(self, feed: EventFeed) -> None:
        self._drain_scheduled.discard(id(feed))
        self._last_drain[id(feed)] = time.monotonic()
        items, _dropped = feed.drain(self.BATCH_LINES)
        self.write_items(items)

    def write_items(self, items: Iterable[FeedItem]) -> None:
        """Write a drained batch: events, blocks of output and markers for lines not shown."""
        styles = self._styles()
        width = self._text_width()
        lines: list[Text] = []
        for item in items:
            if isinstance(item, OutputBlock):
                stream = item.stream
                lines.extend(output_text(line, stream, styles) for line in item.lines())
            elif isinstance(item, Skipped):
                lines.append(skipped_text(item.count, item.run_id, styles))
            else:
                line = event_text(item, styles, width=width)
                if line is not None:
                    lines.append(line)
        self.write_lines(lines)

    def write_events(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Write events as lines (also used to replay a recorded run)."""
        styles = self._styles()
        width = self._text_width()
        self.write_lines([line for event in events if (line := event_text(event, styles, width=width)) is not None])

    def _text_width(self) -> int:
        return max(20, self.scrollable_content_region.width - 4) if self.is_mounted else 120

    def finish(self, feed: EventFeed | None, status: str, message: str) -> None:
        """End a run's section with its outcome, after writing whatever was still queued."""
        if feed is not None:
            self._drain(feed)
            self._last_drain.pop(id(feed), None)
        styles = self._styles()
        style = styles.ok if status == "ok" else styles.warning if status in ("cancelled", "needs_approval", "needs_input") else styles.error
        self.write_line(Text(f"⏹ {message}", style=style))
        self.running = max(0, self.running - 1)

    # -- following -----------------------------------------------------------------------------------

    def watch_following(self, following: bool) -> None:
        self.auto_scroll = following
        if following:
            self.scroll_end(animate=False)
        self._update_subtitle()

    def watch_running(self) -> None:
        self._update_subtitle()

    def _update_subtitle(self) -> None:
        state = "running" if self.running else "idle"
        self.border_subtitle = f"{state} · {'following' if self.following else 'paused (f follows)'}"

    def action_toggle_follow(self) -> None:
        """Follow the newest line, or stop so the reviewer can read back."""
        self.following = not self.following

    def action_follow_end(self) -> None:
        """Jump to the newest line and keep following."""
        self.following = True
        self.scroll_end(animate=False)
