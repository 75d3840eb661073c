"""Stopping a run that another process runs: SIGTERM to that process, only when it surely is its runner.

A run started by ``lobster run`` (or resumed by ``lobster resume``) in another terminal has no
``RunContext`` in the TUI; the only way to stop it is the way a person at that terminal would,
a signal: the CLI aborts the run on SIGTERM (R-CLI-21), ends its step's process tree, prints the
``runtime_error`` envelope and logs the run as ``cancelled``.

Signalling a pid read from a file is safe only when that pid is still the runner, so
:func:`stop_other_runner` sends nothing unless all of these hold:

- the log's newest segment has not finished and was logged on this host (``run_started``'s
  ``pid`` and ``host``), by a process other than this one;
- a pidfd for the pid is open before anything is checked, and the signal goes through it: should
  the process exit and its pid be reused meanwhile, the signal reaches nobody (``pidfd_open`` is
  Linux 5.3+; without it nothing is sent);
- the process belongs to this user, started no later than that segment (else the pid was reused),
  and its command line is the ``lobster`` CLI running ``run`` or ``resume`` (``lobster`` or
  ``python -m lobster_tui.cli``). Not ``lobster-tui``, not a library host: there one process runs
  many runs, and SIGTERM would end them all.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence

from .run_log import newest_segment, process_started_before, this_host
from .state import StateStore

_CLI_SUBCOMMANDS = frozenset({"run", "resume"})


def is_lobster_cli_run(argv: Sequence[str]) -> bool:
    """True for the command line of ``lobster run|resume ...``: the ``lobster`` script (run by its
    interpreter, as a shebang does) or ``python -m lobster_tui.cli``; anything else, including a
    Python started with other options first, is not recognised."""
    args = list(argv)
    if args and os.path.basename(args[0]).startswith("python"):
        args = args[1:]  # the interpreter
    if args[:2] == ["-m", "lobster_tui.cli"]:
        rest = args[2:]
    elif args and os.path.basename(args[0]) == "lobster":
        rest = args[1:]
    else:
        return False
    # The subcommand comes first (the CLI takes no options before it).
    return bool(rest) and rest[0] in _CLI_SUBCOMMANDS


def _command_line(pid: int) -> list[str]:
    with open(f"/proc/{pid}/cmdline", "rb") as handle:
        raw = handle.read()
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


def stop_other_runner(state: StateStore, run_id: str) -> str | None:
    """Send SIGTERM to the ``lobster`` CLI process running ``run_id``.

    Returns None once the signal is sent, else one sentence saying why nothing was sent.
    """
    segment = newest_segment(state, run_id)
    if segment is None:
        return "the run is not running (it finished, waits at a checkpoint, or its log is gone)"
    pid, host = segment.get("pid"), segment.get("host")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 1:
        return "its log does not say which process runs it"
    if host is not None and host != this_host():
        return f"it runs on another machine ({host})"
    if pid == os.getpid():
        return "it runs in this lobster-tui, but not as a run this app knows"
    pidfd_open = getattr(os, "pidfd_open", None)
    send = getattr(signal, "pidfd_send_signal", None)
    if pidfd_open is None or send is None:
        return "this system cannot signal a process safely (no pidfd)"
    try:
        pidfd = pidfd_open(pid)
    except ProcessLookupError:
        return f"its process ({pid}) is gone"
    except OSError as error:
        return f"cannot signal its process ({pid}): {error.strerror or error}"
    try:
        # Checked with the pidfd held: from here the pid cannot be handed to another process unseen.
        try:
            owner = os.stat(f"/proc/{pid}").st_uid
            argv = _command_line(pid)
        except OSError:
            return f"its process ({pid}) is gone"
        if owner != os.getuid():
            return f"its process ({pid}) belongs to another user"
        if not process_started_before(pid, segment.get("time")):
            return f"process {pid} is not its runner any more (the pid was reused)"
        if not is_lobster_cli_run(argv):
            return f"process {pid} is not a `lobster run` or `lobster resume` ({' '.join(argv)[:80]})"
        try:
            send(pidfd, signal.SIGTERM)
        except ProcessLookupError:
            return f"its process ({pid}) ended meanwhile"
        except OSError as error:
            return f"cannot signal its process ({pid}): {error.strerror or error}"
        return None
    finally:
        os.close(pidfd)
