"""Per-run event logs: every run leaves ``<state dir>/runs/<runId>.jsonl`` that can be tailed live.

The writer (:func:`log_subscriber_for`) is a run-event subscriber that appends each event as one
compact JSON line, written with a single ``write`` on an ``O_APPEND`` descriptor so another process
tailing the file sees whole events as soon as they happen. A resumed run keeps its run id, so its
events land in the same file after the checkpoint. The official runtime ignores the ``runs/``
folder; it is created 0700 and logs 0600, since output can be sensitive. Events carry no
environment values and the writer adds none.

Bounds, per run segment (a resume starts a fresh budget):

- the first ``LOBSTER_LOG_HEAD_LINES`` output lines (default 5,000) are written as they arrive;
- past that, each step's lines go to an in-memory ring of ``LOBSTER_LOG_TAIL_LINES`` (default
  1,000); when the step finishes (or the run halts or ends) its ring is written, preceded by one
  ``output_truncated`` event with ``droppedLines`` when lines fell out of it. That event takes the
  ``seq`` and ``time`` of the first dropped line, so ``seq`` stays unique and increasing in a file;
- an output line longer than 4 KiB (UTF-8) is cut there and ends with a ``[lobster: line truncated
  ...]`` marker.

Retention: when a new log is created, logs beyond the newest ``LOBSTER_LOG_KEEP_RUNS`` (default
200, ``0`` turns logging off) are deleted, except the log of a run waiting at a checkpoint (its last
event is a ``checkpoint`` or a ``run_finished`` with ``needs_approval``/``needs_input``) and the log
of a run that looks alive (not finished, written within the last day).

Readers: :func:`read_events`, :func:`follow_events` and :func:`list_runs`; a line that cannot be
parsed becomes a ``log_note`` event (see :class:`lobster_tui.core.event_models.LogNote`) instead of
an exception. ``lobster runs`` and ``lobster logs`` are :func:`runs_command` and
:func:`logs_command`.

This module must stay cheap to import: ``lobster run`` loads it to log, so no pydantic here.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from .events import EventDict, Subscriber
from .state import StateStore

DEFAULT_HEAD_LINES = 5000
DEFAULT_TAIL_LINES = 1000
DEFAULT_KEEP_RUNS = 200
LINE_CAP_BYTES = 4096

RUNS_DIRNAME = "runs"
LOG_SUFFIX = ".jsonl"

TERMINAL_STATUSES = frozenset({"ok", "failed", "cancelled"})
WAITING_STATUSES = frozenset({"needs_approval", "needs_input"})

# Run ids become file names: no separators, no dots, nothing that could climb out of runs/.
_RUN_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
# A log untouched for this long without a run_finished belongs to a process that died.
_LIVE_GRACE_SECONDS = 24 * 3600
# list_runs reads this much of each end of a file, growing it only for a longer line.
_PEEK_BYTES = 8192
_FOLLOW_READ_BYTES = 65536

# One encoder for every event; ``default=str`` so an odd value in a runner dict can never make
# logging raise inside a run.
_ENCODER = json.JSONEncoder(separators=(",", ":"), default=str)


# -- configuration -------------------------------------------------------------------------------


@dataclass(frozen=True)
class LogLimits:
    """Head/tail output caps and how many run logs to keep."""

    head_lines: int = DEFAULT_HEAD_LINES
    tail_lines: int = DEFAULT_TAIL_LINES
    keep_runs: int = DEFAULT_KEEP_RUNS

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LogLimits:
        """Read ``LOBSTER_LOG_HEAD_LINES``/``_TAIL_LINES``/``_KEEP_RUNS``; bad values mean default."""
        source = os.environ if env is None else env
        return cls(
            head_lines=_env_count(source, "LOBSTER_LOG_HEAD_LINES", DEFAULT_HEAD_LINES),
            tail_lines=_env_count(source, "LOBSTER_LOG_TAIL_LINES", DEFAULT_TAIL_LINES),
            keep_runs=_env_count(source, "LOBSTER_LOG_KEEP_RUNS", DEFAULT_KEEP_RUNS),
        )


def _env_count(env: Mapping[str, str], name: str, default: int) -> int:
    text = (env.get(name) or "").strip()
    return int(text) if text.isdigit() else default


# -- paths -----------------------------------------------------------------------------------------


def runs_dir(state: StateStore) -> Path:
    """The folder of run logs inside the state directory."""
    return state.root / RUNS_DIRNAME


def is_valid_run_id(run_id: object) -> bool:
    """True when ``run_id`` can safely name a log file."""
    return isinstance(run_id, str) and _RUN_ID.fullmatch(run_id) is not None


def log_path(state: StateStore, run_id: str) -> Path:
    """Where the log of ``run_id`` lives; raises ``ValueError`` for an id that cannot be a file name."""
    if not is_valid_run_id(run_id):
        raise ValueError(f"invalid run id: {run_id!r}")
    return runs_dir(state) / f"{run_id}{LOG_SUFFIX}"


class RunNotFoundError(LookupError):
    """No log for the requested run id (or the prefix matches several)."""


def resolve_run_id(state: StateStore, text: str) -> str:
    """The run id for ``text``: an exact id, else a unique prefix of one (as with git hashes)."""
    if is_valid_run_id(text) and log_path(state, text).is_file():
        return text
    matches = sorted(path.stem for path in _log_files(state) if path.stem.startswith(text)) if text else []
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise RunNotFoundError(f"run id prefix {text!r} matches {len(matches)} runs: {', '.join(matches[:5])}")
    raise RunNotFoundError(f"no run log for {text!r} in {runs_dir(state)}")


def _log_files(state: StateStore) -> list[Path]:
    try:
        entries = list(os.scandir(runs_dir(state)))
    except OSError:
        return []
    return [Path(entry.path) for entry in entries if entry.name.endswith(LOG_SUFFIX) and entry.is_file()]


# -- writer ----------------------------------------------------------------------------------------


def log_subscriber_for(state: StateStore) -> Subscriber | None:
    """A subscriber that logs every run it hears about under ``state``; None when logging is off."""
    limits = LogLimits.from_env()
    if limits.keep_runs == 0:
        return None
    return RunLogWriter(state, limits)


class _Tail:
    """The ring of a step's output lines past the head budget, and what fell out of it."""

    __slots__ = ("lines", "dropped", "first_dropped")

    def __init__(self, size: int) -> None:
        self.lines: deque[EventDict] = deque(maxlen=size)
        self.dropped = 0
        self.first_dropped: EventDict | None = None

    def add(self, event: EventDict) -> None:
        lines = self.lines
        if len(lines) == lines.maxlen:
            if not self.dropped:
                self.first_dropped = lines[0] if lines else event
            self.dropped += 1
        lines.append(event)


