"""Cancellation signals shared by the runner, commands and child processes (R-PIPE-7, §10.1)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from .errors import AbortError

DEFAULT_ABORT_REASON = "This operation was aborted"


class CancelSignal:
    """A one-shot abort flag with a reason, like JavaScript's ``AbortSignal``.

    ``timeout`` marks aborts caused by a step or parallel timeout: their processes are killed with
    SIGKILL at once instead of SIGTERM-then-SIGKILL (R-PROC-5). ``stopped`` marks aborts someone
    asked for (``s`` in the TUI, a signal to the CLI): the envelope is the same ``runtime_error``
    (R-PROC-6), but the run log records the run as ``cancelled`` rather than ``failed``. A child
    signal follows its parent.
    """

    def __init__(self, parent: CancelSignal | None = None) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self.reason: str | None = None
        self.timeout = False
        self.stopped = False
        self._callbacks: list[Callable[[], None]] = []
        if parent is not None:
            parent.on_abort(lambda: self.abort(parent.reason, timeout=parent.timeout, stop=parent.stopped))

    @property
    def aborted(self) -> bool:
        return self._event.is_set()

    def abort(self, reason: str | None = None, *, timeout: bool = False, stop: bool = False) -> None:
        """Abort once; ``stop`` says someone asked for it (see the class docstring)."""
        with self._lock:
            if self._event.is_set():
                return
            self.reason = reason or DEFAULT_ABORT_REASON
            self.timeout = timeout
            self.stopped = stop
            self._event.set()
            callbacks = list(self._callbacks)
        for callback in callbacks:
            callback()

    def on_abort(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once when aborted (immediately if already aborted)."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return
        callback()

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True if aborted meanwhile (abortable sleeps, R-WF-101)."""
        return self._event.wait(seconds)

    def raise_if_aborted(self) -> None:
        if self._event.is_set():
            raise AbortError(self.reason or DEFAULT_ABORT_REASON)
