"""What a run view shows, built from a run's events: its timeline and a bounded tail of its log.

A :class:`RunStory` takes events (and blocks of output lines from an
:class:`~lobster_tui.tui.event_feed.EventFeed`) in the order a run log holds them, across every
checkpoint: ``run_started``, steps, ``checkpoint``, ``run_finished`` (waiting), then after a
decision ``resumed``, ``run_started`` (resumed) and the rest. It keeps

- the timeline: every step (status, duration, exit code, where its lines start in the log) and
  every checkpoint with the decision taken on it;
- the log: the last :attr:`RunStory.max_lines` lines (output and event lines), numbered from the
  start of the run, so a view can tell how many lines went by and which ones it already has.

No Textual here: the story is plain data mutated on the UI thread; widgets render from it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .event_feed import FeedItem, OutputBlock, Skipped

DEFAULT_MAX_LINES = 10000

# Kinds of log lines.
STDOUT = 0
STDERR = 1
EVENT = 2
NOTE = 3

LogLine = tuple[int, Any]
"""``(kind, payload)``: a ``str`` for output and notes, the event dict for ``EVENT``."""

# Events that get a line of their own in the log (the rest only feed the timeline).
SHOWN_EVENTS = frozenset({
    "run_started", "resumed", "step_started", "step_finished", "checkpoint", "run_finished",
    "output_truncated", "log_note", "run_interrupted",
})

# A story ends for good when its run finished, or when the log ends mid-run because its runner is
# gone ("interrupted", from the follower's run_interrupted event: nothing more will be written).
TERMINAL = frozenset({"ok", "failed", "cancelled", "interrupted"})
WAITING = frozenset({"needs_approval", "needs_input"})


@dataclass
class StepEntry:
    """One step of the run as the timeline shows it."""

    step_id: str
    kind: str | None
    command: str | None
    started: str | None
    status: str = "running"
    duration_ms: int | None = None
    exit_code: int | None = None
    error: str | None = None
    first_line: int = 0
    """Number (from the run's first line) of the step's first log line."""
    lines: int = 0
    """Output lines the step printed (as far as the story heard)."""


@dataclass
class CheckpointEntry:
    """A checkpoint the run reached, and the decision taken on it once resumed."""

    kind: str
    prompt: str
    state_key: str | None
    approval_id: str | None
    time: str | None
    line: int = 0
    decision: str | None = None
    approver: str | None = None
    decided_at: str | None = None


TimelineEntry = StepEntry | CheckpointEntry


@dataclass
class RunStory:
    """A run's timeline and the newest ``max_lines`` lines of its log."""

    run_id: str | None = None
    max_lines: int = DEFAULT_MAX_LINES
    name: str | None = None
    source: str | None = None
    target: str | None = None
    args: Any = None
    status: str = "starting"
    """``starting`` (no event yet), ``running``, ``needs_approval``/``needs_input``, ``ok``,
    ``failed``, ``cancelled``, or ``interrupted`` (its runner is gone and the log ends mid-run)."""
    started: str | None = None
    finished: str | None = None
    error: str | None = None
    interruption: str | None = None
    """Once ``interrupted``: what happened to the runner, in the Runs list's words."""
    segments_finished: int = 0
    """How many ``run_finished`` events went by (one per segment between checkpoints)."""
    timeline: list[TimelineEntry] = field(default_factory=list)
    lines: deque[LogLine] = field(init=False)
    first_number: int = 0
    """Number of ``lines[0]``: lines before it scrolled out of the story."""
    next_number: int = 0
    """Number the next line gets: how many lines the story has heard of."""
    skipped_lines: int = 0
    """Output lines that never reached the story (dropped by a feed, or not kept by the run log)."""
    version: int = 0
    """Bumped on every change, so views know when to repaint."""

    def __post_init__(self) -> None:
        self.lines = deque(maxlen=max(1, self.max_lines))

    # -- reading ---------------------------------------------------------------------------------

    @property
    def steps(self) -> list[StepEntry]:
        """The steps in the order they started."""
        return [entry for entry in self.timeline if isinstance(entry, StepEntry)]

    @property
    def checkpoints(self) -> list[CheckpointEntry]:
        """The checkpoints in the order they were reached."""
        return [entry for entry in self.timeline if isinstance(entry, CheckpointEntry)]

    @property
    def current_step(self) -> StepEntry | None:
        """The step running now (the newest unfinished one)."""
        return next((step for step in reversed(self.steps) if step.status == "running"), None)

    @property
    def is_live(self) -> bool:
        """True until the run ends for good (a run waiting at a checkpoint may go on)."""
        return self.status not in TERMINAL

    def duration_ms(self, now: datetime | None = None) -> int | None:
        """From the first event to the last ``run_finished`` (to ``now`` while running)."""
        end = self.finished if self.status in TERMINAL or self.status in WAITING else None
        return elapsed_ms(self.started, end, now)

    def line(self, number: int) -> LogLine | None:
        """The line with this number, if the story still has it."""
        index = number - self.first_number
        if 0 <= index < len(self.lines):
            return self.lines[index]
        return None

    # -- taking events ---------------------------------------------------------------------------

    def take(self, items: Iterable[FeedItem | Mapping[str, Any]]) -> None:
        """Take drained feed items (events, output blocks, markers) or plain events."""
        for item in items:
            if isinstance(item, OutputBlock):
                self.take_output(item.stream, item.lines(), item.event.get("stepId"))
            elif isinstance(item, Skipped):
                self.skipped_lines += item.count
                self._add(NOTE, f"… {item.count:,} lines not shown — lobster logs {item.run_id or self.run_id or ''}".rstrip())
                self._count_step_lines(item.step_id, item.count)
            else:
                self.take_event(item)
        self.version += 1

    def take_output(self, stream: str, lines: list[str], step_id: Any = None) -> None:
        """Append output lines of one stream."""
        kind = STDERR if stream == "stderr" else STDOUT
        count = len(lines)
        self.next_number += count
        if count > self.max_lines:
            lines = lines[-self.max_lines :]
        self.lines.extend([(kind, line) for line in lines])
        # The deque holds the newest lines, numbered up to next_number - 1.
        self.first_number = self.next_number - len(self.lines)
        self._count_step_lines(step_id, count)
        self.version += 1

    def _count_step_lines(self, step_id: Any, count: int) -> None:
        step = self._open_step(step_id) if isinstance(step_id, str) else None
        if step is not None:
            step.lines += count

    def _add(self, kind: int, payload: Any) -> None:
        self.lines.append((kind, payload))
        self.next_number += 1
        self.first_number = self.next_number - len(self.lines)

    def take_event(self, event: Mapping[str, Any]) -> None:
        """Apply one event to the timeline and the log."""
        kind = event.get("type")
        if kind == "output":
            line = event.get("line")
            self.take_output(str(event.get("stream") or "stdout"), [line if isinstance(line, str) else str(line)],
                             event.get("stepId"))
            return
        if self.run_id is None and isinstance(event.get("runId"), str):
            self.run_id = event["runId"]
        if kind == "run_started":
            if self.started is None:
                self.started = _text(event.get("time"))
            self.name = self.name or _text(event.get("name"))
            self.source = self.source or _text(event.get("source"))
            self.target = self.target or _text(event.get("target"))
            if self.args is None:
                self.args = event.get("args")
            self.status = "running"
        elif kind == "step_started":
            self.timeline.append(StepEntry(
                step_id=str(event.get("stepId")),
                kind=_text(event.get("kind")),
                command=_text(event.get("command")),
                started=_text(event.get("time")),
                first_line=self.next_number,
            ))
        elif kind == "step_finished":
            step = self._open_step(event.get("stepId"))
            if step is None:  # the log missed its start (a cut log): show it anyway
                step = StepEntry(str(event.get("stepId")), None, None, None, first_line=self.next_number)
                self.timeline.append(step)
            step.status = str(event.get("status") or "ok")
            duration = event.get("durationMs")
            step.duration_ms = duration if isinstance(duration, int) else None
            code = event.get("exitCode")
            step.exit_code = code if isinstance(code, int) and not isinstance(code, bool) else None
            step.error = _text(event.get("error"))
        elif kind == "checkpoint":
            self.timeline.append(CheckpointEntry(
                kind=str(event.get("kind") or "approval"),
                prompt=str(event.get("prompt") or ""),
                state_key=_text(event.get("stateKey")),
                approval_id=_text(event.get("approvalId")),
                time=_text(event.get("time")),
                line=self.next_number,
            ))
            self.status = "needs_input" if event.get("kind") == "input" else "needs_approval"
        elif kind == "resumed":
            key = event.get("stateKey")
            checkpoint = next((c for c in reversed(self.checkpoints) if c.state_key == key and c.decision is None), None)
            if checkpoint is None:
                checkpoint = CheckpointEntry("approval", "", _text(key), None, None, line=self.next_number)
                self.timeline.append(checkpoint)
            checkpoint.decision = _text(event.get("decision"))
            checkpoint.approver = _text(event.get("approver"))
            checkpoint.decided_at = _text(event.get("time"))
            self.status = "running"
        elif kind == "output_truncated":
            dropped = event.get("droppedLines")
            if isinstance(dropped, int):
                self.skipped_lines += dropped
                self._count_step_lines(event.get("stepId"), dropped)
        elif kind == "run_finished":
            self.segments_finished += 1
            self.status = str(event.get("status") or "failed")
            self.finished = _text(event.get("time"))
            self.error = _text(event.get("error"))
            if self.status in TERMINAL:
                # A step still "running" never finished: the run ended under it.
                for step in self.steps:
                    if step.status == "running":
                        step.status = "failed" if self.status != "ok" else "ok"
        elif kind == "run_interrupted":
            from lobster_tui.core.run_log import runner_gone_text

            self.status = "interrupted"
            self.finished = _text(event.get("time"))
            self.interruption = runner_gone_text(event)
            # Its steps stopped where the runner died; none of them goes on running.
            for step in self.steps:
                if step.status == "running":
                    step.status = "interrupted"
        if kind in SHOWN_EVENTS:
            self._add(EVENT, dict(event))
        self.version += 1

    def _open_step(self, step_id: Any) -> StepEntry | None:
        for entry in reversed(self.timeline):
            if isinstance(entry, StepEntry) and entry.step_id == step_id and entry.status == "running":
                return entry
        return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def parse_time(stamp: str | None) -> datetime | None:
    """An event's ISO time as an aware datetime, or None."""
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def elapsed_ms(start: str | None, end: str | None, now: datetime | None) -> int | None:
    """Milliseconds from ``start`` to ``end`` (or ``now`` when there is no end yet)."""
    begun = parse_time(start)
    if begun is None:
        return None
    finished = parse_time(end) if end else now
    if finished is None:
        return None
    return max(0, round((finished - begun).total_seconds() * 1000))


def span(ms: int | None) -> str:
    """A duration as ``850ms``, ``12.3s``, ``4m05s``, ``2h03m`` (as ``lobster runs`` shows it); empty when unknown."""
    if ms is None:
        return ""
    from lobster_tui.core.run_log import format_duration

    return format_duration(int(ms))
