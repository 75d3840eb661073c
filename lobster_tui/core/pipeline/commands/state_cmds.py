"""``state.get``, ``state.set`` and ``diff.last``: JSON values kept in the state directory.

Spec §5.14, §5.15. Keys map to files by R-STATE-3; every read and write holds the key's file lock
(R-STATE-7), so a ``diff.last`` read-compare-write is atomic against the reference runtime too.
"""

from __future__ import annotations

from typing import Any

from ...errors import LobsterRuntimeError
from ...jsvalues import UNDEFINED, js_string, js_truthy, stable_stringify
from ..base import CommandContext, CommandResult, command, positionals
from .data import single_or_list

_KEY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"_": {"type": "array", "items": {"type": "string"}, "description": "State key"}},
    "required": ["_"],
}


def _positional_key(args: dict[str, Any], name: str) -> str:
    given = positionals(args)
    if not given:
        raise LobsterRuntimeError(f"{name} requires a key")
    return given[0]


@command(
    "state.get",
    description="Read the JSON value stored under a state key (null when absent)",
    args_schema=_KEY_SCHEMA,
    examples=["state.get last-run"],
    side_effects=["reads_state"],
)
def state_get_command(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Output the stored value, or ``null`` when the key has no file; input is ignored (R-CMD-STATE-1)."""
    key = _positional_key(args, "state.get")
    with ctx.state.locked(key, ctx.signal):
        try:
            value = ctx.state.read_value(key)
        except ValueError as error:
            raise LobsterRuntimeError(f"state.get {key}: stored value is not valid JSON ({error})") from None
    return CommandResult(output=[None if value is UNDEFINED else value])


@command(
    "state.set",
    description="Store the items under a state key (one item as itself, several as an array)",
    args_schema=_KEY_SCHEMA,
    examples=["exec --json --shell 'gh pr list --json number' | state.set open-prs"],
    side_effects=["writes_state"],
)
def state_set_command(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Write the value atomically and output it (R-CMD-STATE-2)."""
    key = _positional_key(args, "state.set")
    value = single_or_list(items)
    with ctx.state.locked(key, ctx.signal):
        ctx.state.write_value(key, value)
    return CommandResult(output=[value])


def _diff_key(args: dict[str, Any]) -> Any:
    """``--key`` when given at all (even ``--key=``), else the first positional (observed)."""
    if "key" in args:
        key = args["key"]
    else:
        given = positionals(args)
        key = given[0] if given else UNDEFINED
    if not js_truthy(key):
        raise LobsterRuntimeError("diff.last requires --key")
    return key


def _read_snapshot(ctx: CommandContext, key: str) -> Any:
    """The stored snapshot; a missing or corrupt file counts as ``null`` (head behaviour, D-17)."""
    try:
        value = ctx.state.read_value(key)
    except ValueError:
        return None
    return None if value is UNDEFINED else value


@command(
    "diff.last",
    description="Compare the items with the snapshot stored under a key, then store them",
    args_schema={
        "type": "object",
        "properties": {
            "key": {"type": "string", "description": "State key of the snapshot"},
            "_": {"type": "array", "items": {"type": "string"}, "description": "The key, when --key is not given"},
        },
        "required": ["key"],
    },
    examples=["exec --json --shell 'gh pr view 1 --json state' | diff.last --key pr-1"],
    side_effects=["writes_state"],
)
def diff_last_command(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Output ``{kind, key, changed, before, after}`` and store ``after`` (R-CMD-DIFF-1)."""
    key = _diff_key(args)
    store_key = js_string(key)  # a bare --key is the boolean true, stored as "true"
    after = single_or_list(items)
    with ctx.state.locked(store_key, ctx.signal):
        before = _read_snapshot(ctx, store_key)
        ctx.state.write_value(store_key, after)
    changed = stable_stringify(before) != stable_stringify(after)
    return CommandResult(
        output=[{"kind": "diff.last", "key": key, "changed": changed, "before": before, "after": after}]
    )


COMMANDS = [state_get_command, state_set_command, diff_last_command]
