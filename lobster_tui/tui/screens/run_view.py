"""One run: its step timeline beside its log, live while it runs, the whole story once it is done.

Where the events come from:

- a run started from this app (a :class:`~lobster_tui.tui.live_runs.LiveRun`) shows the story the
  app fills from the runner's own events (every line, not only what the run log keeps); if it
  halts at a checkpoint, the view goes on following its log, where a resume appends;
- any other run (another terminal, an earlier session, a decision's resume) is read from its run
  log by :func:`~lobster_tui.core.run_log.follow_events` in a thread worker: a finished run reads
  start to end across its checkpoints, a live one keeps following until it finishes or its runner
  is gone (killed or crashed: the follow ends with ``run_interrupted`` and the view reads
  "interrupted", as the Runs list does). Events cross to the UI through a bounded
  :class:`~lobster_tui.tui.event_feed.EventFeed` drained on a timer.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Header, Input, Static

from ..event_feed import EventFeed
from ..event_lines import theme_colour
from ..formatting import format_age, one_line
from ..live_runs import LiveRun
from ..run_story import TERMINAL, WAITING, RunStory, parse_time, span
from ..widgets.key_footer import KeyFooter
from ..widgets.run_list import STATUS_LABELS
from ..widgets.run_log_view import RunLogView
from ..widgets.run_timeline import RunTimeline

if TYPE_CHECKING:
    from ..app import LobsterApp


class RunViewScreen(Screen[None]):
    """A run's steps, checkpoints and decisions beside its stdout and stderr.

    | Key | Action |
    | :- | :- |
    | `escape` | Back to the runs. |
    | `s` | Stop the run (asks first; only runs going on in this app). |
    | `tab` | Move between the steps and the log. |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="run.back"),
        Binding("s", "stop", "Stop run", id="run.stop"),
    ]

    PUMP_INTERVAL: ClassVar[float] = 0.05
    """Seconds between two looks for new events (a batch at a time, never once per line)."""

    RUNNER_CHECK_INTERVAL: ClassVar[float] = 2.0
    """Seconds between two looks, while a followed log is silent mid-run, at whether its runner
    is still there (a runner can die while you watch); as often as the Runs list re-reads."""

    def __init__(self, run_id: str | None, live: LiveRun | None = None) -> None:
        super().__init__()
        self.run_id = run_id
        self.live = live
        self.story = live.story if live is not None else RunStory(run_id=run_id)
        self._feed: EventFeed | None = None
        self._stop = threading.Event()
        self._following_file = False
        self._seen_version = -1
        self._seen_shape: tuple[object, ...] = ()
        self._finished_noted = False
        self._summary_plain = ""
        self._stop_offered = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="run-summary", markup=False)
        with Horizontal(id="run-body"):
            yield RunTimeline(id="run-timeline")
            with Vertical(id="run-log-pane"):
                yield RunLogView(self.story, id="run-log")
                yield Input(placeholder="search the log (enter: find, escape: close)", id="run-search")
        yield KeyFooter()

    @property
    def lobster(self) -> LobsterApp:
        """The app, typed."""
        return cast("LobsterApp", self.app)

    @property
    def log_view(self) -> RunLogView:
        """The log widget."""
        return self.query_one("#run-log", RunLogView)

    @property
    def timeline(self) -> RunTimeline:
        """The steps widget."""
        return self.query_one("#run-timeline", RunTimeline)

    def on_mount(self) -> None:
        self.query_one("#run-search", Input).display = False
        self.log_view.focus()
        if self.live is None:
            self._follow_file(0)
        else:
            self.lobster.live_runs.drain_now()
        self.set_interval(self.PUMP_INTERVAL, self._pump)
        self.set_interval(1.0, self._tick)
        self._pump()

    def on_unmount(self) -> None:
        self._stop.set()

    # -- events in -------------------------------------------------------------------------------

    def _follow_file(self, skip_segments: int) -> None:
        """Read (and follow) the run's log in a thread; skip segments the story already has."""
        run_id = self.story.run_id or self.run_id
        if run_id is None:
            return
        self._following_file = True
        self._feed = EventFeed(keep_lines=self.story.max_lines)
        self._read_log(run_id, skip_segments, self._feed)

    @work(thread=True, exclusive=True, group="run-follow")
    def _read_log(self, run_id: str, skip_segments: int, feed: EventFeed) -> None:
        from lobster_tui.core.run_log import follow_events

        skipped = 0
        try:
            # With the app's clock, so a log without a pid reads interrupted here when the list says so.
            events = follow_events(self.lobster.state, run_id, self._stop, poll=0.05,
                                   runner_check=self.RUNNER_CHECK_INTERVAL, now=self.lobster.clock)
            for event in events:
                if skipped < skip_segments:
                    if event.get("type") == "run_finished":
                        skipped += 1
                    continue
                feed.push(event)
        except ValueError as error:  # a run id that cannot name a log
            feed.push({"type": "log_note", "runId": run_id, "message": str(error)})

    def _pump(self) -> None:
        """Take what arrived (UI thread) and repaint what changed."""
        if self._feed is not None:
            items, _dropped = self._feed.drain()
            if items:
                self.story.take(items)
        live = self.live
        if (
            live is not None
            and live.drained
            and not self._following_file
            and self.story.status in WAITING
        ):
            # Halted at a checkpoint: whoever resumes it appends to its log; follow that.
            self._follow_file(self.story.segments_finished)
        if self.story.version == self._seen_version:
            return
        self._seen_version = self.story.version
        self.log_view.sync()
        # The timeline and the summary change shape only with steps, checkpoints and the status;
        # line counts and durations are repainted by the one-second tick (cheaper on a loud step).
        story = self.story
        shape = (story.status, story.run_id, story.error, len(story.timeline),
                 tuple((getattr(e, "status", None), getattr(e, "decision", None)) for e in story.timeline[-3:]))
        if shape != self._seen_shape:
            self._seen_shape = shape
            self.timeline.show(story, self.lobster.clock())
            self._show_summary()
            self._offer_stop()
        self._note_finish()

    def _offer_stop(self) -> None:
        """Refresh the footer only when ``s`` starts or stops applying (a footer redraw is not free)."""
        offered = bool(self.check_action("stop", ()))
        if offered != self._stop_offered:
            self._stop_offered = offered
            self.refresh_bindings()

    def _tick(self) -> None:
        # Durations and line counts of what is running move on.
        if self.story.is_live:
            self.timeline.show(self.story, self.lobster.clock())
            self._show_summary()

    def _note_finish(self) -> None:
        live = self.live
        if live is None or self._finished_noted or not live.drained:
            return
        self._finished_noted = True
        failure = live.failure
        if failure and self.story.status == "starting":
            self.story.status = "failed"
            self.story.error = failure
            self._show_summary()

    # -- showing -----------------------------------------------------------------------------------

    def _show_summary(self) -> None:
        story = self.story
        variables = self.app.theme_variables
        now = self.lobster.clock()
        status = story.status
        colour = {"running": "accent", "ok": "success", "failed": "error", "cancelled": "error",
                  "interrupted": "error"}.get(
            status, "warning" if status in WAITING else ""
        )
        style = (theme_colour(variables, colour) or "") if colour else "dim"
        label = STATUS_LABELS.get(status, "… starting" if status == "starting" else status)
        name = story.name or (self.live.path.rsplit("/", 1)[-1] if self.live else None) or story.target or "run"
        text = Text.assemble((f"{label}", f"bold {style}".strip()), "  ", (one_line(name, 40), "bold"))
        started = parse_time(story.started)
        if started is not None:
            text.append(f"  started {format_age(started, now)} ago", "dim")
        duration = span(story.duration_ms(now))
        if duration and status == "interrupted":
            # Its runner died some time after the last event it logged; when exactly, nobody wrote down.
            text.append(f" · last event after {duration}", "dim")
        elif duration:
            text.append(f" · took {duration}" if status in TERMINAL else f" · {duration}", "dim")
        if story.run_id:
            text.append(f" · run {story.run_id}", "dim")
        second = ""
        if story.error:
            second = one_line(story.error, 200)
        elif story.interruption and status == "interrupted":
            second = story.interruption
        elif status in WAITING:
            if status == "needs_approval":
                second = "waiting for approval: decide it in the inbox (1); this view follows the resumed run"
            else:
                second = "waiting for input: answer it in the inbox (1); this view follows the resumed run"
        elif story.target:
            second = one_line(story.target, 200)
        if second:
            text.append("\n")
            alarming = story.error or status == "interrupted"
            text.append(second, (theme_colour(variables, "error") or "bold") if alarming else "dim")
        if text.plain != self._summary_plain:  # an update costs a layout: only when it changed
            self._summary_plain = text.plain
            self.query_one("#run-summary", Static).update(text)
        self.sub_title = f"run {story.run_id}" if story.run_id else "starting a run"

    # -- search ------------------------------------------------------------------------------------

    @on(RunLogView.SearchRequested)
    def _search_requested(self) -> None:
        box = self.query_one("#run-search", Input)
        box.display = True
        box.value = self.log_view.query
        self.set_focus(box)

    @on(Input.Submitted, "#run-search")
    def _search_submitted(self, message: Input.Submitted) -> None:
        self.log_view.search(message.value)
        self._close_search()

    @on(Input.Changed, "#run-search")
    def _search_changed(self, message: Input.Changed) -> None:
        # Search as you type (a bounded tail of lines: cheap).
        if message.value:
            self.log_view.search(message.value)

    def _close_search(self) -> None:
        box = self.query_one("#run-search", Input)
        box.display = False
        self.log_view.focus()

    @on(RunTimeline.LineRequested)
    def _line_requested(self, message: RunTimeline.LineRequested) -> None:
        if message.line < self.story.first_number:
            self.notify("That part of the log is no longer kept here; `lobster logs` shows what the run log has.",
                        severity="warning")
        self.log_view.show_line(message.line)

    # -- actions -----------------------------------------------------------------------------------

    def action_back(self) -> None:
        """Back to the runs (or close the search box)."""
        if self.focused is self.query_one("#run-search", Input):
            self._close_search()
            return
        self.app.pop_screen()

    def action_stop(self) -> None:
        """Stop this run (asks first)."""
        name = self.story.name or (self.live.path if self.live else "") or ""
        self.lobster.live_runs.request_stop(self.story.run_id or self.run_id, self.live, name=name)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer ``s`` only while this app runs the run."""
        if action == "stop":
            return self.lobster.live_runs.can_stop(self.story.run_id or self.run_id, self.live)
        return True
