"""Running child programs (spec §10.1): process groups, tree termination, line streaming.

Every child is the leader of a new process group, so an abort (cancel, step timeout, CLI signal)
ends the whole tree, grandchildren and background jobs included. Output is read as bytes and decoded
incrementally as UTF-8, so a multi-byte character split across reads is reassembled and invalid
bytes become U+FFFD instead of an exception.

A runner that is killed outright (``kill -9``, OOM killer) cannot end its children itself, and
since each child leads its own session nothing else would: they would live on as orphans. So the
first child a process starts also starts a watchdog, a tiny ``/bin/sh`` loop in its own session that
reads the live process groups from a pipe only the runner holds. When the pipe closes (the runner
exited or died) the watchdog SIGKILLs every group still registered and exits. ``PR_SET_PDEATHSIG``
would be Linux-only, tied to the spawning thread, and reach only the direct child, not the
grandchildren and background jobs a group kill reaches. The watchdog is started before the first
child and each child's group is registered as soon as ``Popen`` returns. Registering from inside
the child (a ``preexec_fn``) would close the microseconds between the two, but it triples the cost
of every spawn (3 ms to 9 ms here, over a second on a 200-step workflow) and CPython documents
``preexec_fn`` as unsafe with threads, which the runner uses. What the watchdog cannot reach: a
descendant that leaves the group on purpose (``setsid``), and a watchdog killed with the runner.

Output reaches the sink as blocks: every complete line a pipe read delivered, joined by ``"\n"``
(``\r\n`` folded to ``\n``), so a step printing 200,000 lines costs a few hundred calls, not
200,000 (see :meth:`~lobster_tui.core.events.RunEvents.emit_output`).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import select
import signal as signals
import subprocess
import threading
from collections.abc import Callable

from .cancel import CancelSignal
from .errors import AbortError, LobsterRuntimeError
from .records import record

OutputSink = Callable[[str, str], None]
"""Receives ``(stream, block)``: one or more complete lines joined by ``"\n"``, without the last newline."""

KILL_ESCALATION_SECONDS = 0.250
_READ_CHUNK = 65536

_live_groups: set[int] = set()
_live_lock = threading.Lock()

# The watchdog is a POSIX shell, not a Python: it starts in ~1 ms instead of ~15 ms of CPU (a
# second interpreter per run competes with the run itself on a small machine), and needs nothing
# but builtins: it keeps the live groups as " 12 34 " and SIGKILLs each one when its stdin ends.
_WATCHDOG_SCRIPT = """\
groups=' '
while read -r op pgid; do
  case $pgid in ''|*[!0-9]*) continue ;; esac
  case $op in
    +) groups="$groups$pgid " ;;
    *) case $groups in *" $pgid "*) groups="${groups%% $pgid *} ${groups#* $pgid }" ;; esac ;;
  esac
