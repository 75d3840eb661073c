"""``lobster``: the command-line shell over the core runner (spec §3).

This module parses arguments the way the reference CLI does, calls :mod:`lobster_tui.core.runner`,
and prints: the tool envelope in tool mode and for ``resume``, human-readable JSON otherwise. No
traceback ever reaches the user: unexpected failures become an error envelope or an ``Error:`` line.
"""

from __future__ import annotations

import os
import re
import signal as signals
import sys
from collections.abc import Callable
from typing import Any, TextIO

from . import __version__
from .core import envelope as wire
from .core.errors import LobsterError, LobsterParseError, LobsterRuntimeError
from .core.jsvalues import UNDEFINED, dumps_pretty, loads

MAIN_HELP = """\
lobster - typed JSON pipelines and workflow files with approval and input checkpoints

Usage:
  lobster '<pipeline>'                               run an inline pipeline (human mode)
  lobster run --mode tool '<pipeline>'               run and print one JSON envelope
  lobster run [--mode tool] <file.lobster>           run a workflow file (.lobster .yaml .yml .json)
  lobster run --file <file> --args-json '{...}'      run a workflow file with args
  lobster run --dry-run <file|pipeline>              print the plan to stderr, run nothing
  lobster graph <file> [--format mermaid|dot|ascii]  draw a workflow's steps
  lobster resume --token <t> --approve yes|no        decide an approval
  lobster resume --id <approvalId> --approve yes|no  decide an approval by its short id
  lobster resume --token <t> --response-json '<j>'   answer an input request
  lobster resume (--token <t> | --id <id>) --cancel  drop a checkpoint
  lobster runs [--json]                              list runs from the state directory
  lobster logs <runId> [--follow] [--json]           print or follow one run's events
  lobster audit [--json]                             every decision made through this runner
  lobster doctor                                     check that tool mode works
  lobster version                                    print the version
  lobster help <command>                             help for a pipeline command

Host limits (run and resume): --timeout-ms N (default 20000, 0 = none),
  --max-stdout-bytes N (default 512000, 0 = none), --cwd <relative dir>.

Modes:
  human (default)  results as pretty JSON; prompts on a terminal
  tool             exactly one JSON envelope on stdout; never prompts

Examples:
  lobster "exec --json --shell 'echo [1,2,3]' | where 0>0"
  lobster run --mode tool "exec --json --shell 'inbox list --json' | approve --preview-from-stdin --limit 5 --prompt 'Apply?'"

Commands:
  exec, head, json, pick, table, where, approve, ask, openclaw.agent, openclaw.invoke, llm.invoke,
  llm_task.invoke, state.get, state.set, diff.last, commands.list, workflows.list, workflows.run, graph

State directory: $LOBSTER_STATE_DIR, default ~/.lobster/state
"""

_SIGNAL_EXIT = {"SIGHUP": 129, "SIGINT": 130, "SIGQUIT": 131, "SIGTERM": 143}
_WORKFLOW_SUFFIXES = (".lobster", ".yaml", ".yml", ".json")


