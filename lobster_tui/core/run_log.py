"""Per-run event logs: every run leaves ``<state dir>/runs/<runId>.jsonl`` that can be tailed live.

The writer (:func:`log_subscriber_for`) is a run-event subscriber that appends each event as one
compact JSON line, written with a single ``write`` on an ``O_APPEND`` descriptor so another process
tailing the file sees whole events as soon as they happen. A resumed run keeps its run id, so its
events land in the same file after the checkpoint. The official runtime ignores the ``runs/``
folder; it is created 0700 and logs 0600, since output can be sensitive. Events carry no
environment values and the writer adds none. Output comes one event per line or, cheaper, as a
block of lines through :meth:`RunLogWriter.output_block`; both give the same file.

Bounds, per run segment (a resume starts a fresh budget):

- the first ``LOBSTER_LOG_HEAD_LINES`` output lines (default 5,000) are written as they arrive;
- past that, each step's lines go to an in-memory ring of ``LOBSTER_LOG_TAIL_LINES`` (default
  1,000); when the step finishes (or the run halts or ends) its ring is written, preceded by one
  ``output_truncated`` event with ``droppedLines`` when lines fell out of it. That event takes the
  ``seq`` and ``time`` of the first dropped line, so ``seq`` stays unique and increasing within a
  run segment (``seq`` restarts with each process, hence with a resume);
- an output line longer than 4 KiB (UTF-8) is cut there and ends with a ``[lobster: line truncated
  ...]`` marker.

Retention: when a new log is created, logs beyond the newest ``LOBSTER_LOG_KEEP_RUNS`` (default
200, ``0`` turns logging off) are deleted, except the log of a run waiting at a checkpoint (its last
event is a ``checkpoint`` or a ``run_finished`` with ``needs_approval``/``needs_input``, and the
checkpoint's resume state still exists) and the log of a run that looks alive (not finished,
written within the last day).

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
from collections.abc import Callable, Iterator, Mapping
from json.encoder import encode_basestring_ascii  # type: ignore[attr-defined]
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .errors import LobsterError
from .events import EventDict, Subscriber
from .records import record
from .state import StateStore

if TYPE_CHECKING:
    from datetime import datetime

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


@record(frozen=True)
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


# Output lines travel as a block (lines joined by "\n", split only where needed) or a list.
_Lines = str | list[str]


def _last_lines(payload: _Lines, count: int, keep: int) -> list[str]:
    """The last ``keep`` of the ``count`` lines in ``payload``, splitting no more than that."""
    if keep <= 0:
        return []
    if isinstance(payload, list):
        return payload[count - keep :]
    return payload.split("\n") if keep >= count else payload.rsplit("\n", keep)[1:]


class _Tail:
    """The last ``size`` output lines of one step past the head budget, and how many there were.

    Lines are kept as they arrived, ``(first_seq, time, stream, payload, count)`` per batch, and
    whole batches fall off the front once the newer ones hold ``size`` lines, so a batch costs O(1)
    however many lines it has. The first line that ever entered is the first dropped: its ``seq``
    and ``time`` date the ``output_truncated`` event.
    """

    __slots__ = ("batches", "count", "first", "seen", "size", "step_id")

    def __init__(self, step_id: Any, size: int) -> None:
        self.step_id = step_id
        self.size = size
        self.batches: deque[tuple[int, Any, Any, _Lines, int]] = deque()
        self.count = 0
        self.seen = 0
        self.first: tuple[int, Any] | None = None

    def extend(self, first_seq: int, time: Any, stream: Any, payload: _Lines, count: int) -> None:
        if self.first is None:
            self.first = (first_seq, time)
        self.seen += count
        self.count += count
        batches = self.batches
        batches.append((first_seq, time, stream, payload, count))
        while batches and self.count - batches[0][4] >= self.size:
            self.count -= batches.popleft()[4]

    @property
    def dropped(self) -> int:
        return self.seen - min(self.count, self.size)

    def kept(self) -> Iterator[tuple[int, Any, Any, list[str]]]:
        """The kept lines, oldest first, as ``(first_seq, time, stream, lines)`` per batch."""
        skip = max(0, self.count - self.size)  # only ever inside the first batch
        for first_seq, stamp, stream, payload, count in self.batches:
            yield first_seq + skip, stamp, stream, _last_lines(payload, count, count - skip)
            skip = 0


class _RunFile:
    """One open run log: its descriptor, the remaining head budget and the per-step tails."""

    __slots__ = ("fd", "head_left", "run_json", "tail_size", "tails")

    def __init__(self, fd: int, run_id: str, limits: LogLimits) -> None:
        self.fd = fd
        self.run_json = _json_value(run_id)
        self.head_left = limits.head_lines
        self.tail_size = limits.tail_lines
        self.tails: dict[Any, _Tail] = {}

    def output(self, step_id: Any, first_seq: int, time: Any, stream: Any, payload: _Lines, count: int) -> None:
        """``count`` consecutive output lines of one step and stream (``seq`` from ``first_seq``):
        written while the head budget lasts, the rest kept in the step's ring."""
        head = min(self.head_left, count)
        rest: _Lines = payload
        if head:
            self.head_left -= head
            if isinstance(payload, list):
                written, rest = payload[:head], payload[head:]
            elif head < count:
                written = payload.split("\n", head)
                rest = written.pop()
            else:
                written = payload.split("\n")
            self.write(_outputs_json(self.run_json, _json_value(step_id), first_seq, time, stream, written))
        if head < count:
            tail = self.tails.get(step_id)
            if tail is None:
                tail = self.tails[step_id] = _Tail(step_id, self.tail_size)
            tail.extend(first_seq + head, time, stream, rest, count - head)

    def event(self, event: EventDict) -> None:
        """Any other event; a step's end (or the run's halt or end) first writes the kept tail."""
        if self.tails:
            kind = event["type"]
            if kind == "step_finished":
                tail = self.tails.pop(event.get("stepId"), None)
                if tail is not None:
                    self.write(self._tail_json(tail))
            elif kind in ("checkpoint", "run_finished"):
                self.write("".join(self._tail_json(tail) for tail in self.tails.values()))
                self.tails.clear()
        self.write(_ENCODER.encode(event) + "\n")

    def _tail_json(self, tail: _Tail) -> str:
        step_json = _json_value(tail.step_id)
        parts: list[str] = []
        if tail.dropped and tail.first is not None:
            seq, time = tail.first
            parts.append(
                f'{{"type":"output_truncated","runId":{self.run_json},"seq":{seq},'
                f'"time":{_json_value(time)},"stepId":{step_json},"droppedLines":{tail.dropped}}}\n'
            )
        parts.extend(_outputs_json(self.run_json, step_json, *batch) for batch in tail.kept())
        return "".join(parts)

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