class _RunFile:
    """One open run log: its descriptor, the remaining head budget and the per-step tails."""

    __slots__ = ("fd", "head_left", "tail_size", "tails")

    def __init__(self, fd: int, limits: LogLimits) -> None:
        self.fd = fd
        self.head_left = limits.head_lines
        self.tail_size = limits.tail_lines
        self.tails: dict[str, _Tail] = {}

    def take(self, event: EventDict) -> None:
        kind = event["type"]
        if kind == "output":
            if self.head_left > 0:
                self.head_left -= 1
                self.write(_encode_output(event))
                return
            step_id = event.get("stepId")
            tail = self.tails.get(step_id)  # type: ignore[arg-type]
            if tail is None:
                tail = self.tails[step_id] = _Tail(self.tail_size)  # type: ignore[index]
            tail.add(event)
            return
        if self.tails:
            if kind == "step_finished":
                tail = self.tails.pop(event.get("stepId"), None)  # type: ignore[arg-type]
                if tail is not None:
                    self.write(_encode_tail(tail))
            elif kind in ("checkpoint", "run_finished"):
                self.write("".join(_encode_tail(tail) for tail in self.tails.values()))
                self.tails.clear()
        self.write(_ENCODER.encode(event) + "\n")

    def write(self, text: str) -> None:
        data = text.encode("utf-8", "surrogatepass")
        while data:
            written = os.write(self.fd, data)
            data = data[written:]

    def close(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


def _encode_output(event: EventDict) -> str:
    line = event.get("line")
    # Fewer than cap/4 characters cannot exceed the cap in UTF-8: skip the encode for most lines.
    if isinstance(line, str) and len(line) > LINE_CAP_BYTES // 4:
        data = line.encode("utf-8", "surrogatepass")
        if len(data) > LINE_CAP_BYTES:
            kept = data[:LINE_CAP_BYTES].decode("utf-8", "ignore")
            marker = f" [lobster: line truncated, {len(data)} bytes]"
            event = {**event, "line": kept + marker}  # a copy: other subscribers share the dict
    return _ENCODER.encode(event) + "\n"


def _encode_tail(tail: _Tail) -> str:
    parts: list[str] = []
    first = tail.first_dropped
    if tail.dropped and first is not None:
        parts.append(
            _ENCODER.encode(
                {
                    "type": "output_truncated",
                    "runId": first.get("runId"),
                    "seq": first.get("seq"),
                    "time": first.get("time"),
                    "stepId": first.get("stepId"),
                    "droppedLines": tail.dropped,
                }
            )
            + "\n"
        )
    parts.extend(_encode_output(event) for event in tail.lines)
    return "".join(parts)


class RunLogWriter:
    """Subscriber appending the events of any number of runs to their logs (one file per run id).

    A log is opened on a run's first event and closed at its ``run_finished``; a later event of the
    same run (a resume in this process) reopens it for appending. Logging is best effort: an I/O
    error stops logging that run and never reaches the runner.
    """

    def __init__(self, state: StateStore, limits: LogLimits | None = None) -> None:
        self.state = state
        self.limits = limits or LogLimits()
        self._files: dict[str, _RunFile | None] = {}
        # Parallel runs in one process (the TUI) share this writer; RunEvents only orders one run.
        self._lock = threading.Lock()

    def __call__(self, event: EventDict) -> None:
        run_id = event.get("runId")
        with self._lock:
            if run_id in self._files:
                run_file = self._files[run_id]  # type: ignore[index]
            else:
                run_file = self._files[run_id] = self._open(run_id)  # type: ignore[index]
            if event["type"] == "run_finished":
                # Whatever happens below, the next event of this run id starts afresh.
                del self._files[run_id]  # type: ignore[arg-type]
            if run_file is None:
                return
            try:
                run_file.take(event)
            except OSError:
                run_file.close()
                if run_id in self._files:
                    self._files[run_id] = None  # type: ignore[index]
                return
            if event["type"] == "run_finished":
                run_file.close()

    def close(self) -> None:
        """Close every open log (for long-lived shells; unflushed tails are dropped)."""
        with self._lock:
            for run_file in self._files.values():
                if run_file is not None:
                    run_file.close()
            self._files.clear()

    def _open(self, run_id: object) -> _RunFile | None:
        if not is_valid_run_id(run_id):
            return None
        assert isinstance(run_id, str)
        path = log_path(self.state, run_id)
        try:
            self.state.ensure()
            path.parent.mkdir(mode=0o700, exist_ok=True)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o600)
                created = True
            except FileExistsError:
                fd = os.open(path, os.O_WRONLY | os.O_APPEND)
                created = False
        except OSError:
            return None
        if created:
            try:
                prune_logs(self.state, self.limits.keep_runs, protect=path)
            except OSError:
                pass  # retention is housekeeping; it must not cost the run its log
        return _RunFile(fd, self.limits)


