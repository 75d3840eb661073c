"""The History screen: every decision in the audit journal, newest first, following new lines live.

The journal (``<state>/audit/journal.jsonl``) is written by the core runner for every resume, so
decisions taken in this app, in another lobster-tui and with ``lobster resume`` all show up here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static
from textual.worker import get_current_worker

from ..event_lines import theme_colour
from ..formatting import one_line, printable
from ..widgets.filter_input import FilterInput
from ..widgets.key_footer import KeyFooter

if TYPE_CHECKING:
    from ..app import LobsterApp

JournalEntry = Mapping[str, Any]

DECISION_FILTERS = ("all", "approve", "reject", "answer", "cancel", "failed")
"""What ``d`` cycles through; ``failed`` is any decision whose resume ended in an error."""

MAX_ROWS = 5000
"""The newest rows shown; older ones stay in the journal (``lobster audit`` prints them all)."""


def is_failed(entry: JournalEntry) -> bool:
    """True when the resume this entry records ended in an error."""
    return _outcome(entry).get("status") == "error"


def matches(entry: JournalEntry, decision: str, needle: str) -> bool:
    """The decision filter (``all``, a decision, or ``failed``) and a case-insensitive text filter."""
    if decision == "failed":
        if not is_failed(entry):
            return False
    elif decision != "all" and entry.get("decision") != decision:
        return False
    if not needle:
        return True
    outcome = _outcome(entry)
    haystack = [
        entry.get("time"), entry.get("approver"), entry.get("user"), entry.get("decision"),
        entry.get("workflow"), entry.get("step"), entry.get("prompt"), entry.get("approvalId"),
        entry.get("stateKey"), outcome.get("status"), outcome.get("error"), outcome.get("next"),
    ]
    folded = needle.casefold()
    return any(folded in str(part).casefold() for part in haystack if part)


def workflow_name(entry: JournalEntry) -> str:
    """A workflow file's name without its folder, or ``$ <pipeline>``."""
    workflow = entry.get("workflow")
    if not isinstance(workflow, str) or not workflow:
        return "?"
    if str(entry.get("stateKey", "")).startswith("pipeline_resume_"):
        return f"$ {workflow}"
    return Path(workflow).stem or workflow


def format_time(value: Any, short: bool = False) -> str:
    """``2026-11-30 05:34:47`` in UTC (as ``lobster audit`` prints it); ``11-30 05:34`` when short."""
    if not isinstance(value, str):
        return "?"
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return one_line(value, 19)
    if stamp.tzinfo is not None:
        stamp = stamp.astimezone(timezone.utc)
    return stamp.strftime("%m-%d %H:%M" if short else "%Y-%m-%d %H:%M:%S")


def outcome_text(entry: JournalEntry) -> str:
    """What the resume did, in a few words: ``ok``, ``→ approval 1a2b3c4d`` (its next gate), ``error: …``."""
    outcome = _outcome(entry)
    status = str(outcome.get("status") or "?")
    if status == "error":
        return f"error: {outcome.get('error') or 'unknown'}"
    if status in ("needs_approval", "needs_input") and outcome.get("next"):
        what = "approval" if status == "needs_approval" else "input"
        nxt = str(outcome["next"])
        return f"→ {what} {nxt if len(nxt) <= 12 else nxt.rsplit('_', 1)[-1][:8]}"
    return status


def _identity(entry: JournalEntry) -> tuple[Any, ...]:
    """What tells two journal lines apart across reads (the file is append-only)."""
    return (entry.get("time"), entry.get("stateKey"), entry.get("decision"), str(entry.get("outcome")))


def _outcome(entry: JournalEntry) -> Mapping[str, Any]:
    outcome = entry.get("outcome")
    return outcome if isinstance(outcome, dict) else {}