def _json_value(value: Any) -> str:
    return encode_basestring_ascii(value) if type(value) is str else _ENCODER.encode(value)


def _outputs_json(run_json: str, step_json: str, first_seq: int, time: Any, stream: Any, lines: list[str]) -> str:
    """Consecutive ``output`` event lines, ``seq`` counting from ``first_seq``; keys and their order
    are the runner's, so a line reads the same whether it came alone or in a block."""
    prefix = f'{{"type":"output","runId":{run_json},"seq":'
    middle = f',"time":{_json_value(time)},"stepId":{step_json},"stream":{_json_value(stream)},"line":'
    # Fewer than cap/4 characters cannot exceed the cap in UTF-8: usually every line is encoded in C.
    short = not lines or max(map(len, lines)) <= LINE_CAP_BYTES // 4
    encoded = map(encode_basestring_ascii if short else _line_json, lines)
    return "".join([f"{prefix}{seq}{middle}{text}}}\n" for seq, text in zip(range(first_seq, first_seq + len(lines)), encoded)])


def _line_json(line: str) -> str:
    """An output line as JSON, cut at ``LINE_CAP_BYTES`` of UTF-8 with a marker."""
    data = line.encode("utf-8", "surrogatepass")
    if len(data) > LINE_CAP_BYTES:
        line = data[:LINE_CAP_BYTES].decode("utf-8", "ignore") + f" [lobster: line truncated, {len(data)} bytes]"
    return encode_basestring_ascii(line)