# -- retention -------------------------------------------------------------------------------------


def prune_logs(state: StateStore, keep_runs: int, *, protect: Path | None = None) -> list[Path]:
    """Delete logs beyond the newest ``keep_runs`` (by modification time); returns what went.

    Kept regardless: ``protect``, logs of runs waiting at a checkpoint and logs that look alive.
    """
    dated: list[tuple[float, Path]] = []
    for path in _log_files(state):
        try:
            dated.append((path.stat().st_mtime, path))
        except OSError:
            continue
    if len(dated) <= keep_runs:
        return []
    dated.sort(key=lambda item: item[0], reverse=True)
    now = time.time()
    removed: list[Path] = []
    for mtime, path in dated[keep_runs:]:
        if path == protect:
            continue
        last = _last_event(path)
        if last is not None and _is_waiting(last):
            continue
        finished = last is not None and last.get("type") == "run_finished"
        if not finished and now - mtime < _LIVE_GRACE_SECONDS:
            continue
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        removed.append(path)
    return removed


def _last_event(path: Path) -> EventDict | None:
    try:
        with open(path, "rb") as handle:
            events = _peek_events(handle, os.fstat(handle.fileno()).st_size, from_end=True)
    except OSError:
        return None
    return events[-1] if events else None


def _is_waiting(event: EventDict) -> bool:
    kind = event.get("type")
    return kind == "checkpoint" or (kind == "run_finished" and event.get("status") in WAITING_STATUSES)


