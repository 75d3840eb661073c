"""Gmail helpers over the ``gog`` CLI: ``gog.gmail.search``, ``gog.gmail.send``, ``email.triage``.

Spec §5.20. ``gog`` owns the Google credentials; these commands only build argv arrays (never a
shell line) and shape its JSON. ``email.triage`` is read-only: it sorts messages into buckets by
simple rules, or asks ``llm.invoke`` to categorise them and draft replies.
"""

from __future__ import annotations

import os
import re
from typing import Any

from ...errors import LobsterRuntimeError
from ...jsvalues import UNDEFINED, dumps_compact, dumps_pretty, js_number_str, js_string, js_to_number, js_truthy, loads
from ..base import CommandContext, CommandResult, CommandSpec, command
from .invoke import ERROR_EXCERPT_CHARS, first_present

_GOG_NOT_FOUND = "gog not found on PATH (install: https://github.com/steipete/gogcli)"
# GOG_BIN may name a JavaScript test double; those are run with Node, as the reference does.
_SCRIPT_SUFFIX = re.compile(r"\.(mjs|cjs|js|ts)$", re.IGNORECASE)


def _gog_argv(ctx: CommandContext, args: list[str]) -> list[str]:
    gog_bin = js_string(first_present(ctx.env.get("GOG_BIN"), "gog"))
    if _SCRIPT_SUFFIX.search(gog_bin):
        return ["node", gog_bin, *args]
    return [gog_bin, *args]


def _run_gog(name: str, ctx: CommandContext, args: list[str]) -> str:
    """Run gog once and return its stdout; a non-zero exit is ``<name> failed (<code>): <stderr>``."""
    from ...process import run_process

    # Like the reference, the configured env is layered over this process's own.
    env = {**os.environ, **ctx.env}
    try:
        result = run_process(
            _gog_argv(ctx, args), env=env, cwd=ctx.cwd, stdin_data=None, signal=ctx.signal, on_output=ctx.on_output
        )
    except FileNotFoundError:
        raise LobsterRuntimeError(_GOG_NOT_FOUND) from None
    except OSError as error:
        raise LobsterRuntimeError(f"{name} failed: {error}") from None
    if result.returncode != 0:
        code = "?" if result.returncode is None else str(result.returncode)
        raise LobsterRuntimeError(f"{name} failed ({code}): {result.stderr[:ERROR_EXCERPT_CHARS]}")
    return result.stdout


# -- gog.gmail.search -------------------------------------------------------------------------------


