"""Run events (see :mod:`lobster_tui.core.events`) as lines of styled text.

Shared by the live log panel and the preview's "before the gate" section, so a run reads the
same whether it is streaming now or was read back from its log. Colours are looked up in the
app's theme variables (``EventStyles.from_theme``), never written as literals.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from .formatting import format_duration, one_line, printable


@dataclass(frozen=True)
class EventStyles:
    """Rich styles for the parts of a run log, derived from the current theme."""

    heading: str = "bold"
    ok: str = "bold"
    error: str = "bold"
    warning: str = ""
    muted: str = "dim"
    stderr: str = ""

    @classmethod
    def from_theme(cls, variables: Mapping[str, str]) -> EventStyles:
        """Styles from ``App.theme_variables`` (``$success``, ``$error``, ...)."""

        def colour(name: str, extra: str = "") -> str:
            value = theme_colour(variables, name)
            return f"{extra} {value}".strip() if value else extra

        return cls(
            heading=colour("primary", "bold"),
            ok=colour("success", "bold"),
            error=colour("error", "bold"),
            warning=colour("warning"),
            muted="dim",
            stderr=colour("warning"),
        )


def theme_colour(variables: Mapping[str, str], name: str) -> str | None:
    """A theme variable usable as a Rich colour, or None (some, like ``text-muted``, are
    expressions such as ``auto 60%`` that only Textual's CSS understands)."""
    from rich.color import Color, ColorParseError

    value = variables.get(name)
    if not value:
        return None
    try:
        Color.parse(value)
    except ColorParseError:
        return None
    return value


_STEP_MARKS = {"ok": "✓", "failed": "✗", "skipped": "↷", "timed_out": "⏱"}


def event_text(event: Mapping[str, Any], styles: EventStyles, *, width: int = 160) -> Text | None:
    """One event as one line of text; None for events a reader does not need to see."""
    kind = event.get("type")
    if kind == "run_started":
        name = event.get("name") or one_line(str(event.get("target") or ""), 60) or "run"
        verb = "resumed" if event.get("resumed") else "started"
        return Text.assemble(("▶ ", styles.heading), (f"{name} {verb}", styles.heading))
    if kind == "resumed":
        who = event.get("approver") or "no approver identity"
        return Text.assemble(("↻ ", styles.muted), (f"{event.get('decision')} by {who}", styles.muted))
    if kind == "step_started":
        text = Text.assemble(("● ", styles.heading), (str(event.get("stepId")), "bold"))
        command = event.get("command")
        if isinstance(command, str) and command:
            text.append(f"  {one_line(command, width)}", styles.muted)
        return text
    if kind == "output":
        return output_text(str(event.get("line", "")), str(event.get("stream") or "stdout"), styles)
    if kind == "output_truncated":
        dropped = event.get("droppedLines")
        count = f"{dropped:,}" if isinstance(dropped, int) else str(dropped)
        return Text(f"  … {count} lines not kept in the run log", styles.muted)
    if kind == "step_finished":
        status = str(event.get("status"))
        good = status in ("ok", "skipped")
        text = Text.assemble(
            (f"{_STEP_MARKS.get(status, '?')} ", styles.ok if good else styles.error),
            (str(event.get("stepId")), "bold"),
            (f"  {status}", styles.ok if good else styles.error),
        )
        duration = format_duration(event.get("durationMs"))
        if duration:
            text.append(f"  {duration}", styles.muted)
        if event.get("error"):
            text.append(f"  {one_line(str(event['error']), width)}", styles.error)
        return text
    if kind == "checkpoint":
        what = "approval" if event.get("kind") == "approval" else "input"
        text = Text.assemble(("⏸ ", styles.warning), (f"waiting for {what}: ", styles.warning))
        text.append(one_line(str(event.get("prompt") or ""), width))
        if event.get("approvalId"):
            text.append(f"  ({event['approvalId']})", styles.muted)
        return text
    if kind == "run_finished":
        status = str(event.get("status"))
        style = styles.ok if status == "ok" else styles.error if status == "failed" else styles.warning
        words = {"needs_approval": "halted: waiting for approval", "needs_input": "halted: waiting for input"}
        text = Text.assemble(("■ ", style), (f"run {words.get(status, status)}", style))
        duration = format_duration(event.get("durationMs"))
        if duration:
            text.append(f" in {duration}", styles.muted)
        if event.get("error"):
            text.append(f": {one_line(str(event['error']), width)}", styles.error)
        return text
    if kind == "log_note":
        return Text(f"  (log: {one_line(str(event.get('message', '')), width)})", styles.muted)
    if kind == "run_interrupted":
        from lobster_tui.core.run_log import runner_gone_text

        return Text.assemble(("↯ ", styles.error), ("run interrupted: ", styles.error),
                             (runner_gone_text(event), styles.muted))
    return None


def output_mark(stream: str) -> str:
    """What stands before a line a step printed: ``│`` for stdout, ``!`` for stderr."""
    return "  ! " if stream == "stderr" else "  │ "


def output_text(line: str, stream: str, styles: EventStyles) -> Text:
    """One line a step printed: ``│`` before stdout, ``!`` before stderr (in the warning colour)."""
    line = printable(line).rstrip("\n")
    if stream == "stderr":
        return Text.assemble((output_mark(stream), styles.stderr), (line, styles.stderr))
    return Text.assemble((output_mark(stream), styles.muted), line)


def skipped_text(count: int, run_id: str | None, styles: EventStyles) -> Text:
    """The marker standing for output lines a view did not show (the run log on disk has them)."""
    where = f" — lobster logs {run_id}" if run_id else ""
    return Text(f"  … {count:,} lines not shown{where}", styles.muted)