# -- readers ---------------------------------------------------------------------------------------


def _note(run_id: str, line_number: int, message: str) -> EventDict:
    return {"type": "log_note", "runId": run_id, "lineNumber": line_number, "message": message}


def _parse_line(raw: bytes) -> EventDict | None:
    """One complete log line as an event dict, or None when it is not one."""
    try:
        value = json.loads(raw)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError both are
        return None
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return value
    return None


def _events_from_lines(run_id: str, lines: list[bytes], first_number: int) -> Iterator[EventDict]:
    for number, raw in enumerate(lines, start=first_number):
        if not raw.strip():
            continue
        event = _parse_line(raw)
        yield event if event is not None else _note(run_id, number, f"line {number} of the log is not a valid event; skipped")


def read_events(state: StateStore, run_id: str) -> list[EventDict]:
    """Every event of a run, in file order; raises :class:`RunNotFoundError` without a log.

    A corrupt line becomes a ``log_note`` dict; an unterminated last line is a writer caught
    mid-write and is left out silently.
    """
    try:
        data = log_path(state, run_id).read_bytes()
    except (FileNotFoundError, ValueError):
        raise RunNotFoundError(f"no run log for {run_id!r} in {runs_dir(state)}") from None
    lines = data.split(b"\n")
    lines.pop()  # after the last newline: empty, or a line still being written
    return list(_events_from_lines(run_id, lines, 1))


def is_final(event: Mapping[str, Any]) -> bool:
    """True for the event after which a run's log gets nothing more (ok, failed or cancelled)."""
    return event.get("type") == "run_finished" and event.get("status") in TERMINAL_STATUSES


def follow_events(
    state: StateStore, run_id: str, stop: threading.Event | None = None, poll: float = 0.05
) -> Iterator[EventDict]:
    """Yield a run's events from the start of its log, then new ones as they are appended.

    Ends after a ``run_finished`` that is ok, failed or cancelled, or when ``stop`` is set; a run
    waiting at a checkpoint keeps the follow going, because its resume continues this log. Waits for
    the log to appear if it does not exist yet.
    """
    path = log_path(state, run_id)
    handle = None
    pending = b""
    line_number = 0
    try:
        while stop is None or not stop.is_set():
            if handle is None:
                try:
                    handle = open(path, "rb")  # noqa: SIM115 - held across yields, closed below
                except FileNotFoundError:
                    _pause(stop, poll)
                    continue
            chunk = handle.read(_FOLLOW_READ_BYTES)
            if not chunk:
                _pause(stop, poll)
                continue
            *lines, pending = (pending + chunk).split(b"\n")
            for event in _events_from_lines(run_id, lines, line_number + 1):
                yield event
                if is_final(event):
                    return
            line_number += len(lines)
    finally:
        if handle is not None:
            handle.close()


def _pause(stop: threading.Event | None, seconds: float) -> None:
    if stop is None:
        time.sleep(seconds)
    else:
        stop.wait(seconds)


# -- run summaries -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunSummary:
    """One row of ``lobster runs``. A plain dataclass, not pydantic, so listing stays fast.

    ``status`` is ``running``, ``needs_approval``/``needs_input`` (waiting at a checkpoint), ``ok``,
    ``failed``, ``cancelled``, or ``unknown`` for a log without a readable event. ``duration_ms`` is
    wall-clock from the first event to the last (to now while running).
    """

    id: str
    name: str | None
    status: str
    started: str | None
    duration_ms: int | None
    current_step: str | None
    source: str | None
    target: str | None
    approval_id: str | None
    path: Path

    @property
    def waiting(self) -> bool:
        """True while the run waits at a checkpoint."""
        return self.status in WAITING_STATUSES

    def to_json(self) -> dict[str, Any]:
        """The ``lobster runs --json`` shape (camelCase, like events)."""
        return {
            "id": self.id,
            "name": self.name,
            "status": self.status,
            "started": self.started,
            "durationMs": self.duration_ms,
            "currentStep": self.current_step,
            "source": self.source,
            "target": self.target,
            "approvalId": self.approval_id,
            "path": str(self.path),
        }


