"""The live log: a resumed run's steps, their output and its outcome, as they happen."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import RichLog

from ..event_feed import EventFeed
from ..event_lines import EventStyles, event_text


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

    def on_mount(self) -> None:
        self._update_subtitle()
        self.write(Text("Decisions you take stream their run here.", style=self._styles().muted))

    def write_line(self, line: Text) -> None:
        """Write one line and keep it in the transcript."""
        self.transcript.append(line.plain)
        if self.max_lines and len(self.transcript) > self.max_lines:
            del self.transcript[: len(self.transcript) - self.max_lines]
        self.write(line)

    def _styles(self) -> EventStyles:
        return EventStyles.from_theme(self.app.theme_variables)

    # -- feeding -------------------------------------------------------------------------------------

    def new_feed(self, title: str) -> EventFeed:
        """Start a section for one run and return the feed its worker pushes events into."""
        feed: EventFeed
        # The notify callback runs on the worker thread: post_message is thread-safe.
        feed = EventFeed(lambda: self.post_message(self.EventsReady(feed)))
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
        self._drain(message.feed)

    def _drain(self, feed: EventFeed) -> None:
        events, dropped = feed.drain()
        self.write_events(events)
        if dropped:
            self.write_line(Text(f"  … {dropped} output lines skipped (the log could not keep up)", style=self._styles().muted))

    def write_events(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Write events as lines (also used to replay a recorded run)."""
        styles = self._styles()
        width = max(20, self.scrollable_content_region.width - 4) if self.is_mounted else 120
        for event in events:
            line = event_text(event, styles, width=width)
            if line is not None:
                self.write_line(line)

    def finish(self, feed: EventFeed | None, status: str, message: str) -> None:
        """End a run's section with its outcome, after writing whatever was still queued."""
        if feed is not None:
            self._drain(feed)
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