done
for pgid in $groups; do kill -s KILL -- "-$pgid" 2>/dev/null; done
"""
_watchdog: subprocess.Popen[bytes] | None = None
_watchdog_pid = 0  # the process that started it: a forked child needs its own
_watchdog_lock = threading.Lock()  # not _live_lock: the CLI's signal handler takes that one


def _tell_watchdog(op: str, pgid: int) -> int | None:
    """Register (``+``) or forget (``-``) a child's process group with this process's watchdog;
    ``?`` only starts it and returns the pipe's fd."""
    global _watchdog, _watchdog_pid
    with _watchdog_lock:
        if _watchdog is None or _watchdog_pid != os.getpid():
            if op == "-":
                return None
            try:
                # Started before the first child (op "?"), so a kill cannot land between the
                # child's start and the watchdog's.
                _watchdog = subprocess.Popen(
                    ["/bin/sh", "-c", _WATCHDOG_SCRIPT],
                    bufsize=0,  # one write(2) per registration, no flush
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            except OSError:
                return None  # no process to spare: children are still ended on abort as before
            _watchdog_pid = os.getpid()
        stdin = _watchdog.stdin
        if stdin is None or op == "?":
            return stdin.fileno() if stdin is not None else None
        with contextlib.suppress(OSError, ValueError):
            stdin.write(f"{op} {pgid}\n".encode("ascii"))
        return None


@record
class ProcessResult:
    """The outcome of a child: exit code (None when killed by a signal) and its output."""

    returncode: int | None
    stdout: str
    stderr: str
    output_exceeded: str | None = None


def shell_argv(line: str, env: dict[str, str]) -> list[str]:
    """The argv that runs a shell line (R-PROC-2): ``LOBSTER_SHELL`` or ``/bin/sh -lc``."""
    configured = (env.get("LOBSTER_SHELL") or "").strip()
    if configured:
        name = os.path.basename(configured).lower()
        if name in ("powershell", "powershell.exe", "pwsh", "pwsh.exe"):
            return [configured, "-NoProfile", "-Command", line]
        if name in ("cmd", "cmd.exe") or os.name == "nt":
            return [configured, "/d", "/s", "/c", line]
        return [configured, "-lc", line]
    if os.name == "nt":
        comspec = env.get("ComSpec") or env.get("COMSPEC") or "cmd.exe"
        return [comspec, "/d", "/s", "/c", line]
    return ["/bin/sh", "-lc", line]


def kill_all_now() -> None:
    """SIGKILL every live child tree at once (the CLI's second signal, R-CLI-21)."""
    with _live_lock:
        groups = list(_live_groups)
    for pgid in groups:
        _kill_group(pgid, signals.SIGKILL)


def _kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pgid, sig)


class _Stream:
    """One pipe of a child: keeps its text and hands complete lines to the sink as they arrive."""

    __slots__ = ("_decoder", "_pending", "byte_count", "cap", "fd", "parts", "sink", "stream")

    def __init__(self, fd: int, name: str, sink: OutputSink | None, cap: int | None) -> None:
        self.fd = fd
        self.stream = name
        self.sink = sink
        self.cap = cap
        self.parts: list[str] = []
        self.byte_count = 0
        self._pending = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, chunk: bytes) -> bool:
        """Take one read; False when it went past the cap (the caller stops reading)."""
        self.byte_count += len(chunk)
        if self.cap is not None and self.byte_count > self.cap:
            return False
        self._take(self._decoder.decode(chunk))
        return True

    def finish(self) -> None:
        """End of the stream: flush the decoder and hand over a last line without newline."""
        self._take(self._decoder.decode(b"", final=True))
        if self._pending and self.sink is not None:
            self._emit(self._pending)

    def _take(self, text: str) -> None:
        if not text:
            return
        self.parts.append(text)
        if self.sink is None:
            return
        end = text.rfind("\n")
        if end < 0:
            self._pending += text
            return
        block = self._pending + text[:end]
        self._pending = text[end + 1 :]
        if "\r" in block:
            block = block.replace("\r\n", "\n")
            if block.endswith("\r"):
                block = block[:-1]
        self._emit(block)

    def _emit(self, block: str) -> None:
        assert self.sink is not None
        try:
            self.sink(self.stream, block)
        except Exception:  # noqa: BLE001
            # A failing subscriber must not stall the child on a full pipe or end the step:
            # report it once, stop calling it and keep draining.
            import traceback

            traceback.print_exc()
            self.sink = None

    @property
    def text(self) -> str:
        return "".join(self.parts)


def _pump(streams: list[_Stream], on_exceeded: Callable[[str], None]) -> None:
    """Read every stream to its end (or its cap) in this thread, closing each fd when done.

    One ``poll`` loop in the calling thread instead of a reader thread per pipe: starting and
    joining two threads per child cost about as much as spawning it.
    """
    by_fd = {stream.fd: stream for stream in streams}
    poller = select.poll()
    for fd in by_fd:
        poller.register(fd, select.POLLIN)
    try:
        while by_fd:
            for fd, _ in poller.poll():
                stream = by_fd.get(fd)
                if stream is None:
                    continue
                chunk = os.read(fd, _READ_CHUNK)
                if chunk and stream.feed(chunk):
                    continue
                if chunk:
                    on_exceeded(stream.stream)
                else:
                    stream.finish()
                poller.unregister(fd)
                del by_fd[fd]
                os.close(fd)
    finally:
        for fd in by_fd:
            with contextlib.suppress(OSError):
                os.close(fd)


