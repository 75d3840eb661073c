"""``exec``: run a program or a shell line and turn its output into items (spec §5.1)."""

from __future__ import annotations

import os
from typing import Any

from ...errors import LobsterRuntimeError
from ...jsvalues import dumps_compact, js_string, js_truthy, loads
from ...process import run_process, shell_argv
from ..base import CommandContext, CommandResult, command, positionals


def _stdin_payload(items: list[Any], mode: str) -> bytes:
    if mode == "json":
        text = dumps_compact(items)
    elif mode == "jsonl":
        text = "".join(dumps_compact(item) + "\n" for item in items)
    elif mode == "raw":
        text = "\n".join(item if isinstance(item, str) else dumps_compact(item) for item in items)
    else:
        raise LobsterRuntimeError(f"exec --stdin must be raw, json, or jsonl (got {mode})")
    return text.encode("utf-8")


@command(
    "exec",
    description="Run an OS command (argv, or a shell line with --shell)",
    args_schema={
        "type": "object",
        "properties": {
            "json": {"type": "boolean", "description": "parse stdout as JSON"},
            "shell": {"type": "string", "description": "shell line to run"},
            "stdin": {"type": "string", "enum": ["raw", "json", "jsonl"]},
            "_": {"type": "array", "items": {"type": "string"}},
        },
    },
    examples=["exec --json --shell 'inbox list --json'", "exec --stdin json --shell 'inbox categorize --json'"],
    side_effects=["local_exec"],
)
def exec_command(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Run the command; ``--json`` parses stdout, otherwise each non-empty line is an item."""
    rest = positionals(args)
    shell_flag = args.get("shell")
    if not rest and not (isinstance(shell_flag, str) and shell_flag):
        raise LobsterRuntimeError("exec requires a command")
    use_shell = js_truthy(shell_flag) or (len(rest) == 1 and any(c.isspace() for c in rest[0]))
    if use_shell:
        line = shell_flag if isinstance(shell_flag, str) and shell_flag else rest[0]
        argv = shell_argv(line, ctx.env)
        label = line
    else:
        argv = rest
        label = rest[0]

    stdin_mode = args.get("stdin")
    stdin_data = None
    if stdin_mode is not None:
        stdin_data = _stdin_payload(items, js_string(stdin_mode).lower())
    try:
        result = run_process(
            argv,
            env=ctx.env,
            cwd=ctx.cwd or os.getcwd(),
            stdin_data=stdin_data,
            signal=ctx.signal,
            on_output=ctx.on_output,
        )
    except FileNotFoundError:
        if use_shell:
            raise LobsterRuntimeError("exec shell not found; check LOBSTER_SHELL or ComSpec") from None
        raise LobsterRuntimeError(f"exec command not found: {label}") from None
    except PermissionError:
        raise LobsterRuntimeError(f"exec command not found: {label}") from None
    if result.returncode != 0:
        detail = result.stderr.strip() or result.stdout.strip() or label
        code = "null" if result.returncode is None else str(result.returncode)
        raise LobsterRuntimeError(f"exec failed ({code}): {detail}")
    if js_truthy(args.get("json")):
        text = result.stdout.strip()
        if not text:
            return CommandResult(output=[None])
        try:
            value = loads(text)
        except ValueError as error:
            raise LobsterRuntimeError(f"exec --json could not parse stdout as JSON: {error}") from None
        return CommandResult(output=value if isinstance(value, list) else [value])
    lines = [line[:-1] if line.endswith("\r") else line for line in result.stdout.split("\n")]
    return CommandResult(output=[line for line in lines if line])


COMMANDS = [exec_command]
