"""The standard command library (spec §5). Each module exports ``COMMANDS``."""

from __future__ import annotations

import importlib

from ..base import CommandRegistry

# Modules keep their heavy imports (urllib, jsonschema) inside functions, so building the
# registry stays cheap on the CLI's start-up path.
_MODULES = (
    "exec_cmd",
    "gates",
    "data",
    "render",
    "template",
    "state_cmds",
    "discovery",
    "invoke",
    "llm",
    "agent",
    "builtin_workflows",
    "gmail",
)

_default: CommandRegistry | None = None


def default_registry() -> CommandRegistry:
    """The registry of every built-in command, built once per process."""
    global _default
    if _default is None:
        registry = CommandRegistry()
        for name in _MODULES:
            module = importlib.import_module(f"{__name__}.{name}")
            for spec in module.COMMANDS:
                registry.add(spec)
        _default = registry
    return _default