class RunLogWriter:
    """Subscriber appending the events of any number of runs to their logs (one file per run id).

    A log is opened on a run's first event and closed at its ``run_finished``; a later event of the
    same run (a resume in this process) reopens it for appending. Logging is best effort: an I/O
    error stops logging that run and never reaches the runner.

    Besides the one-event call, :meth:`output_block` takes many output lines at once, so a loud
    step costs per read of its pipe, not per line.
    """

    def __init__(self, state: StateStore, limits: LogLimits | None = None) -> None:
        self.state = state
        self.limits = limits or LogLimits()
        self._files: dict[Any, _RunFile | None] = {}
        # Parallel runs in one process (the TUI) share this writer; RunEvents only orders one run.
        self._lock = threading.Lock()

    def __call__(self, event: EventDict) -> None:
        run_id = event.get("runId")
        with self._lock:
            run_file = self._file(run_id)
            if run_file is not None:
                try:
                    if event["type"] == "output":
                        line = event.get("line")
                        run_file.output(event.get("stepId"), event["seq"], event.get("time"), event.get("stream"),
                                        [line if isinstance(line, str) else str(line)], 1)
                    else:
                        run_file.event(event)
                except OSError:
                    self._give_up(run_id, run_file)
                    run_file = None
            if event["type"] == "run_finished":
                # The next event of this run id (a resume in this process) opens the log afresh.
                del self._files[run_id]
                if run_file is not None:
                    run_file.close()

    def output_block(self, event: EventDict, block: str, count: int) -> None:
        """Log ``count`` consecutive ``output`` events at once.

        ``block`` is their lines joined by ``"\\n"``; ``event`` is the first one without ``line``
        (its ``seq``; each next line has the next number, the same ``time``). Logging the block
        splits only the lines it writes, so output past the head costs per block, not per line.
        """
        run_id = event.get("runId")
        with self._lock:
            run_file = self._file(run_id)
            if run_file is None:
                return
            try:
                run_file.output(event.get("stepId"), event["seq"], event.get("time"), event.get("stream"), block, count)
            except OSError:
                self._give_up(run_id, run_file)

    def close(self) -> None:
        """Close every open log (for long-lived shells; unflushed tails are dropped)."""
        with self._lock:
            for run_file in self._files.values():
                if run_file is not None:
                    run_file.close()
            self._files.clear()

    def _file(self, run_id: Any) -> _RunFile | None:
        try:
            return self._files[run_id]
        except KeyError:
            run_file = self._files[run_id] = self._open(run_id)
            return run_file

    def _give_up(self, run_id: Any, run_file: _RunFile) -> None:
        # Remembered as None so the rest of this run skips logging instead of retrying per line.
        run_file.close()
        self._files[run_id] = None

    def _open(self, run_id: object) -> _RunFile | None:
        if not is_valid_run_id(run_id):
            return None
        assert isinstance(run_id, str)
        path = log_path(self.state, run_id)
        try:
            self.state.ensure()
            path.parent.mkdir(mode=0o700, exist_ok=True)
            if path.parent.is_symlink():
                return None  # a planted link would lead the log (and its pruning) out of the directory
            nofollow = getattr(os, "O_NOFOLLOW", 0)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | nofollow, 0o600)
                created = True
            except FileExistsError:
                fd = os.open(path, os.O_WRONLY | os.O_APPEND | nofollow)
                created = False
        except OSError:
            return None
        if created:
            try:
                prune_logs(self.state, self.limits.keep_runs, protect=path)
            except OSError:
                pass  # retention is housekeeping; it must not cost the run its log
        return _RunFile(fd, run_id, self.limits)


# -- retention -------------------------------------------------------------------------------------


def prune_logs(state: StateStore, keep_runs: int, *, protect: Path | None = None) -> list[Path]:
    """Delete logs beyond the newest ``keep_runs`` (by modification time); returns what went.

    Kept regardless: ``protect``, logs of runs still waiting at a checkpoint and logs that look
    alive. A run counts as waiting while its checkpoint's resume state exists: a checkpoint dropped
    elsewhere (the official runtime resumed it, say) must not pin its log forever.
    """
    paths = _log_files(state)
    if len(paths) <= keep_runs:
        return []  # the usual case, decided without a stat per log
    dated: list[tuple[float, Path]] = []
    for path in paths:
        try:
            dated.append((path.stat().st_mtime, path))
        except OSError:
            continue
    dated.sort(key=lambda item: item[0], reverse=True)
    now = time.time()
    removed: list[Path] = []
    for mtime, path in dated[keep_runs:]:
        if path == protect:
            continue
        tail = _tail_events(path)
        if tail and _still_waiting(state, tail):
            continue
        finished = bool(tail) and tail[-1].get("type") == "run_finished"
        if not finished and now - mtime < _LIVE_GRACE_SECONDS:
            continue
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        removed.append(path)
    return removed


