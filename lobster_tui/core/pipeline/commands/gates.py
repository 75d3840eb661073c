"""``approve`` and ``ask``: the commands that halt a pipeline for a person (spec §5.2, §5.3)."""

from __future__ import annotations

import math
import re
import select
from typing import Any

from ...errors import LobsterRuntimeError
from ...jsvalues import UNDEFINED, dumps_compact, dumps_pretty, js_to_number, js_truthy, loads
from ..base import CommandContext, CommandResult, command

DEFAULT_ASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {"type": "string", "enum": ["approve", "reject", "redraft"]},
        "feedback": {"type": "string", "description": "Feedback for redraft"},
    },
    "required": ["decision"],
}
SUBJECT_LIMIT = 2000
_YES = re.compile(r"^y(es)?$", re.IGNORECASE)


def read_line_with_timeout(ctx: CommandContext, prompt: str) -> str:
    """Write ``prompt`` and read one line; ``LOBSTER_APPROVAL_INPUT_TIMEOUT_MS`` bounds it (R-PROC-9)."""
    ctx.stdout.write(prompt)
    ctx.stdout.flush()
    stdin = ctx.stdin
    if stdin is None:
        return ""
    limit = input_timeout_ms(ctx.env)
    if limit is not None:
        ready, _, _ = select.select([stdin], [], [], limit / 1000)
        if not ready:
            raise LobsterRuntimeError(f"Timed out waiting for input ({limit}ms)")
    return stdin.readline().rstrip("\n")


def input_timeout_ms(env: dict[str, str]) -> int | None:
    raw = env.get("LOBSTER_APPROVAL_INPUT_TIMEOUT_MS")
    if raw is None:
        return None
    value = js_to_number(raw)
    if isinstance(value, float) and not math.isfinite(value) or value <= 0:
        return None
    return math.floor(value)


def approve_preview(items: list[Any], limit_flag: Any) -> str:
    """The preview text of `approve --preview-from-stdin` for the first `limit` items."""
    limit = js_to_number(limit_flag) if limit_flag is not None else 5
    if isinstance(limit, float) and math.isnan(limit):
        limit = 5
    count = max(0, math.floor(limit)) if math.isfinite(limit) else (len(items) if limit > 0 else 0)
    shown = items[:count]
    if not shown:
        return ""
    if all(isinstance(item, str) for item in shown):
        return "\n".join(shown)
    return dumps_pretty(shown)


def _flag(args: dict[str, Any], *names: str) -> Any:
    for name in names:
        if name in args:
            return args[name]
    return None


