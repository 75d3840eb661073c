"""Renderers: ``json`` and ``table`` (spec §5.7, §5.8, R-PIPE-12).

Both drain their input, write to the run's stdout and output no items with ``rendered: true``.
"""

from __future__ import annotations

from typing import Any

from ...jsvalues import dumps_compact, js_string
from ..base import CommandContext, CommandResult, command
from ..parser import js_key_order
from .data import is_nullish, member, utf16_len

_NO_ARGS_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
# Only the first rows decide whether items are records (and which columns exist).
_SAMPLE_SIZE = 20
_MIN_WIDTH = 3


@command(
    "json",
    description="Render the items as pretty JSON on stdout",
    args_schema=_NO_ARGS_SCHEMA,
    examples=["exec --json --shell 'cat items.json' | json"],
)
def json_command(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Write pretty JSON of the item array plus a newline (R-CMD-JSON-1)."""
    ctx.render_json(items)
    return CommandResult(output=[], rendered=True)


def cell_text(value: Any) -> str:
    """A table cell: nullish → ``""``, strings raw, numbers/booleans via String, else compact JSON."""
    if is_nullish(value):
        return ""
    if isinstance(value, (str, bool, int, float)):
        return js_string(value)
    return dumps_compact(value)


def _pad(text: str, width: int) -> str:
    # JavaScript padEnd counts UTF-16 code units.
    return text + " " * (width - utf16_len(text))


def table_lines(items: list[Any]) -> list[str]:
    """The lines ``table`` prints for ``items`` (R-CMD-TABLE-1), without newlines."""
    if not items:
        return ["(no results)"]
    sample = items[:_SAMPLE_SIZE]
    if not all(isinstance(item, dict) for item in sample):
        # Not records: one line per item, and here newlines are left alone (observed).
        return [cell_text(item) for item in items]
    columns = list(dict.fromkeys(key for item in sample for key in js_key_order(item)))
    rows = [[cell_text(member(item, column)).replace("\n", " ") for column in columns] for item in items]
    widths = [
        max([_MIN_WIDTH, utf16_len(column), *(utf16_len(row[index]) for row in rows)])
        for index, column in enumerate(columns)
    ]
    lines = ["  ".join(_pad(column, width) for column, width in zip(columns, widths))]
    lines.append("  ".join("-" * width for width in widths))
    lines.extend("  ".join(_pad(cell, width) for cell, width in zip(row, widths)) for row in rows)
    return lines


@command(
    "table",
    description="Render the items as a plain-text table on stdout",
    args_schema=_NO_ARGS_SCHEMA,
    examples=["exec --json --shell 'cat items.json' | pick id,title | table"],
)
def table_command(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Write a left-justified table of records, or one line per item (R-CMD-TABLE-1)."""
    ctx.stdout.write("".join(line + "\n" for line in table_lines(items)))
    ctx.stdout.flush()
    return CommandResult(output=[], rendered=True)


COMMANDS = [json_command, table_command]
