"""A thread-safe, bounded hand-over of run events from a worker thread to the UI.

The runner calls subscribers from its thread, possibly hundreds of thousands of times a second.
Posting one message per event would flood Textual's queue, so events collect in a buffer and at
most one "events ready" notification is in flight at any time; the UI drains everything that has
arrived when it handles it (or on its own timer).

Output is what can be huge, so it is kept compactly and bounded:

- The runner hands output as blocks (``output_block(event, block, count)``, see
  :meth:`lobster_tui.core.events.RunEvents.emit_output`); consecutive blocks of one step and
  stream are merged into one :class:`OutputBlock` without splitting them into lines.
- At most ``keep_lines`` output lines wait in the feed. Older ones are dropped and remembered as a
  :class:`Skipped` marker at the place they were, so a reader sees "… 93,000 lines not shown"
  exactly where they would have been, and memory stays bounded however slow the UI is.

Every other event (steps, checkpoints, the outcome) is always kept.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

EventDict = dict[str, Any]

DEFAULT_KEEP_LINES = 20000


@dataclass
class OutputBlock:
    """Consecutive output lines of one step and stream, kept as the blocks they arrived in."""

    event: EventDict
    """The first line's event, without ``line`` (``runId``, ``stepId``, ``stream``, ``seq``...)."""
    pieces: list[str] = field(default_factory=list)
    """Blocks of lines joined by ``"\\n"``, in order."""
    count: int = 0
    """How many lines the pieces hold."""
    piece_lines: list[int] = field(default_factory=list)
    """How many lines each piece holds, when known (the runner says so with each block)."""

    @property
    def stream(self) -> str:
        """``stdout`` or ``stderr``."""
        return str(self.event.get("stream") or "stdout")

    def lines(self) -> list[str]:
        """Every line (splits the pieces now)."""
        if len(self.pieces) == 1:
            return self.pieces[0].split("\n")
        return "\n".join(self.pieces).split("\n")

    def keep_last(self, keep: int) -> int:
        """Keep only the last ``keep`` lines; returns how many were dropped."""
        dropped = self.count - keep
        if dropped <= 0:
            return 0
        kept: list[str] = []
        kept_lines: list[int] = []
        need = keep
        # Line counts of pieces as the runner gave them, so a trim reads only the lines it keeps
        # (this runs on the runner's thread, once per block while the UI lags).
        counts = self.piece_lines if len(self.piece_lines) == len(self.pieces) else None
        # Whole pieces from the end while they fit, then the tail of one piece (no full split).
        for index in range(len(self.pieces) - 1, -1, -1):
            if need <= 0:
                break
            piece = self.pieces[index]
            lines_in_piece = counts[index] if counts is not None else piece.count("\n") + 1
            if lines_in_piece <= need:
                kept.append(piece)
                kept_lines.append(lines_in_piece)
                need -= lines_in_piece
            else:
                kept.append("\n".join(piece.rsplit("\n", need)[1:]))
                kept_lines.append(need)
                need = 0
        kept.reverse()
        kept_lines.reverse()
        self.pieces = kept
        self.piece_lines = kept_lines
        self.count = keep
        return dropped


@dataclass
class Skipped:
    """Output lines dropped in the feed (the UI could not show them all); a marker in their place."""

    count: int
    run_id: str | None = None
    step_id: str | None = None


FeedItem = EventDict | OutputBlock | Skipped


