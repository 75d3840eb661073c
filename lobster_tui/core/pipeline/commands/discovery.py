"""``commands.list``: describe every registered pipeline command (spec §5.19, R-CMD-LIST-1)."""

from __future__ import annotations

import copy
from typing import Any

from ..base import CommandContext, CommandResult, CommandSpec, command


def describe(spec: CommandSpec) -> dict[str, Any]:
    """One ``commands.list`` entry; missing metadata is ``null``."""
    return {
        "name": spec.name,
        "description": spec.description,
        # Copies, so a later stage that edits an item cannot change the registry.
        "argsSchema": copy.deepcopy(spec.args_schema),
        "examples": copy.deepcopy(spec.examples),
        "sideEffects": list(spec.side_effects),
    }


@command(
    "commands.list",
    description="List the available pipeline commands with their flags and side effects",
    args_schema={"type": "object", "properties": {}},
    examples=["commands.list | pick name,sideEffects | table"],
)
def commands_list_command(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Output one description per registered command, sorted by name (R-CMD-LIST-1)."""
    return CommandResult(output=[describe(spec) for spec in ctx.registry.specs()])


COMMANDS = [commands_list_command]