def run_process(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: str,
    stdin_data: bytes | None,
    signal: CancelSignal,
    on_output: OutputSink | None = None,
    max_output_bytes: int | None = None,
) -> ProcessResult:
    """Run ``argv`` to completion or abort; raises AbortError with the signal's reason on abort.

    ``FileNotFoundError`` propagates when the program (or ``cwd``) does not exist, so callers can
    word their own "not found" message. ``max_output_bytes`` caps each stream; past it the tree is
    killed and ``output_exceeded`` names the stream.
    """
    signal.raise_if_aborted()
    _tell_watchdog("?", 0)  # the watchdog runs before the child does
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    except ValueError as error:
        # A NUL byte in argv, env or cwd, or "=" in an env name (from args, templates or a hostile
        # file): the OS cannot express it, so it is a failed command, not a crash.
        raise LobsterRuntimeError(f"cannot start {argv[0] if argv else 'command'}: {error}") from None
    pgid = proc.pid
    _tell_watchdog("+", pgid)
    with _live_lock:
        _live_groups.add(pgid)
    exceeded: list[str] = []
    kill_issued = threading.Event()

    def terminate_tree() -> None:
        if signal.timeout:
            _kill_group(pgid, signals.SIGKILL)
            kill_issued.set()
            return
        _kill_group(pgid, signals.SIGTERM)

        def escalate() -> None:
            _kill_group(pgid, signals.SIGKILL)
            kill_issued.set()

        timer = threading.Timer(KILL_ESCALATION_SECONDS, escalate)
        timer.daemon = True
        timer.start()

    def on_exceeded(stream: str) -> None:
        if not exceeded:
            exceeded.append(stream)
            _kill_group(pgid, signals.SIGKILL)

    assert proc.stdout is not None and proc.stderr is not None
    streams = [
        _Stream(os.dup(proc.stdout.fileno()), "stdout", on_output, max_output_bytes),
        _Stream(os.dup(proc.stderr.fileno()), "stderr", on_output, max_output_bytes),
    ]
    proc.stdout.close()
    proc.stderr.close()
    writer = _start_stdin_writer(proc, stdin_data)
    signal.on_abort(terminate_tree)
    try:
        _pump(streams, on_exceeded)
        proc.wait()
        if writer is not None:
            writer.join()
    finally:
        with _live_lock:
            _live_groups.discard(pgid)
        if not signal.aborted:
            # An aborted group is forgotten only after its SIGKILL (below), never before.
            _tell_watchdog("-", pgid)
    if signal.aborted:
        # Settle only once SIGKILL has gone to the group, so no descendant outlives the run.
        kill_issued.wait(KILL_ESCALATION_SECONDS * 4)
        _kill_group(pgid, signals.SIGKILL)
        _tell_watchdog("-", pgid)
        raise AbortError(signal.reason or "This operation was aborted")
    stdout_reader, stderr_reader = streams
    return ProcessResult(
        returncode=proc.returncode if proc.returncode >= 0 else None,
        stdout=stdout_reader.text,
        stderr=stderr_reader.text,
        output_exceeded=exceeded[0] if exceeded else None,
    )


def _start_stdin_writer(proc: subprocess.Popen[bytes], data: bytes | None) -> threading.Thread | None:
    if data is None or proc.stdin is None:
        return None
    stdin = proc.stdin

    def write() -> None:
        # A child that exits without reading its stdin is fine (EPIPE ignored, R-PROC-7).
        with contextlib.suppress(BrokenPipeError, OSError, ValueError):
            stdin.write(data)
        with contextlib.suppress(BrokenPipeError, OSError, ValueError):
            stdin.close()

    thread = threading.Thread(target=write, name="lobster-stdin-writer", daemon=True)
    thread.start()
    return thread
