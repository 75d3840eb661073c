"""``workflows.list`` / ``workflows.run`` and the built-in named workflows (spec §5.19).

Two workflows ship with the runtime, both about one GitHub pull request: ``github.pr.monitor``
fetches its state with ``gh pr view``, compares it with the snapshot stored by the previous run
(``diff.last`` semantics under ``github.pr:<repo>#<pr>``) and reports what changed;
``github.pr.monitor.notify`` turns that into one human-readable message, or a suppressed marker
when nothing changed.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

from ...errors import LobsterRuntimeError
from ...jsvalues import UNDEFINED, dumps_compact, js_number_str, js_string, js_to_number, js_truthy, loads, stable_stringify
from ..base import CommandContext, CommandResult, CommandSpec, command, positionals
from .invoke import first_present

_PR_FIELDS = "number,title,url,state,isDraft,mergeable,reviewDecision,author,baseRefName,headRefName,updatedAt"
# The fields a change summary compares, in the order it reports them.
_SUMMARY_FIELDS = (
    "number",
    "title",
    "url",
    "state",
    "isDraft",
    "mergeable",
    "reviewDecision",
    "updatedAt",
    "baseRefName",
    "headRefName",
)
_NOTIFY_PR_FIELDS = ("number", "title", "url", "state", "updatedAt")

_REPO_PR_PROPERTIES: dict[str, Any] = {
    "repo": {"type": "string", "description": "owner/repo (e.g. openclaw/openclaw)"},
    "pr": {"type": "number", "description": "Pull request number"},
    "key": {"type": "string", "description": "Optional state key override."},
}

WORKFLOWS: dict[str, dict[str, Any]] = {
    "github.pr.monitor": {
        "name": "github.pr.monitor",
        "description": "Fetch PR state via gh, diff against last run, emit only on change.",
        "argsSchema": {
            "type": "object",
            "properties": {
                **_REPO_PR_PROPERTIES,
                "changesOnly": {"type": "boolean", "description": "If true, suppress output when unchanged."},
                "summaryOnly": {
                    "type": "boolean",
                    "description": "If true, return only a compact change summary (smaller output).",
                },
            },
            "required": ["repo", "pr"],
        },
        "examples": [
            {
                "args": {"repo": "openclaw/openclaw", "pr": 1152},
                "description": "Monitor a PR and report when it changes.",
            }
        ],
        "sideEffects": [],
    },
    "github.pr.monitor.notify": {
        "name": "github.pr.monitor.notify",
        "description": "Monitor a PR and emit a single human-friendly message when it changes.",
        "argsSchema": {"type": "object", "properties": dict(_REPO_PR_PROPERTIES), "required": ["repo", "pr"]},
        "examples": [
            {
                "args": {"repo": "openclaw/openclaw", "pr": 1152},
                "description": 'Emit "PR updated" message only when changed.',
            }
        ],
        "sideEffects": [],
    },
}
"""Metadata ``workflows.list`` reports, keyed by workflow name."""


def _defined(mapping: dict[str, Any]) -> dict[str, Any]:
    """Drop members whose value is ``undefined``, as JSON would."""
    return {key: value for key, value in mapping.items() if value is not UNDEFINED}


def _field(value: Any, name: str) -> Any:
    return value.get(name, UNDEFINED) if isinstance(value, dict) else UNDEFINED


def _json_or_undefined(value: Any) -> str | None:
    """``JSON.stringify`` for a field comparison, keeping ``undefined`` distinct from ``null``."""
    return None if value is UNDEFINED else dumps_compact(value)


def pr_change_summary(before: Any, after: Any) -> dict[str, Any]:
    """Which summary fields changed between two ``gh pr view`` snapshots, with from/to values.

    Without a previous snapshot every field counts as changed from ``null``; a snapshot that is
    not a JSON object or array has no fields to compare.
    """
    if not isinstance(after, (dict, list)):
        return {"changedFields": [], "changes": {}}
    current = {name: _field(after, name) for name in _SUMMARY_FIELDS}
    if not isinstance(before, (dict, list)):
        return {
            "changedFields": list(_SUMMARY_FIELDS),
            "changes": {name: _defined({"from": None, "to": current[name]}) for name in _SUMMARY_FIELDS},
        }
    changes = {
        name: _defined({"from": _field(before, name), "to": current[name]})
        for name in _SUMMARY_FIELDS
        if _json_or_undefined(current[name]) != _json_or_undefined(_field(before, name))
    }
    return {"changedFields": list(changes), "changes": changes}


def _run_gh(argv: list[str], ctx: CommandContext) -> str:
    from ...process import run_process

    try:
        result = run_process(
            ["gh", *argv], env=ctx.env, cwd=ctx.cwd, stdin_data=None, signal=ctx.signal, on_output=ctx.on_output
        )
    except FileNotFoundError:
        raise LobsterRuntimeError("gh not found on PATH (install GitHub CLI)") from None
    except OSError as error:
        raise LobsterRuntimeError(f"gh failed: {error}") from None
    if result.returncode != 0:
        detail = result.stderr.strip() or result.stdout.strip()
        raise LobsterRuntimeError(f"gh failed ({js_string(result.returncode)}): {detail}")
    return result.stdout


def _diff_and_store(ctx: CommandContext, key: str, value: Any) -> tuple[bool, Any]:
    """``diff.last`` semantics: compare with the stored value (null if absent or corrupt), store."""
    with ctx.state.locked(key, ctx.signal):
        try:
            before = ctx.state.read_value(key)
        except ValueError:
            before = None
        if before is UNDEFINED:
            before = None
        changed = stable_stringify(before) != stable_stringify(value)
        ctx.signal.raise_if_aborted()
        ctx.state.write_value(key, value)
    return changed, before


def run_pr_monitor(args: dict[str, Any], ctx: CommandContext) -> dict[str, Any]:
    """``github.pr.monitor``: args ``repo``, ``pr``, optional ``key``, ``changesOnly``, ``summaryOnly``."""
    ctx.signal.raise_if_aborted()
    repo, pr = args.get("repo"), args.get("pr")
    if not js_truthy(repo) or not js_truthy(pr):
        raise LobsterRuntimeError("github.pr.monitor requires args.repo and args.pr")
    key = first_present(args.get("key"), f"github.pr:{js_string(repo)}#{js_string(pr)}")
    stdout = _run_gh(["pr", "view", js_string(pr), "--repo", js_string(repo), "--json", _PR_FIELDS], ctx)
    ctx.signal.raise_if_aborted()
    try:
        current = loads(stdout.strip())
    except ValueError:
        raise LobsterRuntimeError("gh returned non-JSON output") from None
    changed, before = _diff_and_store(ctx, js_string(key), current)
    head = {"kind": "github.pr.monitor", "repo": repo, "prNumber": js_to_number(pr), "key": key}
    if js_truthy(args.get("changesOnly")) and not changed:
        return {**head, "changed": False, "suppressed": True}
    summary = pr_change_summary(before, current)
    if js_truthy(args.get("summaryOnly")):
        pr_info = _defined({name: _field(current, name) for name in _NOTIFY_PR_FIELDS})
        return {**head, "changed": changed, "summary": summary, "pr": pr_info}
    return {**head, "changed": changed, "summary": summary, "prSnapshot": current}


def run_pr_monitor_notify(args: dict[str, Any], ctx: CommandContext) -> dict[str, Any]:
    """``github.pr.monitor.notify``: one "PR updated" message when the PR changed."""
    base = run_pr_monitor({**args, "changesOnly": True, "summaryOnly": True}, ctx)
    if base.get("suppressed"):
        return {"kind": "github.pr.monitor.notify", "suppressed": True}
    pr_info = base["pr"]
    changed_fields = base["summary"]["changedFields"]
    pr_number = js_to_number(args.get("pr"))
    fields = f" ({', '.join(changed_fields)})" if changed_fields else ""
    title = f": {js_string(pr_info['title'])}" if js_truthy(pr_info.get("title")) else ""
    url = f" {js_string(pr_info['url'])}" if js_truthy(pr_info.get("url")) else ""
    message = f"PR updated: {js_string(args.get('repo'))}#{js_number_str(pr_number)}{title}{fields}.{url}"
    return {
        "kind": "github.pr.monitor.notify",
        "changed": js_truthy(base["changed"]),
        "repo": args.get("repo"),
        "prNumber": pr_number,
        "message": re.sub(r"\s+", " ", message).strip(),
        "pr": pr_info,
        "summary": base["summary"],
    }


RUNNERS: dict[str, Callable[[dict[str, Any], CommandContext], dict[str, Any]]] = {
    "github.pr.monitor": run_pr_monitor,
    "github.pr.monitor.notify": run_pr_monitor_notify,
}


@command(
    "workflows.list",
    description="List available Lobster workflows",
    args_schema={"type": "object", "properties": {}, "required": []},
    side_effects=[],
    help_text=(
        "workflows.list — list available Lobster workflows\n\n"
        "Usage:\n"
        "  workflows.list\n\n"
        "Notes:\n"
        "  - Intended for OpenClaw to discover workflows dynamically.\n"
    ),
)
def workflows_list(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """One item per built-in workflow: ``{name, description, argsSchema, examples, sideEffects}``."""
    # Copies, so a later stage that edits an item cannot change the registry.
    return CommandResult(output=copy.deepcopy(list(WORKFLOWS.values())))


@command(
    "workflows.run",
    description="Run a named Lobster workflow",
    args_schema={
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Workflow name"},
            "args-json": {"type": "string", "description": "JSON string of workflow args"},
            "_": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["name"],
    },
    side_effects=[],
    help_text=(
        "workflows.run — run a named Lobster workflow\n\n"
        "Usage:\n"
        "  workflows.run --name <workflow> [--args-json '{...}']\n\n"
        "Example:\n"
        "  workflows.run --name github.pr.monitor.notify --args-json "
        "'{\"repo\":\"openclaw/openclaw\",\"pr\":1152}'\n"
    ),
)
def workflows_run(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Run the named built-in workflow and emit its single result object."""
    given = positionals(args)
    name = first_present(args.get("name"), given[0] if given else UNDEFINED)
    if not js_truthy(name):
        raise LobsterRuntimeError("workflows.run requires --name")
    runner = RUNNERS.get(js_string(name))
    if runner is None:
        raise LobsterRuntimeError(f"Unknown workflow: {js_string(name)}")
    workflow_args: Any = {}
    if js_truthy(args.get("args-json")):
        try:
            workflow_args = loads(js_string(args["args-json"]))
        except ValueError:
            raise LobsterRuntimeError("workflows.run --args-json must be valid JSON") from None
    # Non-object args carry no repo/pr; the workflow then reports what it requires.
    return CommandResult(output=[runner(workflow_args if isinstance(workflow_args, dict) else {}, ctx)])


COMMANDS: list[CommandSpec] = [workflows_list, workflows_run]