class _Io:
    """The streams the CLI writes to, swappable in tests."""

    def __init__(self, stdout: TextIO, stderr: TextIO, stdin: TextIO | None) -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.stdin = stdin

    def out(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

    def err(self, text: str) -> None:
        self.stderr.write(text)
        self.stderr.flush()

    def envelope(self, env: dict[str, Any]) -> int:
        self.out(dumps_pretty(env) + "\n")
        return wire.exit_code(env)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    for stream in (sys.stdout, sys.stderr):
        # Undecodable argv bytes and "\ud800" answers reach the output as lone surrogates; inside
        # JSON strings backslashreplace writes them as the \uXXXX escapes JSON itself would use.
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    sys.exit(run_cli(sys.argv[1:] if argv is None else argv))


def run_cli(argv: list[str], stdout: TextIO | None = None, stderr: TextIO | None = None,
            stdin: TextIO | None = None) -> int:
    """Run one CLI invocation and return its exit code."""
    io = _Io(stdout or sys.stdout, stderr or sys.stderr, stdin if stdin is not None else sys.stdin)
    if not argv or any(arg in ("-h", "--help") for arg in argv):
        io.out(MAIN_HELP)
        return 0
    head, rest = argv[0], argv[1:]
    if head in ("version", "--version", "-v"):
        io.out(__version__ + "\n")
        return 0
    if head == "help":
        return _help(rest, io)
    handlers: dict[str, Callable[[list[str], _Io], int]] = {
        "doctor": _doctor,
        "graph": _graph,
        "run": _run,
        "resume": _resume,
        "runs": _runs,
        "logs": _logs,
        "audit": _audit,
    }
    handler = handlers.get(head)
    try:
        if handler is None:
            return _run(argv, io)
        return handler(rest, io)
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # the last guard: a bug must not print a traceback
        message = f"internal error: {type(error).__name__}: {error}"
        try:
            if head == "resume" or _tool_mode_requested(argv):
                # Tool mode and resume promise exactly one envelope on stdout, even for our bugs.
                return io.envelope(wire.error("runtime_error", message))
            io.err(f"Error: {message}\n")
        except (OSError, ValueError):
            pass  # stdout or stderr is gone (closed pipe): nothing left to tell
        return 1


def _tool_mode_requested(argv: list[str]) -> bool:
    """Whether ``run`` would have selected tool mode (R-CLI-5: the last ``--mode`` wins)."""
    mode = ""
    for index, token in enumerate(argv):
        if token.startswith("--mode="):
            mode = token[len("--mode=") :]
        elif token == "--mode" and index + 1 < len(argv):
            mode = argv[index + 1]
    return mode == "tool"


def _help(rest: list[str], io: _Io) -> int:
    if not rest:
        io.out(MAIN_HELP)
        return 0
    from .core.pipeline.commands import default_registry

    spec = default_registry().get(rest[0])
    if spec is None:
        io.err(f"Unknown command: {rest[0]}\n")
        return 2
    io.out(spec.help())
    return 0


# -- shared option parsing -------------------------------------------------------------------------


def _take_value(args: list[str], index: int, name: str) -> tuple[str | None, int]:
    """``--name value`` or ``--name=value``; a flag at the end leaves the setting unchanged."""
    token = args[index]
    if token.startswith(f"--{name}="):
        return token[len(name) + 3 :], index + 1
    if index + 1 < len(args):
        return args[index + 1], index + 2
    return None, index + 1


class _HostLimits:
    """``--timeout-ms``, ``--max-stdout-bytes`` and ``--cwd`` ("Our choices" 4, R-HOST-2/4/5)."""

    def __init__(self) -> None:
        from .core.runner import DEFAULT_MAX_STDOUT_BYTES, DEFAULT_TIMEOUT_MS

        self.timeout_ms: int | None = DEFAULT_TIMEOUT_MS
        self.max_stdout_bytes: int | None = DEFAULT_MAX_STDOUT_BYTES
        self.cwd: str | None = None

    def take(self, args: list[str], index: int) -> int | None:
        """Consume a host flag at ``index``; returns the next index, or None if not a host flag."""
        token = args[index]
        for name, attr, minimum in (("timeout-ms", "timeout_ms", 200), ("max-stdout-bytes", "max_stdout_bytes", 1024)):
            if token == f"--{name}" or token.startswith(f"--{name}="):
                value, nxt = _take_value(args, index, name)
                if value is not None:
                    if not value.strip().isdigit():
                        raise LobsterParseError(f"--{name} must be a non-negative integer")
                    number = int(value)
                    setattr(self, attr, None if number == 0 else max(number, minimum))
                return nxt
        if token == "--cwd" or token.startswith("--cwd="):
            value, nxt = _take_value(args, index, "cwd")
            if value is not None:
                self.cwd = value
            return nxt
        return None

    def resolve_cwd(self) -> str:
        base = os.getcwd()
        if not self.cwd:
            return base
        if os.path.isabs(self.cwd):
            raise LobsterParseError("cwd must be a relative path")
        if "\0" in self.cwd:
            raise LobsterParseError("cwd must not contain a NUL byte")
        resolved = os.path.realpath(os.path.join(base, self.cwd))
        if resolved != os.path.realpath(base) and not resolved.startswith(os.path.realpath(base) + os.sep):
            raise LobsterParseError("cwd must stay within the gateway working directory")
        return resolved


def _install_signal_handlers(abort: Callable[[str], None]) -> list[str]:
    """R-CLI-21: the first signal aborts the run, a second force-kills every child tree."""
    from .core.process import kill_all_now

    received: list[str] = []

    def handler(signum: int, _frame: Any) -> None:
        name = signals.Signals(signum).name
        received.append(name)
        if len(received) == 1:
            abort(f"Received {name}")
        else:
            kill_all_now()

    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"):
        try:
            signals.signal(getattr(signals, name), handler)
        except (ValueError, OSError, AttributeError):
            pass  # not the main thread, or not on this platform
    return received


def _context(io: _Io, mode: str, limits: _HostLimits, cwd: str) -> Any:
    from .core.runner import RunContext, state_store_for

    rc = RunContext(
        state=state_store_for(None, dict(os.environ)),
        env=dict(os.environ),
        cwd=cwd,
        mode="tool" if mode == "tool" else "human",
        stdin=io.stdin,
        stdout=io.stdout,
        stderr=io.stderr,
        timeout_ms=limits.timeout_ms,
        max_stdout_bytes=limits.max_stdout_bytes,
    )
    from .core.run_log import log_subscriber_for

    subscriber = log_subscriber_for(rc.state)
    if subscriber is not None:
        rc.subscribers.append(subscriber)
    return rc


# -- run ---------------------------------------------------------------------------------------------


def _resolve_workflow(path: str, cwd: str) -> str:
    from .core.workflow.loader import resolve_workflow_path

    try:
        return resolve_workflow_path(path, cwd)
    except ValueError as error:  # a NUL byte: no such path can exist
        raise LobsterRuntimeError(f"Workflow path is invalid: {error}") from None


def _try_workflow(path: str, cwd: str) -> str | None:
    try:
        return _resolve_workflow(path, cwd)
    except (LobsterError, OSError):
        return None


def _run(args: list[str], io: _Io) -> int:
    mode = "human"
    file_path: str | None = None
    args_json: str | None = None
    dry_run = False
    rest: list[str] = []
    limits = _HostLimits()
    index = 0
    try:
        while index < len(args):
            token = args[index]
            if token == "--mode" or token.startswith("--mode="):
                value, index = _take_value(args, index, "mode")
                if value is not None or token.startswith("--mode="):
                    mode = value or ""
                continue
            if token == "--file" or token.startswith("--file="):
                value, index = _take_value(args, index, "file")
                if value is not None:
                    file_path = value
                continue
            if token == "--args-json" or token.startswith("--args-json="):
                value, index = _take_value(args, index, "args-json")
                if value is not None:
                    args_json = value
                continue
            if token == "--dry-run" and not rest:
                dry_run = True
                index += 1
                continue
            host = limits.take(args, index)
            if host is not None:
                index = host
                continue
            rest.append(token)
            index += 1
        cwd = limits.resolve_cwd()
    except LobsterParseError as error:
        return _report(io, mode, error, pipeline=True)
    tool = mode == "tool"

    workflow: str | None = None
    if file_path is not None:
        try:
            workflow = _resolve_workflow(file_path, os.getcwd())
        except (LobsterError, OSError) as error:
            # The reference crashes here (S-5); we report it as an error, exit 1, like its exit code.
            message = error.message if isinstance(error, LobsterError) else str(error)
            return _report(io, mode, LobsterRuntimeError(message), pipeline=False)
    else:
        positional = [t for t in rest if t != "--dry-run"]
        if len(rest) == 1 and "|" not in rest[0]:
            workflow = _try_workflow(rest[0], os.getcwd())
        elif len(positional) == 1 and len(rest) > 1 and "|" not in positional[0]:
            candidate = _try_workflow(positional[0], os.getcwd())
            if candidate is not None:
                workflow, dry_run = candidate, True

    from .core.runner import run_pipeline, run_workflow

    rc = _context(io, mode, limits, cwd)
    # A signal is someone stopping the run: its log says cancelled (the envelope stays runtime_error).
    received = _install_signal_handlers(lambda reason: rc.signal.abort(reason, stop=True))
    if workflow is not None:
        provided: Any = None
        if args_json is not None:
            try:
                provided = loads(args_json)
            except (ValueError, RecursionError):  # nesting deeper than the parser's stack is refused too
                return _report(io, mode, LobsterParseError("run --args-json must be valid JSON"), pipeline=False)
        outcome = run_workflow(workflow, rc, args=provided, dry_run=dry_run)
        code = _print_workflow(io, tool, outcome)
    else:
        outcome = run_pipeline(" ".join(rest), rc, dry_run=dry_run)
        code = _print_pipeline(io, tool, outcome, dry_run=dry_run)
    return _SIGNAL_EXIT.get(received[0], code) if received else code


def _report(io: _Io, mode: str, error: LobsterError, *, pipeline: bool) -> int:
    if mode == "tool":
        return io.envelope(wire.error(error.error_type, error.message))
    if isinstance(error, LobsterParseError):
        if error.message == "run --args-json must be valid JSON" or not pipeline:
            io.err(f"{error.message}\n" if error.message.startswith("run --args-json") else f"Error: {error.message}\n")
        else:
            io.err(f"Parse error: {error.message}\n")
        return 2
    io.err(f"Error: {error.message}\n")
    return 1


def _print_workflow(io: _Io, tool: bool, outcome: Any) -> int:
    if tool:
        return io.envelope(outcome.envelope())
    if outcome.status == "error":
        io.err(f"Error: {outcome.error_message}\n")
        return 2 if outcome.error_type == "parse_error" else 1
    if outcome.status in ("needs_approval", "needs_input"):
        io.out(dumps_pretty({
            "status": outcome.status,
            "output": [],
            "requiresApproval": outcome.requires_approval,
            "requiresInput": outcome.requires_input,
        }) + "\n")
    elif outcome.output:
        io.out(dumps_pretty(outcome.output) + "\n")
    return 0


def _print_pipeline(io: _Io, tool: bool, outcome: Any, *, dry_run: bool = False) -> int:
    if tool:
        return io.envelope(outcome.envelope())
    if outcome.status == "error":
        if outcome.error_type == "parse_error":
            io.err(f"Parse error: {outcome.error_message}\n")
            return 2
        io.err(f"Error: {outcome.error_message}\n")
        return 1
    if not outcome.rendered and not dry_run:
        io.out(dumps_pretty(outcome.output) + "\n")
    return 0


# -- resume ------------------------------------------------------------------------------------------

_BOOL_WORDS = {"1": True, "true": True, "yes": True, "y": True, "0": False, "false": False, "no": False, "n": False}


def _resume(args: list[str], io: _Io) -> int:
    token: str | None = None
    approval_id: str | None = None
    approve: str | None = None
    response_json: str | None = None
    cancel = False
    limits = _HostLimits()
    index = 0
    try:
        while index < len(args):
            arg = args[index]
            name = arg[2:].split("=", 1)[0] if arg.startswith("--") else ""
            if name in ("token", "id", "approve", "decision", "response-json"):
                value, index = _take_value(args, index, name)
                if value is None:
                    continue
                if name == "token":
                    token = value
                elif name == "id":
                    approval_id = value
                elif name in ("approve", "decision"):
                    approve = value
                else:
                    response_json = value
                continue
            if name == "cancel":
                if "=" in arg:
                    word = arg.split("=", 1)[1]
                    index += 1
                elif index + 1 < len(args) and not args[index + 1].startswith("--"):
                    word = args[index + 1]
                    index += 2
                else:
                    word = "true"
                    index += 1
                parsed = _BOOL_WORDS.get(word.strip().lower())
                if parsed is None:
                    raise LobsterParseError("resume --cancel must be true or false")
                cancel = parsed
                continue
            host = limits.take(args, index)
            index = host if host is not None else index + 1
        if token is None and approval_id is None:
            raise LobsterParseError("resume requires --token or --id")
        intents = sum([bool(approve), response_json is not None, cancel])
        if intents > 1:
            raise LobsterParseError("resume accepts only one of --approve, --response-json, or --cancel")
        if intents == 0:
            raise LobsterParseError("resume requires --approve yes|no, --response-json, or --cancel")
        response: Any = UNDEFINED
        if response_json is not None:
            try:
                response = loads(response_json)
            except (ValueError, RecursionError):  # nesting deeper than the parser's stack is refused too
                raise LobsterParseError("resume --response-json must be valid JSON") from None
        approved: bool | None = None
        if approve:
            word = approve.strip().lower()
            if word not in ("yes", "y", "no", "n"):
                raise LobsterParseError("resume --approve must be yes or no")
            approved = word in ("yes", "y")
        cwd = limits.resolve_cwd()
    except LobsterParseError as error:
        return io.envelope(wire.error(error.error_type, error.message))

    from .core.runner import resume

    rc = _context(io, "tool", limits, cwd)
    received = _install_signal_handlers(lambda reason: rc.signal.abort(reason, stop=True))
    outcome = resume(rc, token=token, approval_id=approval_id, approved=approved, response=response, cancel=cancel)
    code = io.envelope(outcome.envelope())
    return _SIGNAL_EXIT.get(received[0], code) if received else code


# -- doctor, graph, runs, logs -------------------------------------------------------------------------


def _doctor(args: list[str], io: _Io) -> int:
    from .core.runner import RunContext, run_pipeline, state_store_for

    rc = RunContext(state=state_store_for(None), env=dict(os.environ), mode="tool")
    outcome = run_pipeline("exec --json --shell 'echo [1]'", rc)
    if outcome.status != "ok":
        return io.envelope(wire.error("doctor_error", outcome.error_message or "doctor failed"))
    report: dict[str, Any] = {"toolMode": True, "protocolVersion": 1, "version": __version__}
    if args:
        report["notes"] = list(args)
    from .core.doctor import state_dir_warnings

    warnings = state_dir_warnings(rc.state.root)
    for warning in warnings:
        io.err(f"[WARN] {warning}\n")
    return io.envelope(wire.success("ok", [report]))


def _graph(args: list[str], io: _Io) -> int:
    file_path: str | None = None
    fmt = "mermaid"
    args_json: str | None = None
    positional: list[str] = []
    index = 0
    while index < len(args):
        token = args[index]
        for name in ("file", "format", "args-json"):
            if token == f"--{name}" or token.startswith(f"--{name}="):
                value, index = _take_value(args, index, name)
                if name == "file" and value is not None:
                    file_path = value
                elif name == "format":
                    fmt = value or "mermaid"
                elif name == "args-json" and value is not None:
                    args_json = value
                break
        else:
            positional.append(token)
            index += 1
    if file_path is None and positional:
        file_path = positional[0]
    if file_path is None:
        io.err("graph requires a workflow file path (use --file <path>)\n")
        return 2
    if fmt not in ("mermaid", "dot", "ascii"):
        io.err("graph --format must be one of: mermaid, dot, ascii\n")
        return 2
    provided: Any = {}
    if args_json is not None:
        try:
            provided = loads(args_json)
        except (ValueError, RecursionError):
            io.err("graph --args-json must be valid JSON\n")
            return 2
        if not isinstance(provided, dict):
            io.err("graph --args-json must be a JSON object\n")
            return 2
    from .core.workflow.executor import load_and_validate
    from .core.workflow.graph import render_graph
    from .core.workflow.loader import resolve_args

    try:
        path = _resolve_workflow(file_path, os.getcwd())
        doc = load_and_validate(path)
        io.out(render_graph(doc, resolve_args(doc, provided), fmt) + "\n")
    except (LobsterError, OSError) as error:
        io.err(f"Error: {error.message if isinstance(error, LobsterError) else error}\n")
        return 1
    return 0


def _runs(args: list[str], io: _Io) -> int:
    from .core.run_log import runs_command

    return runs_command(args, io.stdout, io.stderr)


def _audit(args: list[str], io: _Io) -> int:
    from .core.audit import audit_command

    return audit_command(args, io.stdout, io.stderr)


def _logs(args: list[str], io: _Io) -> int:
    from .core.run_log import logs_command

    return logs_command(args, io.stdout, io.stderr)


_SHIM_SAFE = re.compile(r"^[A-Za-z0-9_\-./:=@]+$")


def _shim(command: str) -> None:
    """``openclaw.invoke ARGS`` runs the pipeline ``openclaw.invoke ARGS`` in human mode (§3)."""
    quoted = [arg if _SHIM_SAFE.match(arg) else "'" + arg.replace("'", "'\\''") + "'" for arg in sys.argv[1:]]
    sys.exit(run_cli(["run", " ".join([command, *quoted])]))


def openclaw_invoke_shim() -> None:
    """Console script ``openclaw.invoke``."""
    _shim("openclaw.invoke")


def clawd_invoke_shim() -> None:
    """Console script ``clawd.invoke`` (the legacy name)."""
    _shim("clawd.invoke")


if __name__ == "__main__":
    main()
