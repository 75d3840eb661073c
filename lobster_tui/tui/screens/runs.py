"""The Runs screen (``2``): every run of the state directory, live, whoever started it."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Header, Static
from textual.worker import get_current_worker

from lobster_tui.core.run_log import LOG_SUFFIX, RunSummary, list_runs, runs_dir

from ..formatting import one_line
from ..widgets.key_footer import KeyFooter
from ..widgets.run_list import RunList, run_name

if TYPE_CHECKING:
    from ..app import LobsterApp

EMPTY_HINT = """\
No runs recorded in
  {runs_dir}

Press n to run a workflow from here, or start one in another terminal, e.g.
  lobster run --mode tool examples/deploy.lobster
and it appears here while it runs."""


class RunsScreen(Screen[None]):
    """Lists the runs under ``<state>/runs/`` and keeps the list current.

    The list follows the folder with watchfiles (in an exclusive worker) and also rereads it every
    :attr:`REFRESH_SECONDS` (a watcher can miss events); :func:`~lobster_tui.core.run_log.list_runs`
    reads only the two ends of each log, and a burst of writes (a loud step) rereads at most every
    :attr:`MIN_SCAN_INTERVAL` seconds.

    | Key | Action |
    | :- | :- |
    | `enter` | Open the highlighted run. |
    | `n` | Run a workflow. |
    | `s` | Stop the highlighted run (asks first): one going on in this app, or a `lobster run` elsewhere on this machine. |
    | `r` | Read the runs folder again. |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "start_run", "Run workflow", id="runs.start"),
        Binding("s", "stop", "Stop run", id="runs.stop"),
        Binding("r", "refresh", "Refresh", show=False, id="runs.refresh"),
    ]

    REFRESH_SECONDS: ClassVar[float] = 2.0
    MIN_SCAN_INTERVAL: ClassVar[float] = 0.3

    def __init__(self) -> None:
        super().__init__()
        self._generation = 0
        self._last_scan = 0.0
        self._scan_pending = False
        self._stale = False
        self._select_next: str | None = None
        self._stop_offered = False

    def compose(self) -> ComposeResult:
        app = self.lobster
        yield Header()
        with Vertical(id="runs-body"):
            yield RunList(clock=app.clock, id="runs")
            yield Static(EMPTY_HINT.format(runs_dir=runs_dir(app.state)), id="runs-empty", markup=False)
            yield Static("", id="run-detail", markup=False)
        yield KeyFooter()

    @property
    def lobster(self) -> LobsterApp:
        """The app, typed."""
        return cast("LobsterApp", self.app)

    @property
    def run_list(self) -> RunList:
        """The list widget."""
        return self.query_one("#runs", RunList)

    def on_mount(self) -> None:
        self.query_one("#runs-empty").display = False
        self.run_list.focus()
        self.rescan()
        self.set_interval(self.REFRESH_SECONDS, self._periodic)
        if self.lobster.watch:
            self.watch_runs_dir()

    def on_screen_resume(self) -> None:
        # Back from a run view or the inbox: the runs moved on meanwhile.
        self.rescan()
        self.run_list.refresh_times()

    # -- scanning -------------------------------------------------------------------------------

    def _periodic(self) -> None:
        if self.is_current:
            self.rescan()
        else:
            self._stale = True

    def rescan(self) -> None:
        """Read the run logs' ends in a thread (at most every MIN_SCAN_INTERVAL seconds)."""
        wait = self._last_scan + self.MIN_SCAN_INTERVAL - time.monotonic()
        if wait > 0:
            if not self._scan_pending:
                self._scan_pending = True
                self.set_timer(wait, self._scan_now)
            return
        self._scan_now()

    def _scan_now(self) -> None:
        self._scan_pending = False
        self._stale = False
        self._last_scan = time.monotonic()
        self._generation += 1
        self._scan(self._generation)

    @work(thread=True, exclusive=True, group="runs-scan")
    def _scan(self, generation: int) -> None:
        runs = list_runs(self.lobster.state, now=self.lobster.clock())
        if get_current_worker().is_cancelled:
            return
        try:
            self.app.call_from_thread(self.show_runs, runs, generation)
        except RuntimeError:
            pass  # the app closed meanwhile

    def show_runs(self, runs: list[RunSummary], generation: int | None = None) -> None:
        """Put a scan's result on screen (UI thread); only the newest scan counts."""
        if generation is not None and generation != self._generation:
            return
        if not self.is_attached:
            return
        listing = self.run_list
        listing.set_runs(runs)
        if self._select_next is not None and listing.select_run(self._select_next):
            self._select_next = None
        empty = not runs
        self.query_one("#runs-empty").display = empty
        listing.display = not empty
        if not empty and self.focused is None:
            listing.focus()  # hidden while empty, it lost the focus
        live = sum(1 for run in runs if run.status == "running")
        waiting = sum(1 for run in runs if run.waiting)
        parts = [f"{len(runs)} run{'' if len(runs) == 1 else 's'}"]
        if live:
            parts.append(f"{live} running")
        if waiting:
            parts.append(f"{waiting} waiting")
        self.sub_title = " · ".join(parts)
        self._show_detail(listing.highlighted)
        self._offer_stop()

    def select_when_listed(self, run_id: str) -> None:
        """Highlight this run as soon as a scan lists it."""
        if not self.run_list.select_run(run_id):
            self._select_next = run_id
            self.rescan()

    @work(exclusive=True, group="runs-watch")
    async def watch_runs_dir(self) -> None:
        """Follow ``<state>/runs/`` with watchfiles and rescan after each burst of changes."""
        from watchfiles import awatch

        app = self.lobster
        folder = runs_dir(app.state)
        try:
            app.state.ensure()
            # The run-log writer makes it the same way on a run's first event.
            folder.mkdir(mode=0o700, exist_ok=True)
        except OSError as error:
            self.notify(f"Not watching {folder}: {error}. The list still refreshes every few seconds.",
                        severity="warning")
            return
        step = max(10, min(50, app.debounce_ms))

        def relevant(_change: object, path: str) -> bool:
            return Path(path).name.endswith(LOG_SUFFIX)

        async for _changes in awatch(folder, watch_filter=relevant, debounce=app.debounce_ms, step=step,
                                     recursive=False):
            if self.is_current:
                self.rescan()
            else:
                self._stale = True

    # -- list events ------------------------------------------------------------------------------

    @on(RunList.Opened)
    def _opened(self, message: RunList.Opened) -> None:
        self.lobster.open_run(message.run.id)

    @on(RunList.Highlighted)
    def _highlighted(self, message: RunList.Highlighted) -> None:
        self._show_detail(message.run)
        self._offer_stop()

    def _offer_stop(self) -> None:
        """Refresh the footer when ``s`` starts or stops applying (a footer redraw is not free)."""
        offered = bool(self.check_action("stop", ()))
        if offered != self._stop_offered:
            self._stop_offered = offered
            self.refresh_bindings()

    def _show_detail(self, run: RunSummary | None) -> None:
        detail = self.query_one("#run-detail", Static)
        if run is None:
            detail.update("")
            return
        where = one_line(run.target or "", 200)
        text = f"{run.id} · {run_name(run)} · {where}"
        if run.waiting:
            what = "approval" if run.status == "needs_approval" else "input"
            ident = f" {run.approval_id}" if run.approval_id else ""
            verb = "decide" if run.status == "needs_approval" else "answer"
            text += f"\nwaiting for {what}{ident}: {verb} it in the inbox (1); its log continues here"
        elif run.status == "interrupted":
            text += "\ninterrupted: its process is gone (killed or crashed); the run never finished"
        detail.update(text)

    def action_start_run(self) -> None:
        """Choose a workflow file, fill in its args and run it."""
        self.lobster.action_start_run()

    def action_refresh(self) -> None:
        """Read the runs folder again."""
        self._last_scan = 0.0
        self.rescan()

    def action_stop(self) -> None:
        """Stop the highlighted run (asks first)."""
        run = self.run_list.highlighted
        if run is None:
            return
        live_runs = self.lobster.live_runs
        pid = _other_runner(run)
        if not live_runs.can_stop(run.id) and pid is not None:
            live_runs.request_stop_elsewhere(run.id, pid, name=run_name(run), after=lambda _stopped: self.rescan())
            return
        live_runs.request_stop(run.id, name=run_name(run), after=lambda _stopped: self.rescan())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer ``s`` on a run going on in this app, or running in another process of this host."""
        if action == "stop":
            run = self.run_list.highlighted if self.is_mounted else None
            return run is not None and (self.lobster.live_runs.can_stop(run.id) or _other_runner(run) is not None)
        return True


def _other_runner(run: RunSummary) -> int | None:
    """The pid of another process of this host running ``run`` (whether it may be signalled is
    checked when the stop is confirmed)."""
    pid = run.runner_pid
    return pid if run.status == "running" and pid is not None and pid != os.getpid() else None
