"""Everything a reviewer needs to decide on one checkpoint, as a scrollable column of sections."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import timezone
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Label, Static
from textual.worker import get_current_worker

from lobster_tui.core.checkpoints import BrokenCheckpoint, Checkpoint, StepRecord, identity_problem
from lobster_tui.core.state import StateStore

from ..event_lines import EventStyles, event_text
from ..formatting import Clock, format_age, is_records, one_line, pretty_json, printable, utc_now
from .items_table import ItemsTable

Entry = Checkpoint | BrokenCheckpoint

# Long outputs are cut in the preview; the review screen (full height) shows more.
_STDOUT_LINES = 12
_JSON_LINES = 40


def _clip_lines(text: str, limit: int) -> str:
    lines = text.rstrip("\n").splitlines()
    if len(lines) <= limit:
        return "\n".join(lines)
    return "\n".join([*lines[:limit], f"… {len(lines) - limit} more lines"])


def read_run_events(state: StateStore, run_id: str) -> list[dict[str, Any]] | None:
    """The run's logged events up to its checkpoint, or None when there is no log to read.

    The run-log module is optional at import time (it arrived after the inbox), hence the lazy
    import and the broad fallback: a preview must never fail because a log is missing or odd.
    """
    try:
        from lobster_tui.core.run_log import read_events
    except ImportError:
        return None
    try:
        events = read_events(state, run_id)
    except (LookupError, OSError, ValueError):
        return None
    return [dict(event) for event in events if isinstance(event, Mapping)]


class CheckpointPreview(VerticalScroll, can_focus=True):
    """The preview of the highlighted checkpoint: prompt, items, preview text, subject, the steps
    that ran before the gate, and the identity rules with who you are.

    | Key | Action |
    | :- | :- |
    | `up` / `down`, `pageup` / `pagedown` | Scroll. |
    """

    HELP_NAME = "preview"

    entry: reactive[Entry | None] = reactive(None)
    """The checkpoint shown; None shows a hint."""

    AGE_REFRESH_SECONDS: ClassVar[float] = 15.0
    """Seconds between two repaints of the header's age (the inbox list repaints its ages as often)."""

    def __init__(
        self,
        *,
        state: StateStore | None = None,
        approver: str | None = None,
        approver_source: str = "",
        clock: Clock = utc_now,
        full: bool = False,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self._state = state
        self._approver = approver
        self._approver_source = approver_source
        self._clock = clock
        self._full = full
        self._loaded_for: str | None = None
        self._meta_shown = ""
        # The run's logged events before the gate, once its log has been read.
        self.run_events: list[dict[str, Any]] | None = None

    def on_mount(self) -> None:
        self.set_interval(self.AGE_REFRESH_SECONDS, self.refresh_age)

    def refresh_age(self) -> None:
        """Repaint the header line's age against the clock; the rest of the preview stays as it is."""
        entry = self.entry
        if not isinstance(entry, Checkpoint):
            return
        meta = self._meta_text(entry)
        if meta == self._meta_shown:
            return  # most ticks: an age in minutes or hours has not moved on
        for line in self.query("#preview-meta").results(Static):
            line.update(meta)
            self._meta_shown = meta

    def show(self, entry: Entry | None) -> None:
        """Show a checkpoint (and fetch its run log in the background)."""
        if entry is None or self.entry is None or entry.state_key != self.entry.state_key:
            self.run_events = None
        self.entry = entry
        if isinstance(entry, Checkpoint) and entry.run_id and self._state is not None:
            if self._loaded_for != entry.state_key:
                self._loaded_for = entry.state_key
                self._load_run_events(entry.state_key, entry.run_id)
        else:
            self._loaded_for = None

    def watch_entry(self) -> None:
        # Moving down a list of similar checkpoints gives previews of the same sections: the
        # widgets shown take the new text in place. Recomposing (unmount, mount, styles, layout)
        # cost ~100 ms a keypress on a small machine; other changes of shape still recompose.
        if not self.is_mounted:
            return
        fresh = list(self.compose())
        current = list(self.children)
        if len(fresh) == len(current) and all(map(_same_slot, current, fresh)):
            for shown, new in zip(current, fresh):
                assert isinstance(shown, Static) and isinstance(new, Static)
                if shown.content != new.content:
                    shown.update(new.content)
            return
        self.refresh(recompose=True)

    @work(thread=True, exclusive=True, group="preview-run-log")
    def _load_run_events(self, state_key: str, run_id: str) -> None:
        """Read the run log off the UI thread; drop the result if the highlight moved on."""
        assert self._state is not None
        events = read_run_events(self._state, run_id)
        if get_current_worker().is_cancelled or not events:
            return
        try:
            self.app.call_from_thread(self._apply_run_events, state_key, events)
        except RuntimeError:
            pass  # the app closed meanwhile

    def _apply_run_events(self, state_key: str, events: list[dict[str, Any]]) -> None:
        if self.entry is None or self.entry.state_key != state_key:
            return
        self.run_events = events
        lines = self._event_lines(events, self._styles())
        # Only this section changes: update it in place rather than recompose the preview.
        for steps in self.query("#before-steps").results(Static):
            steps.update(Text("\n").join(lines) if lines else Text("Nothing ran."))
            steps.remove_class("hint")

    # -- composition -------------------------------------------------------------------------------

    def _styles(self) -> EventStyles:
        return EventStyles.from_theme(self.app.theme_variables)

    def compose(self) -> ComposeResult:
        entry = self.entry
        if entry is None:
            yield Static("Nothing selected. Highlight a checkpoint to see what it would do.", classes="hint")
            return
        if isinstance(entry, BrokenCheckpoint):
            yield from self._compose_broken(entry)
            return
        yield from self._compose_checkpoint(entry)

    def _section(self, title: str) -> Label:
        return Label(title, classes="section-title")

    def _compose_broken(self, entry: BrokenCheckpoint) -> ComposeResult:
        yield Static(Text.assemble(("✗ Unreadable checkpoint ", "bold"), entry.state_key), classes="title -error")
        yield self._section("Why")
        yield Static(printable(entry.reason), classes="-error", markup=False)
        yield self._section("File")
        yield Static(entry.path.name, markup=False)
        yield Static(
            "It cannot be approved or answered. Press c to delete it, or repair the file; "
            "the inbox picks up the change by itself.",
            classes="hint",
        )

    def _compose_checkpoint(self, entry: Checkpoint) -> ComposeResult:
        kind = "Approval" if entry.kind == "approval" else "Input request"
        # A pipeline's "name" is its whole text: too long for a title, so it gets a section.
        name = entry.workflow if entry.source == "workflow" else "pipeline"
        yield Static(
            Text.assemble((f"{kind} · ", "bold"), one_line(name, 80), " · ", (entry.step, "bold")),
            classes="title",
        )
        self._meta_shown = self._meta_text(entry)
        yield Static(self._meta_shown, id="preview-meta", classes="meta", markup=False)
        yield self._section("Prompt")
        yield Static(printable(entry.prompt), classes="prompt", markup=False)
        if entry.source == "pipeline":
            yield self._section("Pipeline")
            yield Static(printable(entry.workflow), classes="raw", markup=False)
        if entry.note:
            yield Static(printable(entry.note), classes="-error", markup=False)
        if entry.kind == "approval":
            yield from self._compose_items(entry)
            if entry.preview:
                yield self._section("Preview text")
                yield Static(self._limit(printable(entry.preview), _JSON_LINES), classes="raw", markup=False)
        else:
            if entry.has_subject:
                yield self._section("Subject")
                yield Static(self._limit(pretty_json(entry.subject), _JSON_LINES), classes="raw", markup=False)
            if entry.has_defaults:
                yield self._section("Defaults")
                yield Static(self._limit(pretty_json(entry.defaults), _JSON_LINES), classes="raw", markup=False)
            yield self._section("Answer schema")
            yield Static(self._limit(pretty_json(entry.response_schema), _JSON_LINES), classes="raw", markup=False)
        yield from self._compose_before(entry)
        yield from self._compose_identity(entry)

    def _meta_text(self, entry: Checkpoint) -> str:
        """The header line: short id, file, when it was made and how long ago (by the app's clock)."""
        stamp = entry.created_at.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        age = format_age(entry.created_at, self._clock())
        where = f" · {Path(entry.file_path).name}" if entry.file_path else ""
        return f"id {entry.short_id}{where} · {stamp} ({age} ago)"

    def _limit(self, text: str, lines: int) -> str:
        return text if self._full else _clip_lines(text, lines)

    def _compose_items(self, entry: Checkpoint) -> ComposeResult:
        count = len(entry.items)
        yield self._section(f"Items ({count})")
        if not entry.items:
            yield Static("No items.", classes="hint")
        elif is_records(entry.items):
            table = ItemsTable(entry.items, classes="items")
            if self._full:
                table.styles.max_height = None
            yield table
        else:
            yield Static(self._limit(pretty_json(entry.items), _JSON_LINES), classes="raw", markup=False)

    def _compose_before(self, entry: Checkpoint) -> ComposeResult:
        yield self._section("Before the gate")
        styles = self._styles()
        if self.run_events:
            lines = self._event_lines(self.run_events, styles)
            yield Static(Text("\n").join(lines) if lines else Text("Nothing ran."), classes="steps", id="before-steps")
            return
        # The gate's own record (a workflow keeps one) is the checkpoint itself, not history.
        records = [r for r in entry.steps_before if r.step_id != entry.step]
        if not records:
            yield Static("Nothing ran before this gate.", classes="hint", id="before-steps")
            return
        yield Static(Text("\n").join(self._record_lines(records, styles)), classes="steps", id="before-steps")

    def _event_lines(self, events: Iterable[Mapping[str, Any]], styles: EventStyles) -> list[Text]:
        lines: list[Text] = []
        per_step: dict[str, int] = {}
        for event in events:
            if event.get("type") == "output" and not self._full:
                step = str(event.get("stepId"))
                per_step[step] = per_step.get(step, 0) + 1
                if per_step[step] > _STDOUT_LINES:
                    continue
            line = event_text(event, styles)
            if line is not None:
                lines.append(line)
        return lines

    def _record_lines(self, records: Iterable[StepRecord], styles: EventStyles) -> list[Text]:
        marks = {"ok": ("✓", styles.ok), "skipped": ("↷", styles.muted), "failed": ("✗", styles.error)}
        lines: list[Text] = []
        for record in records:
            mark, style = marks.get(record.status, ("?", styles.muted))
            line = Text.assemble((f"{mark} ", style), (record.step_id, "bold"), (f"  {record.status}", style))
            if record.command:
                line.append(f"  {one_line(record.command, 100)}", styles.muted)
            lines.append(line)
            body = record.stdout
            if not body and record.has_json:
                body = pretty_json(record.json_value)
            if body:
                text = printable(body).rstrip("\n")
                shown = text if self._full else _clip_lines(text, _STDOUT_LINES)
                for out in shown.splitlines():
                    lines.append(Text.assemble(("  │ ", styles.muted), out))
        return lines

    def _compose_identity(self, entry: Checkpoint) -> ComposeResult:
        yield self._section("Who decides")
        rules: list[str] = []
        if entry.required_approver:
            rules.append(f"Required approver: {entry.required_approver}")
        if entry.initiated_by:
            rules.append(f"Initiated by: {entry.initiated_by}")
        if entry.require_different_approver:
            rules.append("The approver must differ from whoever started the run.")
        if not rules:
            rules.append("No approver rules: anyone may decide." if entry.kind == "approval" else "Anyone may answer.")
        who = self._approver or "not set (use --approver or LOBSTER_APPROVAL_APPROVED_BY)"
        source = f" ({self._approver_source})" if self._approver and self._approver_source else ""
        rules.append(f"You are: {who}{source}")
        yield Static("\n".join(printable(rule) for rule in rules), classes="identity", markup=False)
        if entry.kind == "approval":
            problem = identity_problem(entry, self._approver)
            if problem:
                yield Static(f"✗ You may not approve: {printable(problem)}", classes="-error identity-verdict", markup=False)
            else:
                yield Static("✓ You may approve this.", classes="-ok identity-verdict")


def _same_slot(shown: Widget, fresh: Widget) -> bool:
    """Whether ``fresh`` can be shown by updating ``shown``'s text (same kind of plain text widget)."""
    return (
        type(shown) is type(fresh)
        and isinstance(shown, Static)
        and shown.id == fresh.id
        and shown.classes == fresh.classes
        and shown._render_markup == fresh._render_markup
    )