def _tail_events(path: Path) -> list[EventDict]:
    try:
        with open(path, "rb") as handle:
            return _peek_events(handle, os.fstat(handle.fileno()).st_size, from_end=True)
    except OSError:
        return []


def _still_waiting(state: StateStore, tail: list[EventDict]) -> bool:
    last = tail[-1]
    kind = last.get("type")
    if not (kind == "checkpoint" or (kind == "run_finished" and last.get("status") in WAITING_STATUSES)):
        return False
    checkpoint = next((event for event in reversed(tail) if event.get("type") == "checkpoint"), None)
    key = checkpoint.get("stateKey") if checkpoint is not None else None
    if not isinstance(key, str):
        return True  # cannot tell: keep it
    try:
        return state.key_path(key).exists()
    except LobsterError:
        return True  # a key that does not normalise: cannot tell either


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
    state: StateStore,
    run_id: str,
    stop: threading.Event | None = None,
    poll: float = 0.05,
    *,
    runner_check: float | None = None,
    now: Callable[[], datetime] | None = None,
) -> Iterator[EventDict]:
    """Yield a run's events from the start of its log, then new ones as they are appended.

    Ends after a ``run_finished`` that is ok, failed or cancelled, or when ``stop`` is set; a run
    waiting at a checkpoint keeps the follow going, because its resume continues this log. Waits for
    the log to appear if it does not exist yet.

    With ``runner_check`` (seconds) a log that stops mid-segment is not waited on forever: while no
    new line comes, every ``runner_check`` seconds the follow looks whether the process running the
    segment is still there (as :func:`list_runs` does, ``now`` being its clock for logs without a
    pid). Once it is gone and the log has nothing more, the follow yields one ``run_interrupted``
    event (made by the reader, like ``log_note``: the log itself has no such line) and ends.
    """
    path = log_path(state, run_id)
    handle = None
    pending = b""
    line_number = 0
    # What the liveness check needs: the newest segment and the last event seen so far.
    segment: EventDict | None = None
    last: EventDict | None = None
    next_check = 0.0
    gone = False
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
                if runner_check is not None and last is not None and last.get("type") not in ("checkpoint", "run_finished"):
                    if gone:  # the runner is gone and the read after that found nothing: nothing more will come
                        yield _interrupted(run_id, segment, last)
                        return
                    if time.monotonic() >= next_check:
                        next_check = time.monotonic() + runner_check
                        clock = now() if now is not None else _utc_now()
                        if _runner_gone(segment, os.fstat(handle.fileno()).st_mtime, clock):
                            gone = True
                            continue  # one more read: lines the runner wrote just before it went
                _pause(stop, poll)
                continue
            gone = False  # more lines: judge the segment they belong to afresh
            *lines, pending = (pending + chunk).split(b"\n")
            for event in _events_from_lines(run_id, lines, line_number + 1):
                yield event
                if is_final(event):
                    return
                kind = event.get("type")
                if kind == "run_started":
                    segment = event
                if kind != "log_note":
                    last = event
            line_number += len(lines)
    finally:
        if handle is not None:
            handle.close()


def _interrupted(run_id: str, segment: Mapping[str, Any] | None, last: Mapping[str, Any]) -> EventDict:
    """The reader's ``run_interrupted`` event: when the run was last heard of and who ran it."""
    event: EventDict = {"type": "run_interrupted", "runId": run_id, "time": last.get("time")}
    if segment is not None:
        for key in ("pid", "host"):
            if segment.get(key) is not None:
                event[key] = segment[key]
    return event


def _utc_now() -> datetime:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc)


def _pause(stop: threading.Event | None, seconds: float) -> None:
    if stop is None:
        time.sleep(seconds)
    else:
        stop.wait(seconds)


# -- run summaries -----------------------------------------------------------------------------------