@command(
    "gog.gmail.search",
    description="Fetch Gmail threads via gog (JSON)",
    args_schema={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Gmail search query", "default": "newer_than:1d"},
            "max": {"type": "number", "description": "Max results", "default": 20},
            "limit": {"type": "number", "description": "Alias for max"},
            "_": {"type": "array", "items": {"type": "string"}},
        },
        "required": [],
    },
    side_effects=["reads_email"],
    help_text=(
        "gog.gmail.search — fetch Gmail messages via gog (JSON)\n\n"
        "Usage:\n"
        "  gog.gmail.search --query 'newer_than:1d' --max 20\n\n"
        "Notes:\n"
        "  - Requires the gog CLI: https://github.com/steipete/gogcli\n"
        "  - Set GOG_BIN to override the executable used (default: gog).\n"
        "  - This command outputs an array of message objects (as a stream).\n"
    ),
)
def gog_gmail_search(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """``gog gmail search <query> --json --max N``; emits messages, flattening ``threads`` pages."""
    ctx.signal.raise_if_aborted()
    query = js_string(first_present(args.get("query"), "newer_than:1d"))
    limit = js_number_str(js_to_number(first_present(args.get("max"), args.get("limit"), 20)))
    stdout = _run_gog("gog.gmail.search", ctx, ["gmail", "search", query, "--json", "--max", limit])
    try:
        parsed = loads(stdout)
    except ValueError:
        raise LobsterRuntimeError("gog.gmail.search expected JSON output") from None
    # gog answers with messages, a page {nextPageToken, threads}, or a list of such pages.
    if isinstance(parsed, list):
        output: list[Any] = []
        for entry in parsed:
            threads = entry.get("threads") if isinstance(entry, dict) else None
            output.extend(threads if isinstance(threads, list) else [entry])
    elif isinstance(parsed, dict) and isinstance(parsed.get("threads"), list):
        output = parsed["threads"]
    else:
        output = [parsed]
    return CommandResult(output=output)


# -- gog.gmail.send ---------------------------------------------------------------------------------


def _draft(item: Any) -> dict[str, str]:
    """``{to, subject, body}`` of a draft item, trimmed; ``to`` is required."""
    if not isinstance(item, (dict, list)):
        raise LobsterRuntimeError("gog.gmail.send expects draft objects")
    fields = {
        name: js_string(first_present(item.get(name) if isinstance(item, dict) else None, "")).strip()
        for name in ("to", "subject", "body")
    }
    if not fields["to"]:
        raise LobsterRuntimeError("gog.gmail.send draft missing to")
    return fields


@command(
    "gog.gmail.send",
    description="Send Gmail messages via gog",
    args_schema={
        "type": "object",
        "properties": {
            "dryRun": {"type": "boolean", "description": "If true, do not send; echo drafts"},
            "dry-run": {"type": "boolean", "description": "Alias for dryRun"},
            "_": {"type": "array", "items": {"type": "string"}},
        },
        "required": [],
    },
    side_effects=["sends_email"],
    help_text=(
        "gog.gmail.send — send Gmail messages via gog\n\n"
        "Usage:\n"
        "  ... | approve --prompt 'Send replies?' | gog.gmail.send\n\n"
        "Input:\n"
        "  Stream of draft objects: { to, subject, body }\n\n"
        "Notes:\n"
        "  - Requires the gog CLI: https://github.com/steipete/gogcli\n"
        "  - Set GOG_BIN to override the executable used (default: gog).\n"
    ),
)
def gog_gmail_send(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Send one message per draft item (or echo them with ``--dry-run``); emits gog's answers."""
    ctx.signal.raise_if_aborted()
    dry_run = js_truthy(first_present(args.get("dryRun"), args.get("dry-run")))
    # The workflow runner may pass a hook that marks the current attempt as not retryable (R-WF-93).
    mark_non_retryable = ctx.on_non_retryable_side_effect
    results: list[Any] = []
    for item in items:
        if ctx.signal.aborted:
            # Messages already sent are reported; the runner still fails the cancelled run.
            if results:
                break
            ctx.signal.raise_if_aborted()
        draft = _draft(item)
        if dry_run:
            results.append({"ok": True, "dryRun": True, **draft})
            continue
        argv = ["gmail", "send", "--to", draft["to"]]
        if draft["subject"]:
            argv += ["--subject", draft["subject"]]
        if draft["body"]:
            argv += ["--body", draft["body"]]
        argv.append("--json")
        if mark_non_retryable is not None:
            mark_non_retryable()
        stdout = _run_gog("gog.gmail.send", ctx, argv)
        try:
            results.append(loads(stdout) if stdout else {"ok": True})
        except ValueError:
            results.append({"ok": True, "raw": stdout})
        if ctx.signal.aborted:
            break
    return CommandResult(output=results)


# -- email.triage -----------------------------------------------------------------------------------

_EMAIL_FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("from", ("from", "sender")),
    ("subject", ("subject",)),
    ("date", ("date", "internalDate", "timestamp")),
    ("snippet", ("snippet", "bodyPreview")),
)
_NO_REPLY_MARKERS = ("no-reply", "noreply", "do-not-reply", "donotreply")
_ANGLE_ADDRESS = re.compile(r"<([^>]+)>")
_BARE_ADDRESS = re.compile(r"[A-Z0-9._%+-]+@[A-Z0-9.-]+\.[A-Z]{2,}", re.IGNORECASE)
_RE_PREFIX = re.compile(r"^re:\s*", re.IGNORECASE)

TRIAGE_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decisions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "category": {"type": "string", "enum": ["needs_reply", "needs_action", "fyi"]},
                    "rationale": {"type": "string"},
                    "reply": {
                        "type": "object",
                        "properties": {"subject": {"type": "string"}, "body": {"type": "string"}},
                        "required": ["body"],
                        "additionalProperties": False,
                    },
                },
                "required": ["id", "category"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["decisions"],
    "additionalProperties": False,
}
"""What the LLM must answer in LLM mode (validated by ``llm.invoke``)."""


def _first_field(raw: Any, names: tuple[str, ...], fallback: str = "") -> str:
    """``String(raw.a ?? raw.b ?? fallback).trim()``; non-objects have no fields."""
    values = [raw.get(name) for name in names] if isinstance(raw, dict) else []
    return js_string(first_present(*values, fallback)).strip()


def normalize_email(raw: Any) -> dict[str, Any]:
    """The fields triage looks at, from gog's message shape or common aliases."""
    email_id = _first_field(raw, ("id", "messageId"))
    thread_id = _first_field(raw, ("threadId", "thread_id"), email_id)
    email: dict[str, Any] = {"id": email_id, "threadId": thread_id or email_id}
    for name, aliases in _EMAIL_FIELDS:
        email[name] = _first_field(raw, aliases)
    labels = raw.get("labels") if isinstance(raw, dict) else None
    email["labels"] = [js_string(label) for label in labels] if isinstance(labels, list) else []
    return email