class HistoryScreen(Screen[None]):
    """The audit journal as a table, newest first, with a text and a decision filter.

    | Key | Action |
    | :- | :- |
    | `j` / `k`, arrows, `g` / `G` | Move. |
    | `/` | Filter by text (approver, workflow, step, prompt, id, outcome). |
    | `d` | Cycle the decision filter: all, approve, reject, answer, cancel, failed. |
    | `r` | Read the journal again. |
    | `escape` | Clear the filters, else back to the inbox. |
    """

    HELP_NAME = "history"

    BINDINGS: list[BindingType] = [
        Binding("slash", "filter", "Filter", id="history.filter", priority=True),
        Binding("d", "cycle_decision", "Decision", id="history.decision"),
        Binding("r", "reload", "Reload", show=False, id="history.reload"),
        Binding("j", "cursor('down')", "Down", show=False, id="history.down"),
        Binding("k", "cursor('up')", "Up", show=False, id="history.up"),
        Binding("g", "cursor('first')", "First", show=False, id="history.first"),
        Binding("G", "cursor('last')", "Last", show=False, id="history.last"),
        Binding("escape", "back", "Back", id="history.back"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.entries: list[JournalEntry] = []
        """Every readable journal entry, oldest first (as the file holds them)."""
        self.shown: list[JournalEntry] = []
        """The entries on screen, newest first, after the filters."""
        self.skipped = 0
        self.decision_filter = "all"
        self.text_filter = ""
        self._generation = 0
        self._widths: dict[str, int] = {}
        self._widths_for = -1

    @property
    def lobster(self) -> LobsterApp:
        """The app, typed."""
        return cast("LobsterApp", self.app)

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="history-body"):
            box = FilterInput(id="history-filter")
            box.placeholder = "filter: approver, workflow, step, prompt, id or outcome"
            yield box
            table: DataTable[Any] = DataTable(id="history-table", cursor_type="row", zebra_stripes=True)
            yield table
            yield Static("", id="history-detail", markup=False)
        yield KeyFooter()

    @property
    def table(self) -> DataTable[Any]:
        """The journal table."""
        return self.query_one("#history-table", DataTable)

    def on_mount(self) -> None:
        self.sub_title = "history"
        self.query_one("#history-filter", FilterInput).display = False
        self.table.focus()
        self.reload()
        if self.lobster.watch:
            self.follow_journal()

    def on_screen_resume(self) -> None:
        # Decisions taken while another screen was in front are in the journal by now.
        self.reload()

    # -- reading ---------------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the journal in a thread and show it."""
        self._generation += 1
        self._read(self._generation)

    @work(thread=True, exclusive=True, group="history-read")
    def _read(self, generation: int) -> None:
        from lobster_tui.core.audit import read_journal

        entries, skipped = read_journal(self.lobster.state)
        if get_current_worker().is_cancelled:
            return
        try:
            self.app.call_from_thread(self.show_journal, entries, skipped, generation)
        except RuntimeError:
            pass  # the app closed meanwhile

    def show_journal(self, entries: Sequence[JournalEntry], skipped: int = 0, generation: int | None = None) -> None:
        """Put the journal on screen (UI thread); only the newest read is shown."""
        if generation is not None and generation != self._generation:
            return
        # A read can finish while the screen is closing: attached still, its table already gone.
        if not self.is_attached or not self.query("#history-table"):
            return
        self.entries = list(entries)
        self.skipped = skipped
        self._rebuild()

    @work(exclusive=True, group="history-watch")
    async def follow_journal(self) -> None:
        """Follow ``<state>/audit/`` and read the journal again after each burst of changes."""
        from watchfiles import awatch

        app = self.lobster
        folder = app.state.root / "audit"
        try:
            # The runner makes it on the first decision; watching needs it to exist now.
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as error:
            self.notify(f"Not following {folder}: {error}. Press r to read it again.", severity="warning")
            return
        step = max(10, min(50, app.debounce_ms))
        async for _changes in awatch(folder, debounce=app.debounce_ms, step=step, recursive=False):
            self.reload()

    # -- table ---------------------------------------------------------------------------------------

    def on_resize(self) -> None:
        if self._widths_for != self.table.size.width:
            self._rebuild()

    def _column_widths(self) -> dict[str, int]:
        """Fixed time, approver and decision; workflow › step, prompt and outcome share the rest."""
        total = self.table.size.width or 120
        narrow = total < 110
        # Below 140 columns the time reads "11-30 05:34" (the detail pane below has it whole).
        fixed = {"time": 11 if total < 140 else 19, "approver": 8 if narrow else 10, "decision": 8}
        # One cell of padding either side of 6 columns, and a scrollbar.
        spare = max(30, total - sum(fixed.values()) - 2 * 6 - 2)
        where = max(12, int(spare * 0.34))
        outcome = max(10, int(spare * 0.28))
        return {**fixed, "where": where, "prompt": max(10, spare - where - outcome), "outcome": outcome}

    def _rebuild(self) -> None:
        table = self.table
        keep = self._highlighted_index()
        newest_first = list(reversed(self.entries))
        self.shown = [e for e in newest_first if matches(e, self.decision_filter, self.text_filter)][:MAX_ROWS]
        table.clear(columns=True)
        self._widths = self._column_widths()
        self._widths_for = table.size.width
        labels = {"time": "time (UTC)", "approver": "approver", "decision": "decision",
                  "where": "workflow › step", "prompt": "prompt", "outcome": "outcome"}
        for key, label in labels.items():
            table.add_column(label, key=key, width=self._widths[key])
        variables: Mapping[str, str] = self.app.theme_variables
        for entry in self.shown:
            table.add_row(*self._cells(entry, variables))
        if self.shown:
            row = 0
            if keep is not None:
                row = next((i for i, e in enumerate(self.shown) if _identity(e) == keep), 0)
            table.move_cursor(row=row, animate=False)
        self._update_titles()
        self._show_detail()

    def _highlighted_index(self) -> tuple[Any, ...] | None:
        table = self.table
        if not self.shown or not table.is_valid_row_index(table.cursor_row) or table.cursor_row == 0:
            return None  # on the newest row: stay on top, so new lines come into view
        return _identity(self.shown[table.cursor_row])

    def _cells(self, entry: JournalEntry, variables: Mapping[str, str]) -> list[Text | str]:
        decision = str(entry.get("decision") or "?")
        tone = {"approve": "success", "reject": "error", "cancel": "warning", "answer": "accent"}.get(decision)
        w = self._widths
        approver = entry.get("approver")
        who = (
            Text(one_line(str(approver), w["approver"]))
            if approver
            else Text(one_line(str(entry.get("user") or "-"), w["approver"]), style="dim")
        )
        step = one_line(str(entry.get("step") or "?"), 16)
        # The step tells gates of one workflow apart: cut the name, not the step.
        room = max(4, w["where"] - len(step) - 3)
        where = Text.assemble(one_line(workflow_name(entry), room), (" › ", "dim"), step)
        if not entry.get("workflow") and not entry.get("step"):
            # The state was already gone when this resume was tried: only its key is known.
            key = str(entry.get("stateKey") or "?").rsplit("_", 1)[-1][:8]
            where = Text(one_line(f"checkpoint {key} (gone)", w["where"]), style="dim")
        outcome = outcome_text(entry)
        outcome_style = theme_colour(variables, "error") if is_failed(entry) else None
        return [
            format_time(entry.get("time"), short=w["time"] < 19),
            who,
            Text(decision, style=(theme_colour(variables, tone) or "") if tone else ""),
            where,
            Text(one_line(str(entry.get("prompt") or ""), w["prompt"])),  # Text: a str cell is markup
            Text(one_line(outcome, w["outcome"]), style=outcome_style or ""),
        ]

    def _update_titles(self) -> None:
        total = len(self.entries)
        noun = "decision" if total == 1 else "decisions"
        parts = [f"{len(self.shown)} of {total} {noun}" if len(self.shown) != total else f"{total} {noun}"]
        if self.decision_filter != "all":
            parts.append(f"decision: {self.decision_filter}")
        if self.text_filter:
            parts.append(f"filter: {self.text_filter}")
        self.table.border_title = Content("Audit journal · " + " · ".join(parts))  # Content: typed text is not markup
        notes = []
        if self.skipped:
            notes.append(f"{self.skipped} unreadable line{'s' if self.skipped != 1 else ''} skipped")
        if total > MAX_ROWS and len(self.shown) == MAX_ROWS:
            notes.append(f"newest {MAX_ROWS} shown (lobster audit prints all)")
        notes.append("following" if self.lobster.watch else "r reloads")
        self.table.border_subtitle = " · ".join(notes)
        self.sub_title = f"history · {total} decision{'s' if total != 1 else ''}"

    @on(DataTable.RowHighlighted, "#history-table")
    def _row_highlighted(self) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        detail = self.query_one("#history-detail", Static)
        entry = self.highlighted
        if entry is None:
            journal = self.lobster.state.root / "audit" / "journal.jsonl"
            empty = "No decision matches the filters." if self.entries else f"No decisions recorded yet in {journal}."
            detail.update(empty)
            return
        outcome = _outcome(entry)
        lines = [
            (
                f"{format_time(entry.get('time'))} UTC · {entry.get('decision') or '?'} by "
                f"{entry.get('approver') or 'no approver identity'} (user {entry.get('user') or '?'})"
            ),
            f"{entry.get('kind') or 'checkpoint'} {entry.get('approvalId') or '-'} · {entry.get('stateKey') or '?'}",
            f"workflow: {one_line(str(entry.get('workflow') or '?'), 200)} › {entry.get('step') or '?'}",
            f"prompt: {one_line(str(entry.get('prompt') or ''), 300)}",
            f"outcome: {outcome.get('status') or '?'}"
            + (f" · error: {one_line(str(outcome.get('error')), 300)}" if outcome.get("error") else "")
            + (f" · next: {outcome.get('next')}" if outcome.get("next") else ""),
        ]
        if entry.get("answerSha256"):
            lines.append(f"answer sha256: {entry['answerSha256']}")
        detail.update(printable("\n".join(lines)))

    @property
    def highlighted(self) -> JournalEntry | None:
        """The entry under the cursor."""
        table = self.table
        if not self.shown or not table.is_valid_row_index(table.cursor_row):
            return None
        return self.shown[table.cursor_row]

    # -- filters ---------------------------------------------------------------------------------------

    def action_filter(self) -> None:
        """Show the filter box and type into it."""
        box = self.query_one("#history-filter", FilterInput)
        if self.focused is box:
            box.insert_text_at_cursor("/")
            return
        box.display = True
        self.set_focus(box)

    @on(FilterInput.Changed, "#history-filter")
    def _filter_changed(self, message: FilterInput.Changed) -> None:
        self.text_filter = message.value
        self._rebuild()

    @on(FilterInput.Left, "#history-filter")
    def _filter_left(self, message: FilterInput.Left) -> None:
        box = self.query_one("#history-filter", FilterInput)
        if message.cleared or not box.value:
            box.display = False
        self.table.focus()

    def action_cycle_decision(self) -> None:
        """Next decision filter: all → approve → reject → answer → cancel → failed → all."""
        index = DECISION_FILTERS.index(self.decision_filter)
        self.decision_filter = DECISION_FILTERS[(index + 1) % len(DECISION_FILTERS)]
        self._rebuild()

    def action_reload(self) -> None:
        """Read the journal again."""
        self.reload()

    def action_cursor(self, where: str) -> None:
        """Move the cursor: down, up, first, last."""
        table = self.table
        if where == "down":
            table.action_cursor_down()
        elif where == "up":
            table.action_cursor_up()
        elif where == "first" and self.shown:
            table.move_cursor(row=0)
        elif where == "last" and self.shown:
            table.move_cursor(row=len(self.shown) - 1)

    def action_back(self) -> None:
        """Clear the filters first; with none set, go back to the inbox."""
        if self.text_filter or self.decision_filter != "all":
            box = self.query_one("#history-filter", FilterInput)
            box.value = ""
            box.display = False
            self.text_filter = ""
            self.decision_filter = "all"
            self._rebuild()
            self.table.focus()
            return
        self.app.pop_screen()
