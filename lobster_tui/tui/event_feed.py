"""A thread-safe hand-over of run events from a worker thread to a widget.

The runner calls subscribers from its thread, possibly thousands of times a second. Posting one
message per event would flood Textual's queue, so events collect in a buffer and at most one
"events ready" notification is in flight at any time; the widget drains everything that has
arrived when it handles it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

EventDict = dict[str, Any]


class EventFeed:
    """Collects events from any thread; ``notify`` is called once per batch, not per event."""

    def __init__(self, notify: Callable[[], None], *, max_pending: int = 20000) -> None:
        self._notify = notify
        self._lock = threading.Lock()
        self._events: list[EventDict] = []
        self._notified = False
        self._dropped = 0
        # Past this many undrained events output lines are counted, not kept, so a runaway
        # step cannot grow memory while the UI is busy.
        self._max_pending = max_pending

    def push(self, event: EventDict) -> None:
        """Called by the runner (a subscriber); never blocks on the UI."""
        with self._lock:
            if len(self._events) >= self._max_pending and event.get("type") == "output":
                self._dropped += 1
            else:
                self._events.append(event)
            if self._notified:
                return
            self._notified = True
        self._notify()

    def drain(self) -> tuple[list[EventDict], int]:
        """Everything pushed since the last drain, and how many output lines were dropped."""
        with self._lock:
            events, self._events = self._events, []
            dropped, self._dropped = self._dropped, 0
            self._notified = False
        return events, dropped