def _is_no_reply(sender: str) -> bool:
    lowered = sender.lower()
    return any(marker in lowered for marker in _NO_REPLY_MARKERS)


def _email_address(sender: str) -> str:
    match = _ANGLE_ADDRESS.search(sender)
    if match and match.group(1):
        return match.group(1).strip()
    match = _BARE_ADDRESS.search(sender)
    return match.group(0).strip() if match else ""


def _reply_subject(subject: str) -> str:
    text = subject.strip()
    if not text:
        return "Re:"
    return text if _RE_PREFIX.match(text) else f"Re: {text}"


def _summary(buckets: dict[str, list[str]]) -> str:
    return (
        f"{len(buckets['needsReply'])} need replies, {len(buckets['needsAction'])} need action, "
        f"{len(buckets['fyi'])} FYI"
    )


def deterministic_report(emails: list[dict[str, Any]]) -> dict[str, Any]:
    """Rules: "action required"/"urgent" subjects need action; unread human mail needs a reply."""
    buckets: dict[str, list[str]] = {"needsReply": [], "needsAction": [], "fyi": []}
    for email in emails:
        subject = email["subject"].lower()
        unread = any(label.upper() == "UNREAD" for label in email["labels"])
        if "action required" in subject or "urgent" in subject:
            buckets["needsAction"].append(email["id"])
        elif unread and not _is_no_reply(email["from"]):
            buckets["needsReply"].append(email["id"])
        else:
            buckets["fyi"].append(email["id"])
    return {"summary": _summary(buckets), "buckets": buckets, "emails": emails, "mode": "deterministic"}


def triage_prompt(emails: list[dict[str, Any]]) -> str:
    """The instructions and the emails (as pretty JSON) sent to the LLM."""
    shown = [
        {key: email[key] for key in ("id", "from", "subject", "date", "snippet", "labels")} for email in emails
    ]
    return (
        "You are an email triage assistant.\n"
        "Given the following emails, return JSON that categorizes each email and (when category is "
        "needs_reply) drafts a short reply.\n"
        "Guidelines:\n"
        "- Keep replies concise, friendly, and professional.\n"
        "- If sender appears to be automated (no-reply), do not draft a reply; categorize as fyi unless "
        "it is clearly urgent/actionable.\n"
        "- Use one of categories: needs_reply, needs_action, fyi.\n"
        "- The reply body should be plain text, no markdown.\n\n"
        "Emails (JSON):\n" + dumps_pretty(shown)
    )


def _decision(raw: Any) -> dict[str, Any]:
    raw = raw if isinstance(raw, dict) else {}
    decision: dict[str, Any] = {
        "id": js_string(first_present(raw.get("id"), "")).strip(),
        "category": js_string(first_present(raw.get("category"), "fyi")),
    }
    if js_truthy(raw.get("rationale")):
        decision["rationale"] = js_string(raw["rationale"])
    reply = raw.get("reply")
    if isinstance(reply, (dict, list)):
        fields = reply if isinstance(reply, dict) else {}
        decision["reply"] = {"body": js_string(first_present(fields.get("body"), ""))}
        if "subject" in fields:
            decision["reply"] = {"subject": fields["subject"], **decision["reply"]}
    return decision


def _llm_report(emails: list[dict[str, Any]], args: dict[str, Any], ctx: CommandContext) -> dict[str, Any]:
    """Ask ``llm.invoke`` for decisions and build the report, reply drafts included."""
    llm = ctx.registry.get("llm.invoke") or ctx.registry.get("llm_task.invoke")
    if llm is None:
        raise LobsterRuntimeError("email.triage requires llm.invoke to be registered")
    llm_args: dict[str, Any] = {"_": []}
    for name in ("url", "token"):
        if args.get(name) is not None:
            llm_args[name] = args[name]
    model = js_string(first_present(args.get("model"), "")).strip()
    if model:
        llm_args["model"] = model
    llm_args["prompt"] = triage_prompt(emails)
    llm_args["output-schema"] = dumps_compact(TRIAGE_OUTPUT_SCHEMA)
    llm_args["schema-version"] = "email_triage.v1"
    for name in ("temperature", "max-output-tokens"):
        if args.get(name) is not None:
            llm_args[name] = args[name]
    state_key = first_present(args.get("state-key"), ctx.env.get("LOBSTER_RUN_STATE_KEY"))
    if state_key is not UNDEFINED:
        llm_args["state-key"] = state_key
    answer = llm.run(list(emails), llm_args, ctx).output
    output = answer[0].get("output") if answer and isinstance(answer[0], dict) else None
    data = output.get("data") if isinstance(output, dict) else None
    raw_decisions = data.get("decisions") if isinstance(data, dict) else None
    decisions = [d for d in map(_decision, raw_decisions if isinstance(raw_decisions, list) else []) if d["id"]]

    by_id = {email["id"]: email for email in emails}
    buckets: dict[str, list[str]] = {"needsReply": [], "needsAction": [], "fyi": []}
    drafts: list[dict[str, Any]] = []
    for decision in decisions:
        category = decision["category"]
        bucket = {"needs_reply": "needsReply", "needs_action": "needsAction"}.get(category, "fyi")
        buckets[bucket].append(decision["id"])
        reply = decision.get("reply")
        if category != "needs_reply" or reply is None or not reply["body"]:
            continue
        email = by_id.get(decision["id"])
        sender = email["from"] if email else ""
        to = _email_address(sender)
        if to and not _is_no_reply(sender):
            subject = reply.get("subject")
            drafts.append(
                {
                    "emailId": decision["id"],
                    "to": to,
                    "subject": js_string(subject) if js_truthy(subject) else _reply_subject(email["subject"] if email else ""),
                    "body": reply["body"],
                }
            )
    return {
        "summary": _summary(buckets),
        "buckets": buckets,
        "emails": emails,
        "decisions": decisions,
        "drafts": drafts,
        "mode": "llm",
    }


