"""Small pure functions that turn checkpoint data into short, terminal-safe text."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

Clock = Callable[[], datetime]
"""Returns "now" as an aware datetime; the app takes one so tests can freeze time."""


def utc_now() -> datetime:
    """The real clock."""
    return datetime.now(timezone.utc)


def format_age(created_at: datetime, now: datetime) -> str:
    """A compact age such as ``12s``, ``5m``, ``3h`` or ``2d`` (never negative)."""
    if created_at.tzinfo is None:
        created_at = created_at.replace(tzinfo=timezone.utc)
    seconds = max(0, int((now - created_at).total_seconds()))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"


def format_duration(ms: Any) -> str:
    """``812ms`` or ``1.4s``; empty for anything that is not a number."""
    if not isinstance(ms, (int, float)) or isinstance(ms, bool):
        return ""
    if ms < 1000:
        return f"{int(ms)}ms"
    return f"{ms / 1000:.1f}s"


def one_line(text: str | None, width: int) -> str:
    """Collapse whitespace (a prompt may span lines) and cut to ``width`` with an ellipsis."""
    flat = " ".join((text or "").split())
    # Control characters from a hostile state file must not reach the terminal.
    flat = "".join(ch if ch.isprintable() else "?" for ch in flat)
    if width > 0 and len(flat) > width:
        return flat[: max(0, width - 1)] + "…"
    return flat


def printable(text: str) -> str:
    """Replace control characters (but keep newlines and tabs) so output cannot drive the terminal."""
    return "".join(ch if ch.isprintable() or ch in "\n\t" else "?" for ch in text)


def cell_text(value: Any) -> str:
    """A value as a table cell: strings as they are, everything else as compact JSON."""
    if isinstance(value, str):
        return one_line(value, 80)
    from lobster_tui.core.jsvalues import dumps_compact

    try:
        return one_line(dumps_compact(value), 80)
    except (TypeError, ValueError):
        return one_line(repr(value), 80)


def pretty_json(value: Any) -> str:
    """Indented JSON the way the CLI prints it."""
    from lobster_tui.core.jsvalues import dumps_pretty

    try:
        return printable(dumps_pretty(value))
    except (TypeError, ValueError):
        return printable(repr(value))


def is_records(items: list[Any]) -> bool:
    """True when ``items`` is a non-empty list of objects, best shown as a table."""
    return bool(items) and all(isinstance(item, dict) for item in items)