def list_runs(state: StateStore) -> list[RunSummary]:
    """A summary of every run log, newest first, from the first and last few KiB of each file."""
    summaries = [summary for path in _log_files(state) if (summary := _summarise(path)) is not None]
    summaries.sort(key=lambda summary: (summary.started or "", summary.id), reverse=True)
    return summaries


def _summarise(path: Path) -> RunSummary | None:
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            head = _peek_events(handle, size, from_end=False)
            tail = head if size <= _PEEK_BYTES else _peek_events(handle, size, from_end=True)
    except OSError:
        return None  # deleted by retention between the listing and the read
    run_id = path.stem
    if not head or not tail:
        return RunSummary(run_id, None, "unknown", None, None, None, None, None, None, path)
    started_event = next((event for event in head if event.get("type") == "run_started"), {})
    started = head[0].get("time") if isinstance(head[0].get("time"), str) else None
    last = tail[-1]
    if last.get("type") == "run_finished":
        status = str(last.get("status"))
    elif last.get("type") == "checkpoint":
        status = "needs_input" if last.get("kind") == "input" else "needs_approval"
    else:
        status = "running"
    approval_id = None
    if status in WAITING_STATUSES:
        checkpoint = next((event for event in reversed(tail) if event.get("type") == "checkpoint"), {})
        approval_id = checkpoint.get("approvalId")
    current_step = next((event["stepId"] for event in reversed(tail) if isinstance(event.get("stepId"), str)), None)
    end = None if status == "running" else last.get("time")
    return RunSummary(
        id=run_id,
        name=started_event.get("name"),
        status=status,
        started=started,
        duration_ms=_elapsed_ms(started, end if isinstance(end, str) else None),
        current_step=current_step,
        source=started_event.get("source"),
        target=started_event.get("target"),
        approval_id=approval_id,
        path=path,
    )


def _peek_events(handle: Any, size: int, *, from_end: bool) -> list[EventDict]:
    """Parsed complete lines at one end of the file, reading more only while none is complete."""
    span = _PEEK_BYTES
    while True:
        start = max(0, size - span) if from_end else 0
        handle.seek(start)
        data = handle.read(min(span, size))
        lines = data.split(b"\n")
        lines.pop()  # an unterminated remainder: cut by the window or still being written
        if from_end and start > 0 and lines:
            lines.pop(0)  # starts mid-line
        events = [event for raw in lines if (event := _parse_line(raw)) is not None]
        if events or span >= size:
            return events
        span *= 4


def _elapsed_ms(start: str | None, end: str | None) -> int | None:
    if start is None:
        return None
    try:
        begun = datetime.fromisoformat(start)
        finished = datetime.fromisoformat(end) if end is not None else datetime.now(begun.tzinfo)
    except ValueError:
        return None
    return max(0, round((finished - begun).total_seconds() * 1000))


# -- CLI: lobster runs / lobster logs ----------------------------------------------------------------

RUNS_USAGE = "Usage: lobster runs [--json]\n"
LOGS_USAGE = "Usage: lobster logs <runId> [--follow] [--json]\n"

# Output is the child's bytes; control characters would drive the reader's terminal, so show them.
_CONTROL = {code: f"\\x{code:02x}" for code in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)] if code != 0x09}


def runs_command(args: list[str], stdout: TextIO, stderr: TextIO) -> int:
    """``lobster runs [--json]``: a table (or JSON array) of the runs in the state directory."""
    as_json = False
    for arg in args:
        if arg == "--json":
            as_json = True
        else:
            stderr.write(f"runs: unexpected argument {arg!r}\n{RUNS_USAGE}")
            return 2
    runs = list_runs(StateStore.from_env())
    if as_json:
        stdout.write(json.dumps([run.to_json() for run in runs], indent=2) + "\n")
    elif not runs:
        stdout.write("No runs recorded yet.\n")
    else:
        stdout.write(_runs_table(runs))
    stdout.flush()
    return 0


def _runs_table(runs: list[RunSummary]) -> str:
    header = ("ID", "NAME", "STATUS", "STARTED", "DURATION", "STEP")
    rows = [
        (
            run.id,
            _clip(_printable(_display_name(run)), 32),
            _display_status(run),
            _local_time(run.started),
            format_duration(run.duration_ms),
            _clip(_printable(run.current_step or "-"), 24),
        )
        for run in runs
    ]
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(len(header))]
    return "".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() + "\n" for row in [header, *rows])