@record(frozen=True)
class RunSummary:
    """One row of ``lobster runs``. A plain record, not pydantic, so listing stays fast.

    ``status`` is ``running``, ``needs_approval``/``needs_input`` (waiting at a checkpoint), ``ok``,
    ``failed``, ``cancelled``, ``interrupted`` (not finished, and the process running it is gone:
    killed, crashed or the machine restarted; see :func:`_runner_gone`), or ``unknown`` for a log
    without a readable event. ``duration_ms`` is wall-clock from the first event to the last (to
    now while running).
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
    runner_pid: int | None = None
    """While ``running``: the pid of the process running it, when that is a process of this host."""
    runner_host: str | None = None
    """While ``running``: the host its runner logged (any host sharing the state directory)."""

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
            "runnerPid": self.runner_pid,
            "runnerHost": self.runner_host,
        }


def list_runs(state: StateStore, now: datetime | None = None) -> list[RunSummary]:
    """A summary of every run log, newest first, from the first and last few KiB of each file.

    ``now`` (an aware datetime; the real clock by default) is what running durations run up to and
    what the liveness grace of a log without a process id counts from, so a shell with its own
    clock (the TUI's, frozen in tests) gets the same answer it shows.
    """
    from datetime import datetime, timezone  # readers only, not the writer on a run's hot path

    if now is None:
        now = datetime.now(timezone.utc)
    summaries = [summary for path in _log_files(state) if (summary := _summarise(path, now)) is not None]
    summaries.sort(key=lambda summary: (summary.started or "", summary.id), reverse=True)
    return summaries


def _summarise(path: Path, now: datetime) -> RunSummary | None:
    runner_pid: int | None = None
    runner_host: str | None = None
    try:
        with open(path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            size = stat.st_size
            head = _peek_events(handle, size, from_end=False)
            tail = head if size <= _PEEK_BYTES else _peek_events(handle, size, from_end=True)
            run_id = path.stem
            if not head or not tail:
                return RunSummary(run_id, None, "unknown", None, None, None, None, None, None, path)
            last = tail[-1]
            if last.get("type") == "run_finished":
                status = str(last.get("status"))
            elif last.get("type") == "checkpoint":
                status = "needs_input" if last.get("kind") == "input" else "needs_approval"
            else:
                segment = next((event for event in reversed(tail) if event.get("type") == "run_started"), None)
                if segment is None:
                    segment = _last_run_started(handle, size)
                status = "interrupted" if _runner_gone(segment, stat.st_mtime, now) else "running"
                if status == "running":
                    runner_pid = _local_pid(segment)
                    host = segment.get("host") if segment is not None else None
                    runner_host = host if isinstance(host, str) else None
    except OSError:
        return None  # deleted by retention between the listing and the read
    started_event = next((event for event in head if event.get("type") == "run_started"), {})
    started = head[0].get("time") if isinstance(head[0].get("time"), str) else None
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
        duration_ms=_elapsed_ms(started, end if isinstance(end, str) else None, now),
        current_step=current_step,
        source=started_event.get("source"),
        target=started_event.get("target"),
        approval_id=approval_id,
        path=path,
        runner_pid=runner_pid,
        runner_host=runner_host,
    )


def newest_segment(state: StateStore, run_id: str) -> EventDict | None:
    """The ``run_started`` of the segment a run is in now, or None when its log has finished, waits
    at a checkpoint, or is missing."""
    try:
        with open(log_path(state, run_id), "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            tail = _peek_events(handle, size, from_end=True)
            if not tail or tail[-1].get("type") in ("run_finished", "checkpoint"):
                return None
            segment = next((event for event in reversed(tail) if event.get("type") == "run_started"), None)
            return segment if segment is not None else _last_run_started(handle, size)
    except (OSError, ValueError):
        return None


_RUN_STARTED_LINE = b'{"type":"run_started"'


def _last_run_started(handle: Any, size: int) -> EventDict | None:
    """The newest ``run_started`` of a log, searched backwards in blocks from its end.

    Only for a log that looks alive and whose last few KiB hold none (a loud segment): the writer
    starts every line with ``{"type":``, and inside a JSON string those quotes would be escaped, so
    the marker at the start of a line is always an event.
    """
    end = size
    while end > 0:
        start = max(0, end - _FOLLOW_READ_BYTES)
        handle.seek(start)
        # Overlap the next block by one marker, so a line start on the boundary is seen.
        data = handle.read(end - start + len(_RUN_STARTED_LINE))
        at = data.rfind(b"\n" + _RUN_STARTED_LINE)
        if at >= 0:
            handle.seek(start + at + 1)
            return _parse_line(handle.readline())
        if start == 0:
            return _parse_line(data.split(b"\n", 1)[0]) if data.startswith(_RUN_STARTED_LINE) else None
        end = start
    return None


# A process whose recorded start is this much after the run_started event still counts as the
# runner: /proc's start times are whole seconds of boot time plus ticks, and an NTP step moves them.
_START_SLACK_SECONDS = 5.0


def _runner_gone(started: Mapping[str, Any] | None, mtime: float, now: datetime) -> bool:
    """True when the process that logged ``started`` (a segment's ``run_started``) is gone.

    With a ``pid`` from this host: gone when no such process exists, it is a zombie, or it started
    after the segment did (the pid was reused). Without one (logs from before pids were recorded)
    or from another host sharing the state directory: gone once the log sat unwritten for
    ``_LIVE_GRACE_SECONDS``.
    """
    pid = started.get("pid") if started is not None else None
    host = started.get("host") if started is not None else None
    if isinstance(pid, int) and not isinstance(pid, bool) and (host is None or host == this_host()):
        return not _is_runner_alive(pid, started.get("time") if started is not None else None)
    return now.timestamp() - mtime > _LIVE_GRACE_SECONDS


def _local_pid(started: Mapping[str, Any] | None) -> int | None:
    pid = started.get("pid") if started is not None else None
    host = started.get("host") if started is not None else None
    if isinstance(pid, int) and not isinstance(pid, bool) and (host is None or host == this_host()):
        return pid
    return None


def this_host() -> str | None:
    """This machine's host name, as ``run_started`` events record it."""
    uname = getattr(os, "uname", None)
    return uname().nodename if uname is not None else None


def _is_runner_alive(pid: int, since: object) -> bool:
    """True when ``pid`` is a live process that could have logged a segment started at ``since``."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, another user's: judged by its start time below
    except OSError:
        return True  # cannot tell: keep showing it as running
    begun = _process_start(pid)
    if begun is None:
        return True  # no /proc (or a race with its exit): the pid exists, trust it
    if begun == "zombie":
        return False
    segment = _epoch_seconds(since)
    return segment is None or begun <= segment + _START_SLACK_SECONDS


def process_started_before(pid: int, since: object) -> bool:
    """True only when /proc shows ``pid`` alive (not a zombie) and started by ``since`` (an ISO
    stamp, give or take the slack); False whenever it cannot tell. For acting on a pid, not showing."""
    begun = _process_start(pid)
    segment = _epoch_seconds(since)
    return isinstance(begun, float) and segment is not None and begun <= segment + _START_SLACK_SECONDS


def _epoch_seconds(stamp: object) -> float | None:
    from datetime import datetime

    try:
        return datetime.fromisoformat(stamp).timestamp() if isinstance(stamp, str) else None
    except ValueError:
        return None


def _process_start(pid: int) -> float | str | None:
    """When ``pid`` started (epoch seconds, from /proc), ``"zombie"`` for a dead unreaped child,
    or None when /proc cannot say."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        if fields[0] in (b"Z", b"X"):
            return "zombie"
        ticks = int(fields[19])  # field 22, starttime, in clock ticks after boot
        with open("/proc/stat", "rb") as handle:
            boot = next(int(line.split()[1]) for line in handle if line.startswith(b"btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError, StopIteration):
        return None


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


def _elapsed_ms(start: str | None, end: str | None, now: datetime) -> int | None:
    """From ``start`` to ``end``, or to ``now`` while the run goes on."""
    from datetime import datetime  # only readers need it, not the writer on the run's hot path

    if start is None:
        return None
    try:
        begun = datetime.fromisoformat(start)
        finished = datetime.fromisoformat(end) if end is not None else now
        if (finished.tzinfo is None) != (begun.tzinfo is None):
            return None  # a naive clock against an aware stamp: no honest answer
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
    from datetime import datetime

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


# How often `lobster logs --follow` looks whether a silent run's process is still there.
_FOLLOW_RUNNER_CHECK = 1.0


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
        events: Iterator[EventDict] | list[EventDict] = (
            follow_events(state, run_id, runner_check=_FOLLOW_RUNNER_CHECK) if follow else read_events(state, run_id)
        )
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
    if kind == "run_interrupted":
        return f"== run interrupted: {runner_gone_text(event)}"
    return None


def runner_gone_text(event: Mapping[str, Any]) -> str:
    """What a ``run_interrupted`` event says happened, in the Runs list's words."""
    pid = event.get("pid")
    who = f" (pid {pid})" if isinstance(pid, int) and not isinstance(pid, bool) else ""
    return f"its process{who} is gone (killed or crashed); the run never finished"
