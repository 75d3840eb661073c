"""Runs this app starts or resumes: started in thread workers, watched, and stopped on request.

:class:`LiveRuns` belongs to the app (``app.live_runs``). It

- starts a workflow file through the core runner in a thread worker (:meth:`LiveRuns.start`), with
  the app's run-log writer and a bounded :class:`~lobster_tui.tui.event_feed.EventFeed` as
  subscribers; a timer drains the feeds into each run's :class:`~lobster_tui.tui.run_story.RunStory`
  a few times a second (never once per line), so a view can show the run from its first line;
- knows, for every run going on in this process (started here, or resumed by a decision in the
  inbox), the ``RunContext`` running it, through a tiny subscriber (:meth:`LiveRuns.tracker`), so
  ``s`` can abort it: the runner then ends the step's process tree and the log says why.

A run started by another process has no context here; it can be watched (through its log), and
when that process is a ``lobster run``/``lobster resume`` of this user on this machine, stopped
with SIGTERM (:meth:`LiveRuns.request_stop_elsewhere`, checked by
:func:`lobster_tui.core.runner_signal.stop_other_runner`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from .event_feed import EventFeed
from .run_story import DEFAULT_MAX_LINES, RunStory

if TYPE_CHECKING:
    from textual.timer import Timer

    from .app import LobsterApp

STOP_REASON = "stopped from lobster-tui"


class LiveRun:
    """One workflow run started from this app."""

    def __init__(self, path: str, args: Any, *, keep_lines: int = DEFAULT_MAX_LINES) -> None:
        self.path = path
        self.args = args
        self.story = RunStory(max_lines=keep_lines)
        self.feed = EventFeed(keep_lines=keep_lines)
        self.context: Any = None
        self.done = False
        """The runner returned (set by the worker thread)."""
        self.drained = False
        """Everything the run emitted is in the story (set on the UI thread after ``done``)."""
        self.outcome: Any = None
        self.problem: str | None = None
        self.started_at = time.monotonic()

    @property
    def run_id(self) -> str | None:
        """The run's id, once its first event arrived."""
        return self.story.run_id

    @property
    def failure(self) -> str | None:
        """Why the run never started or ended in an error, in words (None when it did not)."""
        if self.problem:
            return self.problem
        outcome = self.outcome
        if outcome is not None and getattr(outcome, "status", None) == "error":
            return str(getattr(outcome, "error_message", "") or "the run failed")
        return None


class RunTracker:
    """A run subscriber that tells :class:`LiveRuns` which context runs which run id."""

    def __init__(self, registry: LiveRuns, context: Any) -> None:
        self._registry = registry
        self._context = context
        self._run_id: str | None = None

    def __call__(self, event: dict[str, Any]) -> None:
        if self._run_id is None and isinstance(event.get("runId"), str):
            self._run_id = event["runId"]
            self._registry._remember(self._run_id, self._context)
        if event.get("type") == "run_finished" and self._run_id is not None:
            self._registry._forget(self._run_id, self._context)

    def output_block(self, event: dict[str, Any], block: str, count: int) -> None:
        """Output says nothing about who runs what (having this keeps the runner from splitting lines for us)."""