def _display_name(run: RunSummary) -> str:
    if run.name:
        return run.name
    if run.source == "workflow" and run.target:
        return os.path.basename(run.target)
    return run.target or "-"


def _display_status(run: RunSummary) -> str:
    if run.status == "needs_approval":
        return "waiting: approval"
    if run.status == "needs_input":
        return "waiting: input"
    return run.status


def _local_time(stamp: str | None) -> str:
    if stamp is None:
        return "-"
    try:
        return datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return stamp


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _printable(text: str) -> str:
    return text.translate(_CONTROL)


def format_duration(ms: object) -> str:
    """``850ms``, ``12.3s``, ``4m05s``, ``2h03m``, ``3d04h``; ``-`` when unknown."""
    if not isinstance(ms, int) or isinstance(ms, bool):
        return "-"
    if ms < 1000:
        return f"{ms}ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f}s"
    minutes, seconds = divmod(ms // 1000, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h{minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d{hours:02d}h"


def logs_command(args: list[str], stdout: TextIO, stderr: TextIO) -> int:
    """``lobster logs <runId> [--follow] [--json]``: a run's transcript, or its raw JSON lines."""
    follow = as_json = False
    positional: list[str] = []
    for arg in args:
        if arg in ("--follow", "-f"):
            follow = True
        elif arg == "--json":
            as_json = True
        elif arg.startswith("-"):
            stderr.write(f"logs: unknown option {arg!r}\n{LOGS_USAGE}")
            return 2
        else:
            positional.append(arg)
    if len(positional) != 1:
        stderr.write(f"logs: expected exactly one run id\n{LOGS_USAGE}")
        return 2
    state = StateStore.from_env()
    try:
        run_id = resolve_run_id(state, positional[0])
        events: Iterator[EventDict] | list[EventDict] = follow_events(state, run_id) if follow else read_events(state, run_id)
    except RunNotFoundError as error:
        stderr.write(f"Error: {error}\n")
        return 1
    for event in events:
        if event.get("type") == "log_note":
            stderr.write(f"warning: {event.get('message')}\n")
            stderr.flush()
            continue
        text = _ENCODER.encode(event) if as_json else format_event(event)
        if text is not None:
            stdout.write(text + "\n")
            if follow:
                stdout.flush()
    stdout.flush()
    return 0


def format_event(event: Mapping[str, Any]) -> str | None:
    """One event as transcript text (one or more lines, no trailing newline)."""
    kind = event.get("type")
    if kind == "output":
        line = _printable(str(event.get("line", "")))
        return f"    {line}" if event.get("stream") != "stderr" else f"  ! {line}"
    if kind == "step_started":
        command = event.get("command")
        text = f"-> {event.get('stepId')} [{event.get('kind')}]"
        return text + (f" {_printable(command)}" if isinstance(command, str) and command else "")
    if kind == "step_finished":
        text = f"<- {event.get('stepId')} {event.get('status')} in {format_duration(event.get('durationMs'))}"
        if event.get("exitCode") is not None:
            text += f", exit {event.get('exitCode')}"
        return text + (f": {_printable(str(event['error']))}" if event.get("error") else "")
    if kind == "output_truncated":
        return f"    ... {event.get('droppedLines')} lines of {event.get('stepId')} not logged ..."
    if kind == "run_started":
        if event.get("resumed"):
            return f"== run {event.get('runId')} continues ({_local_time(event.get('time'))})"
        name = event.get("name") or event.get("target")
        return (
            f"== run {event.get('runId')} {_printable(str(name))} ({event.get('source')}) "
            f"started {_local_time(event.get('time'))}"
        )
    if kind == "checkpoint":
        text = f"|| checkpoint: {event.get('kind')}"
        if event.get("approvalId"):
            text += f" (id {event.get('approvalId')})"
        return text + (f": {_printable(str(event['prompt']))}" if event.get("prompt") else "")
    if kind == "resumed":
        approver = f" by {_printable(str(event['approver']))}" if event.get("approver") else ""
        return f"|| decision: {event.get('decision')}{approver} ({_local_time(event.get('time'))})"
    if kind == "run_finished":
        status = event.get("status")
        label = {"needs_approval": "waiting for approval", "needs_input": "waiting for input"}.get(str(status), status)
        text = f"== run {label} after {format_duration(event.get('durationMs'))}"
        return text + (f": {_printable(str(event['error']))}" if event.get("error") else "")
    return None
