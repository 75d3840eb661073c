"""``openclaw.agent``: run one OpenClaw agent turn through the ``openclaw`` CLI (spec §5.18).

Agent selection, sessions, models and credentials all stay with the OpenClaw CLI; this command only
builds its argv (never a shell line) and returns the JSON object it prints.
"""

from __future__ import annotations

from typing import Any

from ...errors import LobsterRuntimeError
from ...jsvalues import UNDEFINED, dumps_compact, js_number_str, js_string, js_to_number, loads
from ..base import CommandContext, CommandResult, CommandSpec, command
from .invoke import first_present

OUTPUT_LIMIT_BYTES = 10 * 1024 * 1024
"""Per-stream output cap; past it the CLI's process tree is killed (R-PROC-3)."""

_ARGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "agent": {"type": "string", "description": "Configured OpenClaw agent id"},
        "prompt": {"type": "string", "description": "Message for the agent"},
        "message": {"type": "string", "description": "Alias for prompt"},
        "model": {"type": "string", "description": "OpenClaw model override for this turn"},
        "sessionKey": {"type": "string", "description": "OpenClaw session key"},
        "session-key": {"type": "string", "description": "Alias for sessionKey"},
        "sessionId": {"type": "string", "description": "OpenClaw session id"},
        "session-id": {"type": "string", "description": "Alias for sessionId"},
        "thinking": {"type": "string", "description": "OpenClaw thinking level"},
        "timeout": {"type": "number", "description": "Agent timeout in seconds"},
        "local": {"type": "boolean", "description": "Force OpenClaw embedded execution"},
        "_": {"type": "array", "items": {"type": "string"}},
    },
    "required": [],
}

_HELP = (
    "openclaw.agent — run a configured OpenClaw agent turn\n\n"
    "Usage:\n"
    '  openclaw.agent --agent ops --prompt "Summarize logs"\n'
    '  openclaw.agent --agent ops --session-key incident-42 --model openai/gpt-5.4 --prompt "Continue"\n'
    '  ... | openclaw.agent --agent ops --prompt "Review this input"\n\n'
    "Notes:\n"
    "  - Delegates agent, session, model, and auth behavior to the installed OpenClaw CLI.\n"
    "  - Requires --agent, --session-key, or --session-id.\n"
    "  - Pipeline input is appended to the message as JSONL under a labeled section.\n"
    "  - Returns the structured OpenClaw --json response unchanged.\n"
)


def _optional_string(value: Any) -> str | None:
    """``String(value).trim()`` when given and non-blank, else None."""
    if value is None or value is UNDEFINED:
        return None
    return js_string(value).strip() or None


def build_argv(prompt: str, items: list[Any], args: dict[str, Any]) -> list[str]:
    """The ``openclaw agent --json …`` arguments (without the executable)."""
    agent = _optional_string(args.get("agent"))
    session_key = _optional_string(first_present(args.get("sessionKey"), args.get("session-key")))
    session_id = _optional_string(first_present(args.get("sessionId"), args.get("session-id")))
    if agent is None and session_key is None and session_id is None:
        raise LobsterRuntimeError("openclaw.agent requires --agent, --session-key, or --session-id")
    message = prompt
    if items:
        message += "\n\nPipeline input (JSONL):\n" + "\n".join(dumps_compact(item) for item in items)
    argv = ["agent", "--json", "--message", message]
    options = (
        ("--agent", agent),
        ("--model", _optional_string(args.get("model"))),
        ("--session-key", session_key),
        ("--session-id", session_id),
        ("--thinking", _optional_string(args.get("thinking"))),
    )
    for flag, value in options:
        if value is not None:
            argv += [flag, value]
    if args.get("timeout") is not None:
        timeout = js_to_number(args["timeout"])
        if not (isinstance(timeout, int) or timeout.is_integer()) or timeout < 0:
            raise LobsterRuntimeError("openclaw.agent --timeout must be a non-negative integer in seconds")
        argv += ["--timeout", js_number_str(timeout)]
    # Only a bare --local counts: a value such as --local=false is not the boolean true.
    if args.get("local") is True:
        argv.append("--local")
    return argv


@command(
    "openclaw.agent",
    description="Run a configured OpenClaw agent turn",
    args_schema=_ARGS_SCHEMA,
    side_effects=["calls_openclaw_agent"],
    help_text=_HELP,
)
def openclaw_agent(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Run ``openclaw agent --json`` and emit its JSON object as the single item."""
    from ...process import run_process

    prompt = _optional_string(first_present(args.get("prompt"), args.get("message")))
    if prompt is None:
        prompt = " ".join(js_string(part) for part in args.get("_") or []).strip()
    if not prompt:
        raise LobsterRuntimeError("openclaw.agent requires --prompt, --message, or positional text")
    argv = build_argv(prompt, items, args)
    executable = _optional_string(ctx.env.get("LOBSTER_OPENCLAW_BIN")) or "openclaw"
    try:
        result = run_process(
            [executable, *argv],
            env=ctx.env,
            cwd=ctx.cwd,
            stdin_data=None,
            signal=ctx.signal,
            on_output=ctx.on_output,
            max_output_bytes=OUTPUT_LIMIT_BYTES,
        )
    except FileNotFoundError:
        raise LobsterRuntimeError("openclaw.agent could not find the OpenClaw CLI") from None
    except OSError as error:
        raise LobsterRuntimeError(f"openclaw.agent failed: {error}") from None
    if result.output_exceeded is not None:
        raise LobsterRuntimeError(f"openclaw.agent output exceeded {OUTPUT_LIMIT_BYTES} bytes")
    if result.returncode != 0:
        detail = (result.stderr or result.stdout or f"exited with code {js_string(result.returncode)}").strip()
        raise LobsterRuntimeError(f"openclaw.agent failed: {detail}")
    try:
        response = loads(result.stdout.strip() or "null")
    except ValueError:
        response = None
    if not isinstance(response, dict):
        raise LobsterRuntimeError("openclaw.agent expected JSON output from `openclaw agent --json`")
    return CommandResult(output=[response])


COMMANDS: list[CommandSpec] = [openclaw_agent]
