"""Run events: how a run is watched while it runs (issue: run events).

The runner emits plain dicts (cheap on the CLI's hot path); :mod:`lobster_tui.core.event_models`
gives the typed pydantic view that readers such as the TUI validate them into. Every event has
``type``, ``runId``, ``seq`` (per process, increasing) and ``time`` (ISO-8601 UTC).

Types and their fields:

- ``run_started``: ``name``, ``source`` (``workflow`` or ``pipeline``), ``target`` (file path or
  pipeline text), ``args``, ``cwd``, ``resumed`` (bool), ``pid`` and ``host`` (the process running
  this segment and its host name, so a reader can tell a live run from one whose process died;
  see :func:`runner_process`)
- ``step_started``: ``stepId``, ``kind``, ``command`` (after substitution, may be null)
- ``output``: ``stepId``, ``stream`` (``stdout``/``stderr``), ``line`` (subscribers with an
  ``output_block`` method receive runs of output lines at once, see :meth:`RunEvents.emit_output`)
- ``step_finished``: ``stepId``, ``status`` (``ok``/``failed``/``skipped``/``timed_out``),
  ``exitCode`` (int or null), ``durationMs``, ``error`` (str or null)
- ``checkpoint``: ``kind`` (``approval``/``input``), ``stateKey``, ``approvalId``, ``prompt``
- ``resumed``: ``stateKey``, ``decision`` (``approve``/``reject``/``answer``/``cancel``),
  ``approver``
- ``output_truncated``: ``stepId``, ``droppedLines``
- ``run_finished``: ``status`` (``ok``/``needs_approval``/``needs_input``/``cancelled``/
  ``failed``), ``durationMs``, ``error``. ``cancelled`` is a rejected or cancelled checkpoint, or
  a run someone stopped (the TUI's ``s``, a signal to the CLI; ``error`` says which) while its
  envelope is the spec's ``runtime_error``; ``failed`` is any other error, timeouts included
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from .state import now_iso, random_hex

EventDict = dict[str, Any]
Subscriber = Callable[[EventDict], None]


def runner_process() -> dict[str, Any]:
    """``pid`` and ``host`` for a ``run_started`` event: who runs this segment.

    Our own fields in our own logs (the official runtime writes no run logs). The host matters
    because a state directory can be shared between machines, where a pid means nothing.
    """
    uname = getattr(os, "uname", None)
    return {"pid": os.getpid(), "host": uname().nodename if uname is not None else None}


def new_run_id() -> str:
    """A short, sortable-enough, unique run id."""
    return random_hex(6)


class RunEvents:
    """The event stream of one run: numbers events and hands them to each subscriber in order."""

    def __init__(self, run_id: str | None = None, subscribers: list[Subscriber] | None = None) -> None:
        self.run_id = run_id or new_run_id()
        self._subscribers: list[Subscriber] = list(subscribers or [])
        self._next_seq = 1
        # Output lines arrive from reader threads of parallel branches; keep events whole.
        self._lock = threading.Lock()

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    @property
    def active(self) -> bool:
        """False when nobody listens, so callers can skip building events."""
        return bool(self._subscribers)

    def emit(self, event_type: str, **fields: Any) -> None:
        if not self._subscribers:
            return
        with self._lock:
            event: EventDict = {
                "type": event_type,
                "runId": self.run_id,
                "seq": self._next_seq,
                "time": now_iso(),
                **fields,
            }
            self._next_seq += 1
            for subscriber in self._subscribers:
                subscriber(event)

    def emit_output(self, step_id: str, stream: str, block: str) -> None:
        """Emit one ``output`` event per line of ``block`` (lines joined by ``"\\n"``).

        A step can print hundreds of thousands of lines, so lines travel as blocks (one per pipe
        read): a subscriber with an ``output_block(event, block, count)`` method takes the whole
        block at once; any other subscriber gets the usual one event per line. Each line keeps its
        own ``seq``; all lines of a block share one ``time``.
        """
        if not self._subscribers:
            return
        count = block.count("\n") + 1
        with self._lock:
            first = self._next_seq
            self._next_seq += count
            event: EventDict = {
                "type": "output",
                "runId": self.run_id,
                "seq": first,
                "time": now_iso(),
                "stepId": step_id,
                "stream": stream,
            }
            for subscriber in self._subscribers:
                take_block = getattr(subscriber, "output_block", None)
                if take_block is not None:
                    take_block(event, block, count)
                    continue
                for offset, line in enumerate(block.split("\n")):
                    subscriber({**event, "seq": first + offset, "line": line})

    def output_sink(self, step_id: str) -> Callable[[str, str], None] | None:
        """A ``(stream, block)`` sink for :func:`~lobster_tui.core.process.run_process` output."""
        if not self._subscribers:
            return None

        def sink(stream: str, block: str) -> None:
            self.emit_output(step_id, stream, block)

        return sink


NO_EVENTS = RunEvents("none")
