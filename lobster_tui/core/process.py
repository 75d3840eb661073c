"""Running child programs (spec §10.1): process groups, tree termination, line streaming.

Every child is the leader of a new process group, so an abort (cancel, step timeout, CLI signal)
ends the whole tree, grandchildren and background jobs included. Output is read as bytes and decoded
incrementally as UTF-8, so a multi-byte character split across reads is reassembled and invalid
bytes become U+FFFD instead of an exception.

A runner that is killed outright (``kill -9``, OOM killer) cannot end its children itself, and
since each child leads its own session nothing else would: they would live on as orphans. So the
first child a process starts also starts a watchdog, a tiny Python process in its own session that
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
import signal as signals
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass

from .cancel import CancelSignal
from .errors import AbortError, LobsterRuntimeError

OutputSink = Callable[[str, str], None]
"""Receives ``(stream, block)``: one or more complete lines joined by ``"\n"``, without the last newline."""

KILL_ESCALATION_SECONDS = 0.250
_READ_CHUNK = 65536

_live_groups: set[int] = set()
_live_lock = threading.Lock()

_WATCHDOG_SOURCE = """
import os, signal, sys
groups = set()
for line in sys.stdin.buffer.read().decode("ascii", "replace").splitlines():
    op, _, pgid = line.partition(" ")
    if pgid.isdigit():
        if op == "+":
            groups.add(int(pgid))
        else:
            groups.discard(int(pgid))
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
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
                    [sys.executable, "-I", "-S", "-c", _WATCHDOG_SOURCE],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            except OSError:
                return None  # no interpreter to spare: children are still ended on abort as before
            _watchdog_pid = os.getpid()
        stdin = _watchdog.stdin
        if stdin is None or op == "?":
            return stdin.fileno() if stdin is not None else None
        with contextlib.suppress(OSError, ValueError):
            stdin.write(f"{op} {pgid}\n".encode("ascii"))
            stdin.flush()
        return None


@dataclass
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


class _StreamReader(threading.Thread):
    """Drains one pipe: keeps the text and hands complete lines to the sink as they arrive."""

    def __init__(
        self,
        fd: int,
        name: str,
        sink: OutputSink | None,
        cap: int | None,
        on_exceeded: Callable[[str], None],
    ) -> None:
        super().__init__(name=f"lobster-{name}-reader", daemon=True)
        self.fd = fd
        self.stream = name
        self.sink = sink
        self.cap = cap
        self.on_exceeded = on_exceeded
        self.parts: list[str] = []
        self.byte_count = 0
        self._pending = ""

    def run(self) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        try:
            while True:
                chunk = os.read(self.fd, _READ_CHUNK)
                if not chunk:
                    break
                self.byte_count += len(chunk)
                if self.cap is not None and self.byte_count > self.cap:
                    self.on_exceeded(self.stream)
                    break
                self._take(decoder.decode(chunk))
            self._take(decoder.decode(b"", final=True))
            if self._pending and self.sink is not None:
                self.sink(self.stream, self._pending)
        finally:
            with contextlib.suppress(OSError):
                os.close(self.fd)

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
        self.sink(self.stream, block)

    @property
    def text(self) -> str:
        return "".join(self.parts)


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
    readers = [
        _StreamReader(os.dup(proc.stdout.fileno()), "stdout", on_output, max_output_bytes, on_exceeded),
        _StreamReader(os.dup(proc.stderr.fileno()), "stderr", on_output, max_output_bytes, on_exceeded),
    ]
    proc.stdout.close()
    proc.stderr.close()
    for reader in readers:
        reader.start()
    writer = _start_stdin_writer(proc, stdin_data)
    signal.on_abort(terminate_tree)
    try:
        proc.wait()
        for reader in readers:
            reader.join()
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
    stdout_reader, stderr_reader = readers
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