@command(
    "approve",
    description="Halt for an approval; in tool mode returns a resume token",
    args_schema={
        "type": "object",
        "properties": {
            "prompt": {"type": "string"},
            "emit": {"type": "boolean"},
            "preview-from-stdin": {"type": "boolean"},
            "limit": {"type": "number"},
        },
    },
    examples=["approve --prompt 'Send these?'", "approve --preview-from-stdin --limit 5 --prompt 'Apply?'"],
    resume_safe_before_input=True,
)
def approve(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Emit an approval request (tool mode, non-TTY, ``--emit``) or ask ``[y/N]`` on a TTY."""
    prompt = args.get("prompt")
    prompt = prompt if isinstance(prompt, str) else "Approve?"
    emit = js_truthy(args.get("emit")) or ctx.mode == "tool" or not ctx.interactive
    if emit:
        request: dict[str, Any] = {"type": "approval_request", "prompt": prompt, "items": list(items)}
        if js_truthy(_flag(args, "preview-from-stdin", "previewFromStdin")):
            preview = approve_preview(items, _flag(args, "limit", "previewLimit", "preview-limit"))
            if preview:
                request["preview"] = preview
        return CommandResult(output=[request], halt=True)
    answer = read_line_with_timeout(ctx, f"{prompt} [y/N] ")
    if not _YES.match(answer.strip()):
        raise LobsterRuntimeError("Not approved")
    return CommandResult(output=list(items))


def _ask_schema(args: dict[str, Any]) -> Any:
    from ...schema import SchemaCompileError, compile_schema

    raw = args.get("schema")
    if raw is None or raw is True:
        schema: Any = DEFAULT_ASK_SCHEMA
    else:
        try:
            schema = loads(raw)
        except ValueError:
            raise LobsterRuntimeError("ask --schema must be valid JSON") from None
        if not isinstance(schema, dict):
            raise LobsterRuntimeError("ask --schema must decode to a JSON schema object")
    try:
        compile_schema(schema)
    except SchemaCompileError:
        raise LobsterRuntimeError("ask response schema is invalid") from None
    return schema


def _ask_subject(items: list[Any], args: dict[str, Any]) -> Any:
    if not js_truthy(_flag(args, "subject-from-stdin", "subjectFromStdin")) or not items:
        return UNDEFINED
    text = "\n".join(item if isinstance(item, str) else dumps_compact(item) for item in items)
    return {"text": text[:SUBJECT_LIMIT]}


@command(
    "ask",
    description="Ask a structured question answered with JSON checked against a JSON Schema",
    args_schema={
        "type": "object",
        "properties": {
            "prompt": {"type": "string"},
            "schema": {"type": "string", "description": "JSON Schema of the answer"},
            "subject-from-stdin": {"type": "boolean"},
            "emit": {"type": "boolean"},
        },
    },
    examples=["ask --prompt 'Review the draft' --subject-from-stdin"],
    resume_safe_before_input=True,
    resume_safe_after_input=True,
)
def ask(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Halt for input (``--emit``/non-TTY), suspend via requestInput (tool mode) or prompt (TTY)."""
    prompt = args.get("prompt")
    prompt = prompt if isinstance(prompt, str) else "Input required"
    schema = _ask_schema(args)
    if js_truthy(args.get("emit")) or (ctx.mode == "human" and not ctx.interactive):
        request: dict[str, Any] = {"type": "input_request", "prompt": prompt, "responseSchema": schema}
        subject = _ask_subject(items, args)
        if subject is not UNDEFINED:
            request["subject"] = subject
        request["items"] = list(items)
        return CommandResult(output=[request], halt=True)
    if ctx.mode == "tool":
        return _ask_through_request_input(items, args, ctx, prompt, schema)
    return CommandResult(output=[_ask_interactively(ctx, prompt, schema)])


def _ask_through_request_input(
    items: list[Any], args: dict[str, Any], ctx: CommandContext, prompt: str, schema: Any
) -> CommandResult:
    if ctx.request_input is None:
        raise LobsterRuntimeError("requestInput is not supported in this pipeline context")
    suspended = ctx.request_input.get_suspended_state()
    if isinstance(suspended, dict) and suspended.get("type") == "ask":
        # On resume the subject comes from the suspended state; the input is not re-read.
        subject = suspended.get("subject", UNDEFINED)
    else:
        subject = _ask_subject(items, args)
    state: dict[str, Any] = {"type": "ask"}
    if subject is not UNDEFINED:
        state["subject"] = subject
    answer = ctx.request_input(prompt=prompt, response_schema=schema, subject=subject, suspended_state=state)
    return CommandResult(output=[answer])


def _ask_interactively(ctx: CommandContext, prompt: str, schema: Any) -> Any:
    from ...schema import compile_schema, validation_failure

    ctx.stdout.write(f"{prompt}\n> ")
    ctx.stdout.flush()
    text = (ctx.stdin.readline() if ctx.stdin is not None else "").strip()
    try:
        parsed = loads(text)
        candidates = [parsed, {"decision": parsed}] if isinstance(parsed, str) else [parsed]
    except ValueError:
        candidates = [text, {"decision": text}]
    compiled = compile_schema(schema)
    failure = None
    for candidate in candidates:
        failure = validation_failure("ask", compiled, candidate)
        if failure is None:
            return candidate
    raise LobsterRuntimeError(failure or "ask response failed schema validation")


COMMANDS = [approve, ask]
