"""The home screen: pending checkpoints, the highlighted one's preview and the live run log."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Header, Static
from textual.worker import get_current_worker

from lobster_tui.core.checkpoints import BrokenCheckpoint, Checkpoint, CheckpointScanner
from lobster_tui.core.state import APPROVAL_PREFIX, RESUME_PREFIXES

from ..widgets.checkpoint_list import CheckpointList
from ..widgets.filter_input import FilterInput
from ..widgets.key_footer import KeyFooter
from ..widgets.log_panel import LogPanel
from ..widgets.preview import CheckpointPreview

if TYPE_CHECKING:
    from ..app import LobsterApp

Entry = Checkpoint | BrokenCheckpoint

EMPTY_HINT = """\
No pending checkpoints in
  {state_dir}

A checkpoint appears here as soon as a run halts at an approval or input step, e.g.:
  lobster run --mode tool examples/inbox-cleanup.lobster
or try everything on sample data:
  lobster-tui --demo"""


def is_state_file(name: str) -> bool:
    """True for files whose change can change the inbox (resume states and approval ids)."""
    return name.endswith(".json") and (name.startswith(RESUME_PREFIXES) or name.startswith(APPROVAL_PREFIX))


class InboxScreen(Screen[None]):
    """Lists pending checkpoints, follows the state directory and hosts the live log panel.

    | Key | Action |
    | :- | :- |
    | `/` | Filter the list. |
    | `r` | Read the state directory again. |
    | `l` | Show or hide the run log. |
    | `escape` | Clear the filter. |
    | `s` | Stop the runs in progress (asks first). |
    | `tab` | Move between list, preview and log. |
    """

    # Back from a modal with nothing focused (an empty inbox hides its list), Textual would focus
    # the first focusable widget, the hidden filter box, and 2 or n would be typed into it.
    AUTO_FOCUS = "#checkpoints"

    BINDINGS: list[BindingType] = [
        # Priority: runs as the key arrives, so the keys typed right after "/" (already queued)
        # go to the filter box and not to the list ("q" would quit).
        Binding("slash", "filter", "Filter", id="inbox.filter", priority=True),
        # In help and the palette; left out of the footer so 80 columns fit the rest.
        Binding("r", "rescan", "Rescan", show=False, id="inbox.rescan"),
        Binding("l", "toggle_log", "Log", id="inbox.toggle_log"),
        Binding("escape", "clear_filter", "Clear filter", id="inbox.clear_filter"),
        Binding("s", "stop", "Stop run", id="inbox.stop"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._scan_generation = 0
        self._select_next: str | None = None
        self._scanner: CheckpointScanner | None = None

    def compose(self) -> ComposeResult:
        app = self.lobster
        yield Header()
        with Horizontal(id="inbox-body"):
            with Vertical(id="list-pane"):
                yield FilterInput(id="filter")
                yield CheckpointList(clock=app.clock, stale_after=app.config.stale_after, id="checkpoints")
                yield Static(EMPTY_HINT.format(state_dir=app.state.root), id="empty-hint", markup=False)
            with Vertical(id="side-pane"):
                yield CheckpointPreview(
                    state=app.state,
                    approver=app.approver,
                    approver_source=app.approver_source,
                    clock=app.clock,
                    id="preview",
                )
                yield LogPanel(id="log")
        yield KeyFooter()

    @property
    def lobster(self) -> LobsterApp:
        """The app, typed."""
        return cast("LobsterApp", self.app)

    @property
    def checkpoint_list(self) -> CheckpointList:
        """The list widget."""
        return self.query_one("#checkpoints", CheckpointList)

    @property
    def log_panel(self) -> LogPanel:
        """The live log panel."""
        return self.query_one("#log", LogPanel)

    @property
    def preview(self) -> CheckpointPreview:
        """The preview widget."""
        return self.query_one("#preview", CheckpointPreview)

    def on_mount(self) -> None:
        self.query_one("#filter", FilterInput).display = False
        self.query_one("#empty-hint").display = False
        self.log_panel.display = False
        self.checkpoint_list.focus()
        # After the first frame: a scan in a thread while the app is still starting starves both
        # (the GIL changes hands at every file the scan opens), so the list would come later.
        self.call_after_refresh(self.rescan)
        if self.lobster.watch:
            self.watch_state_dir()

    # -- scanning ---------------------------------------------------------------------------------

    def rescan(self) -> None:
        """Read the state directory in a thread and show what is pending."""
        self._scan_generation += 1
        self._scan(self._scan_generation)

    @property
    def scanner(self) -> CheckpointScanner:
        """Scans the state directory; keeps the last scan so a rescan reads only changed files."""
        if self._scanner is None:
            self._scanner = CheckpointScanner(self.lobster.state)
        return self._scanner

    @work(thread=True, exclusive=True, group="scan")
    def _scan(self, generation: int) -> None:
        entries = self.scanner.scan()
        if get_current_worker().is_cancelled:
            return
        try:
            self.app.call_from_thread(self.show_entries, entries, generation)
        except RuntimeError:
            pass  # the app closed while we were reading; nobody is left to show it to

    def show_entries(self, entries: Sequence[Entry], generation: int | None = None) -> None:
        """Put a scan's result on screen (UI thread).

        Cancelling a thread worker does not stop it, so an older scan can finish after a newer
        one; only the newest scan's result is shown.
        """
        if generation is not None and generation != self._scan_generation:
            return
        if not self.is_attached or self._closing:
            return
        self.checkpoint_list.set_entries(entries)
        if self._select_next is not None and self.checkpoint_list.select_key(self._select_next):
            self._select_next = None
        arrived = self.lobster.notice.scanned(entries)
        if arrived:
            self._announce_arrivals(arrived)
        self._update_title()
        empty = not entries
        self.query_one("#empty-hint").display = empty
        self.checkpoint_list.display = not empty
        if empty:
            self.preview.show(None)

    def _update_title(self) -> None:
        """``3 pending · 1 broken · 2 new`` in the header; the badge stays until the reviewer looks."""
        entries = self.checkpoint_list.entries
        pending = sum(1 for e in entries if isinstance(e, Checkpoint))
        broken = len(entries) - pending
        title = f"{pending} pending"
        if broken:
            title += f" · {broken} broken"
        badge = self.lobster.notice.badge
        if badge:
            title += f" · ✦ {badge}"
        self.sub_title = title
        self.app.sub_title = title
        self.checkpoint_list.set_new(self.lobster.notice.unseen)

    def _announce_arrivals(self, arrived: Sequence[Entry]) -> None:
        """A checkpoint arrived while the app is open: bell and desktop notification (as configured)."""
        from ..notify import describe_arrivals, desktop_notification

        app = self.lobster
        if app.config.bell:
            app.bell()
        if app.config.notifications:
            title, body = describe_arrivals(list(arrived))
            desktop_notification(app, title, body, app.env)

    def _looked(self, state_key: str | None = None) -> None:
        if self.lobster.notice.seen(state_key):
            self._update_title()

    def on_key(self, event: events.Key) -> None:
        # Any key (or click) on the inbox means the reviewer is looking: the badge has done its job.
        # A highlight alone does not count: the cursor lands on an arrival by itself in an empty list.
        self._looked()

    def on_click(self, event: events.Click) -> None:
        self._looked()

    @work(exclusive=True, group="watch")
    async def watch_state_dir(self) -> None:
        """Follow the state directory with watchfiles and rescan after each burst of changes."""
        from watchfiles import awatch

        app = self.lobster
        root = app.state.root
        try:
            # The runner creates it on its first halt anyway; watching needs it to exist now.
            app.state.ensure()
        except OSError as error:
            self.notify(f"Not watching {root}: {error}. Press r to rescan.", severity="warning")
            return
        step = max(10, min(50, app.debounce_ms))

        def relevant(_change: object, path: str) -> bool:
            return is_state_file(Path(path).name)

        async for _changes in awatch(
            root, watch_filter=relevant, debounce=app.debounce_ms, step=step, recursive=False
        ):
            self.rescan()

    # -- list events ------------------------------------------------------------------------------

    @on(CheckpointList.Highlighted)
    def _highlighted(self, message: CheckpointList.Highlighted) -> None:
        self.preview.show(message.entry)

    @on(CheckpointList.BulkRequested)
    def _bulk_requested(self, message: CheckpointList.BulkRequested) -> None:
        self.lobster.bulk.request(message.kind, message.entries)  # type: ignore[arg-type]

    @on(CheckpointList.Opened)
    def _opened(self, message: CheckpointList.Opened) -> None:
        self.lobster.open_entry(message.entry)

    @on(CheckpointList.DecisionRequested)
    def _decision_requested(self, message: CheckpointList.DecisionRequested) -> None:
        self.lobster.request_decision(message.kind, message.entry)

    # -- filter -------------------------------------------------------------------------------------

    @on(FilterInput.Changed, "#filter")
    def _filter_changed(self, message: FilterInput.Changed) -> None:
        had_filter = bool(self.checkpoint_list.filter_text)
        self.checkpoint_list.filter_text = message.value
        self._update_filter_title()
        if had_filter != bool(message.value):
            self.refresh_bindings()

    @on(FilterInput.Left, "#filter")
    def _filter_left(self, message: FilterInput.Left) -> None:
        box = self.query_one("#filter", FilterInput)
        if message.cleared or not box.value:
            box.display = False
        self.checkpoint_list.focus()

    def _update_filter_title(self) -> None:
        listing = self.checkpoint_list
        if listing.filter_text:
            # Content, not str: a str border title is markup, and what was typed may be "[/x".
            listing.border_title = Content(f"filter: {listing.filter_text}  ({len(listing.shown)} of {len(listing.entries)})")
        else:
            listing.border_title = None

    def select_when_listed(self, state_key: str) -> None:
        """Highlight this checkpoint as soon as a scan lists it (now, if it already does)."""
        if not self.checkpoint_list.select_key(state_key):
            self._select_next = state_key

    def action_filter(self) -> None:
        """Show the filter box and type into it."""
        box = self.query_one("#filter", FilterInput)
        if self.focused is box:
            box.insert_text_at_cursor("/")  # a "/" typed into the filter is text (e.g. /var/log)
            return
        box.display = True
        # Focus now, not on the next idle (Widget.focus): keys typed right after "/" are already
        # queued, and a "q" among them must reach the filter, not quit the app.
        self.set_focus(box)

    def action_clear_filter(self) -> None:
        """Show every checkpoint again."""
        box = self.query_one("#filter", FilterInput)
        box.value = ""
        box.display = False
        self.checkpoint_list.filter_text = ""
        self._update_filter_title()
        self.checkpoint_list.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer "clear filter" only while a filter is set."""
        if action == "clear_filter":
            return bool(self.checkpoint_list.filter_text)
        if action == "stop":
            return self.lobster.running > 0
        return True

    def action_stop(self) -> None:
        """Stop the runs in progress, after a confirmation."""
        self.lobster.request_stop()

    def action_rescan(self) -> None:
        """Read the state directory again (the watcher can miss events, e.g. on network drives)."""
        self.rescan()

    def action_toggle_log(self) -> None:
        """Show or hide the run log."""
        self.log_panel.display = not self.log_panel.display

    def show_log(self) -> None:
        """Make sure the run log is visible (a decision just started)."""
        self.log_panel.display = True