class LiveRuns:
    """The runs going on in this process, and the workflows started from the app."""

    DRAIN_INTERVAL = 0.05
    """Seconds between two drains of the running runs' feeds."""

    KEEP_FINISHED = 20
    """Finished runs whose stories stay in memory (older ones are read back from their logs)."""

    def __init__(self, app: LobsterApp, *, keep_lines: int = DEFAULT_MAX_LINES) -> None:
        self.app = app
        self.keep_lines = keep_lines
        self.started: list[LiveRun] = []
        self._contexts: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._timer: Timer | None = None

    # -- tracking ----------------------------------------------------------------------------------

    def tracker(self, context: Any) -> RunTracker:
        """A subscriber to add to ``context``: maps the run's id to it while it runs."""
        return RunTracker(self, context)

    def _remember(self, run_id: str, context: Any) -> None:
        with self._lock:
            self._contexts[run_id] = context

    def _forget(self, run_id: str, context: Any) -> None:
        with self._lock:
            if self._contexts.get(run_id) is context:
                del self._contexts[run_id]

    def context_for(self, run_id: str | None) -> Any:
        """The context running ``run_id`` in this process now, or None."""
        if run_id is None:
            return None
        with self._lock:
            return self._contexts.get(run_id)

    def find(self, run_id: str | None) -> LiveRun | None:
        """The run started here with this id (None once forgotten, or never started here)."""
        if run_id is None:
            return None
        return next((live for live in reversed(self.started) if live.run_id == run_id), None)

    def can_stop(self, run_id: str | None, live: LiveRun | None = None) -> bool:
        """True when this process runs it (so ``s`` can abort it)."""
        if live is not None and not live.done:
            return True
        return self.context_for(run_id) is not None

    # -- starting ----------------------------------------------------------------------------------

    def start(self, path: str, args: Any = None) -> LiveRun:
        """Run a workflow file in a thread worker; its story fills in as it goes."""
        live = LiveRun(path, args, keep_lines=self.keep_lines)
        live.context = self.app._run_context(live.feed)
        self.started.append(live)
        finished = [run for run in self.started if run.drained]
        for old in finished[: max(0, len(finished) - self.KEEP_FINISHED)]:
            self.started.remove(old)
        self.app.run_worker(
            partial(self._run, live),
            name=f"run {path}",
            group="runs",
            thread=True,
            exit_on_error=False,
        )
        self._ensure_timer()
        return live

    def _run(self, live: LiveRun) -> None:
        """Worker thread: the runner, start to finish (or to its first checkpoint)."""
        from lobster_tui.core.runner import run_workflow

        try:
            live.outcome = run_workflow(live.path, live.context, args=live.args)
        except Exception as error:  # the runner should not raise; if it does, say so, don't crash
            live.problem = f"{type(error).__name__}: {error}"
        finally:
            live.done = True

    def _ensure_timer(self) -> None:
        if self._timer is None:
            self._timer = self.app.set_interval(self.DRAIN_INTERVAL, self._tick, name="live runs")
        else:
            self._timer.resume()

    def _tick(self) -> None:
        """Move what the running runs emitted into their stories (UI thread)."""
        active = False
        for live in self.started:
            if live.drained:
                continue
            done = live.done  # read first: a run that was done before the drain has emitted everything
            items, _dropped = live.feed.drain()
            if items:
                live.story.take(items)
            if done:
                live.drained = True
                live.story.version += 1
            else:
                active = True
        if not active and self._timer is not None:
            self._timer.pause()

    def drain_now(self) -> None:
        """Drain at once (tests and the moment a view opens)."""
        self._tick()

    # -- stopping ----------------------------------------------------------------------------------

    def stop(self, run_id: str | None, live: LiveRun | None = None, reason: str = STOP_REASON) -> bool:
        """Abort the run; False when this process does not run it."""
        context = live.context if live is not None and not live.done else self.context_for(run_id)
        signal = getattr(context, "signal", None)
        if signal is None:
            return False
        signal.abort(reason, stop=True)  # the run log says cancelled, not failed
        return True

    def request_stop(
        self, run_id: str | None, live: LiveRun | None = None, *, name: str = "", after: Callable[[bool], None] | None = None
    ) -> None:
        """Ask in a modal whether to stop the run, then abort it."""
        from .screens.confirm import ConfirmScreen

        if not self.can_stop(run_id, live):
            if run_id:
                self.app.notify(
                    "This run is not running in this lobster-tui (another process runs it, or it ended). "
                    "Stop it where it runs.",
                    title="Cannot stop",
                    severity="warning",
                )
            return
        label = name or run_id or "this run"
        lines = [
            (f"{label} ({run_id or 'starting'}) will be aborted: its running step's processes are terminated "
             "and the run ends as cancelled, with the log saying it was stopped."),
        ]

        def confirmed(answer: bool | None) -> None:
            stopped = bool(answer) and self.stop(run_id, live)
            if stopped:
                self.app.notify(f"Stopping {label}…", title="Stop")
            if after is not None:
                after(stopped)

        self.app.push_screen(ConfirmScreen("Stop this run?", lines, "Yes, stop", "cancel"), confirmed)

    def request_stop_elsewhere(
        self, run_id: str, pid: int, *, name: str = "", after: Callable[[bool], None] | None = None
    ) -> None:
        """Ask in a modal, then send SIGTERM to the ``lobster`` CLI process running the run."""
        from lobster_tui.core.runner_signal import stop_other_runner

        from .screens.confirm import ConfirmScreen

        label = name or run_id
        lines = [
            (f"{label} ({run_id}) runs in another process (pid {pid}). It is sent SIGTERM, as if stopped "
             "in its terminal: its running step's processes are terminated and the run ends as cancelled."),
            "Only a `lobster run` or `lobster resume` of yours on this machine is signalled.",
        ]

        def confirmed(answer: bool | None) -> None:
            problem = None
            if answer:
                # A few small /proc reads and the log's tail: quick enough for the UI thread, and
                # the check must come right before the signal.
                problem = stop_other_runner(self.app.state, run_id)
                if problem is None:
                    self.app.notify(f"Stopping {label} (pid {pid})…", title="Stop")
                else:
                    self.app.notify(f"Not stopped: {problem}.", title="Cannot stop", severity="warning")
            if after is not None:
                after(bool(answer) and problem is None)

        self.app.push_screen(ConfirmScreen("Stop this run?", lines, "Yes, stop", "cancel"), confirmed)

    def abort_all(self, reason: str) -> None:
        """Abort every run going on in this process (the app is closing)."""
        with self._lock:
            contexts = list(self._contexts.values())
        contexts += [live.context for live in self.started if not live.done and live.context is not None]
        for context in contexts:
            signal = getattr(context, "signal", None)
            if signal is not None:
                signal.abort(reason, stop=True)