class EventFeed:
    """Collects run events from any thread; ``notify`` is called once per batch, not per event.

    Subscribe the feed itself (not ``feed.push``) to a :class:`~lobster_tui.core.runner.RunContext`:
    it is callable and has ``output_block``, so the runner hands it whole blocks of output.
    """

    def __init__(
        self,
        notify: Callable[[], None] | None = None,
        *,
        keep_lines: int = DEFAULT_KEEP_LINES,
    ) -> None:
        self._notify = notify
        self._lock = threading.Lock()
        self._items: list[FeedItem] = []
        self._notified = False
        self._pending_lines = 0
        self.keep_lines = max(1, keep_lines)
        self.total_lines = 0
        """Output lines received so far (kept or not)."""
        self.total_dropped = 0
        """Output lines dropped in the feed so far."""

    # -- producer side (any thread) -------------------------------------------------------------

    def push(self, event: EventDict) -> None:
        """Take one event (a subscriber call); never blocks on the UI."""
        if event.get("type") == "output":
            line = event.get("line")
            head = {key: value for key, value in event.items() if key != "line"}
            self.output_block(head, line if isinstance(line, str) else str(line), 1)
            return
        with self._lock:
            self._items.append(event)
        self._wake()

    __call__ = push

    def output_block(self, event: EventDict, block: str, count: int) -> None:
        """Take ``count`` output lines joined by ``"\\n"`` (the runner's block hand-over)."""
        with self._lock:
            self.total_lines += count
            self._pending_lines += count
            last = self._items[-1] if self._items else None
            if (
                isinstance(last, OutputBlock)
                and last.event.get("stepId") == event.get("stepId")
                and last.event.get("stream") == event.get("stream")
                and last.event.get("runId") == event.get("runId")
            ):
                last.pieces.append(block)
                last.piece_lines.append(count)
                last.count += count
            else:
                self._items.append(OutputBlock(event, [block], count, [count]))
            # Trim at twice the bound, down to the bound: amortised O(1) per line.
            if self._pending_lines > 2 * self.keep_lines:
                self._trim(self.keep_lines)
        self._wake()

    def _wake(self) -> None:
        with self._lock:
            if self._notified or self._notify is None:
                return
            self._notified = True
        self._notify()

    # -- consumer side (the UI thread) ------------------------------------------------------------

    @property
    def pending_lines(self) -> int:
        """Output lines waiting to be drained."""
        return self._pending_lines

    def drain(self, keep_lines: int | None = None) -> tuple[list[FeedItem], int]:
        """Everything since the last drain, with at most ``keep_lines`` output lines (the newest).

        Returns the items and how many output lines were dropped from them (each drop is also a
        :class:`Skipped` item where the lines were).
        """
        with self._lock:
            limit = self.keep_lines if keep_lines is None else max(0, keep_lines)
            if self._pending_lines > limit:
                self._trim(limit)
            items, self._items = self._items, []
            self._pending_lines = 0
            self._notified = False
        dropped = sum(item.count for item in items if isinstance(item, Skipped))
        return items, dropped

    def _trim(self, limit: int) -> None:
        """Drop the oldest output lines until ``limit`` remain (caller holds the lock)."""
        excess = self._pending_lines - limit
        if excess <= 0:
            return
        kept: list[FeedItem] = []
        for item in self._items:
            if excess > 0 and isinstance(item, OutputBlock):
                if item.count <= excess:
                    excess -= item.count
                    self._add_skipped(kept, item, item.count)
                    continue
                self._add_skipped(kept, item, item.keep_last(item.count - excess))
                excess = 0
            kept.append(item)
        self._items = kept
        self.total_dropped += self._pending_lines - limit
        self._pending_lines = limit

    @staticmethod
    def _add_skipped(items: list[FeedItem], block: OutputBlock, count: int) -> None:
        run_id = block.event.get("runId")
        step_id = block.event.get("stepId")
        last = items[-1] if items else None
        if isinstance(last, Skipped) and last.run_id == run_id and last.step_id == step_id:
            last.count += count
        else:
            items.append(Skipped(count, run_id if isinstance(run_id, str) else None,
                                 step_id if isinstance(step_id, str) else None))


def output_events(block: OutputBlock) -> Iterator[EventDict]:
    """The block as one ``output`` event per line (for code that wants plain events)."""
    for line in block.lines():
        yield {**block.event, "type": "output", "line": line}