@command(
    "email.triage",
    description="Email triage (deterministic by default, optionally LLM-assisted via llm.invoke)",
    args_schema={
        "type": "object",
        "properties": {
            "limit": {"type": "number", "description": "Maximum items to consume from input stream", "default": 20},
            "llm": {"type": "boolean", "description": "Use llm.invoke for categorization + draft replies"},
            "model": {"type": "string", "description": "Model for llm.invoke (optional; adapter defaults may apply)"},
            "url": {"type": "string", "description": "Reserved for compatibility (ignored in OpenClaw mode)"},
            "token": {"type": "string", "description": "Bearer token (or OPENCLAW_TOKEN/CLAWD_TOKEN)"},
            "temperature": {"type": "number", "description": "LLM temperature"},
            "max-output-tokens": {"type": "number", "description": "Max completion tokens"},
            "emit": {"type": "string", "description": "Output mode: 'report' (default) or 'drafts'", "default": "report"},
            "state-key": {"type": "string", "description": "Run-state key forwarded to llm.invoke"},
            "_": {"type": "array", "items": {"type": "string"}},
        },
        "required": [],
    },
    side_effects=[],
    help_text=(
        "email.triage — categorize emails and draft replies (optional LLM)\n\n"
        "Usage (deterministic):\n"
        "  gog.gmail.search --query 'newer_than:1d' --max 20 | email.triage\n\n"
        "Usage (LLM-assisted drafts):\n"
        "  gog.gmail.search --query 'newer_than:1d' --max 20 | email.triage --llm --model <model>\n\n"
        "Send drafts (requires approval):\n"
        "  ... | email.triage --llm --model <model> --emit drafts | approve --prompt 'Send replies?' | gog.gmail.send\n\n"
        "Notes:\n"
        "  - Read-only by default: does not send anything.\n"
        "  - LLM mode uses llm.invoke (and its cache/resume semantics).\n"
    ),
)
def email_triage(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Bucket up to ``--limit`` messages; ``--emit drafts`` outputs only reply drafts (LLM mode)."""
    limit = js_to_number(first_present(args.get("limit"), 20))
    emit = js_string(first_present(args.get("emit"), "report")).strip() or "report"
    emails: list[dict[str, Any]] = []
    for item in items:
        emails.append(normalize_email(item))
        # Checked after taking an item, so even --limit 0 reads one (as the reference does).
        if len(emails) >= limit:
            break
    env = ctx.env
    has_provider = any(
        js_string(value).strip()
        for value in (
            env.get("LOBSTER_LLM_PROVIDER", ""),
            env.get("LOBSTER_PI_LLM_ADAPTER_URL", ""),
            env.get("LOBSTER_LLM_ADAPTER_URL", ""),
            first_present(env.get("OPENCLAW_URL"), env.get("CLAWD_URL"), ""),
        )
    )
    if not js_truthy(args.get("llm")) or not has_provider:
        # Rules only produce buckets, never reply drafts.
        return CommandResult(output=[] if emit == "drafts" else [deterministic_report(emails)])
    report = _llm_report(emails, args, ctx)
    if emit == "drafts":
        # The shape gog.gmail.send consumes, plus the message it answers.
        return CommandResult(
            output=[
                {"to": d["to"], "subject": d["subject"], "body": d["body"], "emailId": d["emailId"]}
                for d in report["drafts"]
            ]
        )
    return CommandResult(output=[report])


COMMANDS: list[CommandSpec] = [gog_gmail_search, gog_gmail_send, email_triage]
