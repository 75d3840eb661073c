"""``LobsterApp``: the inbox of pending checkpoints, and the one place decisions are carried out.

Every edge is a parameter of :func:`create_app` (state directory, watcher on/off, clock, approver,
environment, the runner's ``resume``), so tests drive the real app against real temp directories
and swap only what they must.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.worker import Worker

from lobster_tui.core.checkpoints import BrokenCheckpoint, Checkpoint, identity_problem
from lobster_tui.core.state import StateStore, default_state_dir

from .bulk import BulkDecisions
from .commands import LobsterCommands
from .config import Config, apply_config, load_config
from .decisions import Decision, DecisionKind, DecisionResult, carry_out, still_pending
from .event_feed import EventFeed
from .formatting import Clock, one_line, utc_now
from .live_runs import LiveRuns
from .messages import DecisionFinished, DecisionStarted
from .notify import ArrivalNotice
from .resources import stylesheet
from .screens.confirm import ConfirmScreen
from .screens.help import HelpScreen, help_rows
from .screens.history import HistoryScreen
from .screens.inbox import InboxScreen
from .screens.review import ReviewScreen

Entry = Checkpoint | BrokenCheckpoint
ResumeFunction = Callable[..., Any]


def _default_resume(*args: Any, **kwargs: Any) -> Any:
    # Imported on first use: the runner pulls in the pipeline and workflow engines.
    from lobster_tui.core.runner import resume

    return resume(*args, **kwargs)


class LobsterApp(App[None]):
    """A terminal inbox of pending Lobster checkpoints.

    | Key | Action |
    | :- | :- |
    | `?` | Help: every key that applies where you are. |
    | `ctrl+p` | Command palette with the same actions. |
    | `q` | Quit. |
    """

    TITLE = "lobster"
    CSS_PATH = [stylesheet()]
    COMMANDS: ClassVar = App.COMMANDS | {LobsterCommands}
    # Screens get -narrow below 110 columns (panes stack) and -very-wide from 170 (halves).
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]] | None] = [
        (0, "-narrow"),
        (110, "-wide"),
        (170, "-very-wide"),
    ]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("1", "show_inbox", "Inbox", id="app.inbox"),
        Binding("2", "show_runs", "Runs", id="app.runs"),
        Binding("3", "history", "History", id="app.history"),
        Binding("n", "start_run", "Run workflow", show=False, id="app.start_run"),
    ]

    def __init__(
        self,
        *,
        state: StateStore,
        watch: bool = True,
        clock: Clock = utc_now,
        approver: str | None = None,
        approver_source: str = "",
        env: Mapping[str, str] | None = None,
        resume: ResumeFunction = _default_resume,
        debounce_ms: int = 50,
        cwd: str | None = None,
        config: Config | None = None,
        start_file: str | None = None,
        start_args: Any = None,
    ) -> None:
        super().__init__()
        self.live_runs = LiveRuns(self)
        """Runs started or resumed in this app (to watch and stop them)."""
        self._start_on_ready = (start_file, start_args) if start_file else None
        self.config = config or Config()
        """The reviewer's settings (config.toml); ``config_problems`` says what was not usable."""
        self.config_problems: list[str] = list(self.config.problems)
        self.notice = ArrivalNotice()
        """Checkpoints that arrived while the app is open and were not looked at yet."""
        self.bulk = BulkDecisions(self)
        self.state = state
        self.watch = watch
        self.clock = clock
        self.approver = approver
        self.approver_source = approver_source
        self.env = dict(os.environ if env is None else env)
        self.resume = resume
        self.debounce_ms = debounce_ms
        self.cwd = cwd or os.getcwd()
        self._in_flight: dict[str, Any] = {}
        self._feeds: dict[str, EventFeed] = {}
        self._log_writer: Any = False  # not made yet
        self._decided_on_highlight: dict[str, bool] = {}
        self.inbox = InboxScreen()

    def get_default_screen(self) -> InboxScreen:
        return self.inbox

    # -- opening -----------------------------------------------------------------------------------

    def open_entry(self, entry: Entry) -> None:
        """``enter`` on a row: the review screen for an approval, the answer screen for input."""
        if isinstance(entry, BrokenCheckpoint):
            self.notify(f"This state file cannot be read: {entry.reason}", severity="warning")
            return
        problem = still_pending(entry)
        if problem is not None:
            self.notify(problem, title="Not pending", severity="warning")
            self.inbox.rescan()
            return
        self.push_screen(ReviewScreen(entry) if entry.kind == "approval" else _answer_screen(entry))

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """A toast whose message is shown as written, whatever the caller asked.

        Messages carry prompts, file names and runner errors from workflows; read as markup, a
        "[/tmp]" in one raised MarkupError in the toast and crashed the app. Nothing here uses
        markup in a notification, so it is off for every caller (widgets' ``notify`` included).
        """
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    # -- deciding -------------------------------------------------------------------------------------

    def request_decision(
        self, kind: DecisionKind, entry: Entry, *, after: Callable[[bool], None] | None = None
    ) -> None:
        """Check that a decision may happen, confirm it in a modal, then carry it out.

        Nothing runs unless the reviewer presses ``y`` (or the Yes button) in the modal.
        """
        refusal = self._refusal(kind, entry)
        if refusal is not None:
            title, message = refusal
            self.notify(message, title=title, severity="error" if title != "Not pending" else "warning")
            if after is not None:
                after(False)
            return
        if isinstance(entry, Checkpoint) and entry.kind == "input" and kind != "cancel":
            self.push_screen(_answer_screen(entry))
            return
        decision = Decision(kind, entry, approver=self.approver)

        def confirmed(answer: bool | None) -> None:
            if answer:
                self.start_decision(decision)
            if after is not None:
                after(bool(answer))

        self.push_screen(ConfirmScreen.for_decision(decision), confirmed)

    def _refusal(self, kind: DecisionKind, entry: Entry) -> tuple[str, str] | None:
        """Why this decision cannot be taken now (title, message), or None."""
        if entry.state_key in self._in_flight:
            return "Already deciding", "A decision on this checkpoint is running; its log is beside the inbox."
        if isinstance(entry, BrokenCheckpoint) and kind != "cancel":
            return "Cannot decide", f"This state file cannot be read ({entry.reason}); only c (delete) applies."
        if isinstance(entry, Checkpoint) and kind in ("approve", "reject") and entry.kind != "approval":
            return "Not an approval", "This is an input request: press enter to answer it."
        if isinstance(entry, Checkpoint) and kind == "approve":
            problem = identity_problem(entry, self.approver)
            if problem is not None:
                return "You may not approve this", problem
        problem = still_pending(entry)
        if problem is not None:
            self.inbox.rescan()
            return "Not pending", problem
        return None

    def submit_answer(self, checkpoint: Checkpoint, value: Any) -> bool:
        """Send a validated answer (the answer screen already showed the reviewer what it sends)."""
        refusal = self._refusal("answer", checkpoint)
        if refusal is not None:
            title, message = refusal
            self.notify(message, title=title, severity="error")
            return False
        self.start_decision(Decision("answer", checkpoint, approver=self.approver, response=value))
        return True

    def start_decision(self, decision: Decision) -> Worker[DecisionResult]:
        """Run a confirmed decision in a thread worker, streaming its events into the log panel."""
        self.inbox.show_log()
        entry = decision.entry
        name = one_line(entry.workflow, 40) if isinstance(entry, Checkpoint) else entry.state_key
        feed = self.inbox.log_panel.new_feed(f"{decision.kind} · {name}")
        self._feeds[decision.state_key] = feed
        self._in_flight[decision.state_key] = decision
        highlighted = self.inbox.checkpoint_list.highlighted
        self._decided_on_highlight[decision.state_key] = (
            highlighted is not None and highlighted.state_key == decision.state_key
        )
        # Before the worker starts: its run's next checkpoint can be listed before any message about
        # this decision is handled, and it is the reviewer's doing, not news.
        self.notice.own_run(decision.entry)
        self.post_message(DecisionStarted(decision))
        self.inbox.refresh_bindings()
        return self.run_worker(
            lambda: self._carry_out(decision, feed),
            name=f"decide {decision.state_key}",
            group="decisions",
            thread=True,
            exit_on_error=False,
        )

    def _run_context(self, feed: EventFeed) -> Any:
        from lobster_tui.core.runner import RunContext

        env = dict(self.env)
        if self.approver:
            env["LOBSTER_APPROVAL_APPROVED_BY"] = self.approver
        # The feed itself (not feed.push): it takes output as whole blocks.
        subscribers: list[Any] = [feed]
        writer = self._run_log_writer()
        if writer is not None:
            # Like the CLI, log the run under runs/, so `lobster logs` and later previews see it.
            subscribers.append(writer)
        context = RunContext(
            state=self.state,
            env=env,
            cwd=self.cwd,
            mode="tool",
            subscribers=subscribers,
            timeout_ms=None,
            max_stdout_bytes=None,
        )
        # So s (Runs screen, run view) can stop it by run id.
        context.subscribers.append(self.live_runs.tracker(context))
        return context

    def _run_log_writer(self) -> Any:
        """One run-log writer for the app (it is shared by parallel runs), or None."""
        if self._log_writer is False:
            try:
                from lobster_tui.core.run_log import log_subscriber_for
            except ImportError:
                self._log_writer = None
            else:
                self._log_writer = log_subscriber_for(self.state)
        return self._log_writer

    def _carry_out(self, decision: Decision, feed: EventFeed, *, quiet: bool = False) -> DecisionResult:
        """Worker thread: call the runner; the result goes back to the UI as a message.

        ``quiet``: a bulk decision reports its items in one toast, not one each.
        """
        context = self._run_context(feed)
        self._in_flight[decision.state_key] = context
        try:
            result = carry_out(decision, context, self.resume)
        except Exception as error:  # the runner should not raise; if it does, say so, don't crash
            result = DecisionResult(decision, "error", f"{type(error).__name__}: {error}")
        self.post_message(DecisionFinished(result, quiet=quiet))
        return result

    def on_decision_finished(self, message: DecisionFinished) -> None:
        result = message.result
        key = result.decision.state_key
        self._in_flight.pop(key, None)
        feed = self._feeds.pop(key, None)
        self.inbox.log_panel.finish(feed, result.status, result.message)
        severity = {"error": "error", "stale": "warning", "cancelled": "warning", "stopped": "warning"}.get(
            result.status, "information"
        )
        title = "Someone else was first" if result.stale else f"{result.decision.kind}: {result.status}"
        if not message.quiet:
            self.notify(result.message, title=title, severity=severity)  # type: ignore[arg-type]
        for screen in self.screen_stack:
            # Only the answer screen waits on its own decision (it stays open on a runner error).
            waiting = getattr(screen, "decision_finished", None)
            if waiting is not None and screen.checkpoint.state_key == key:  # type: ignore[attr-defined]
                waiting(result)
        if result.next_key and self._decided_on_highlight.pop(key, False):
            # The reviewer decided on the highlighted row: move with the run to its next gate.
            self.inbox.select_when_listed(result.next_key)
        self._decided_on_highlight.pop(key, None)
        self.inbox.refresh_bindings()
        self.inbox.rescan()

    @property
    def running(self) -> int:
        """How many decisions are running now."""
        return len(self._in_flight)

    def request_stop(self) -> None:
        """Ask (in a modal) whether to stop the runs in progress, then abort them."""
        count = self.running
        if not count:
            self.notify("No run is in progress.", severity="warning")
            return
        lines = [
            f"{count} run{'s' if count != 1 else ''} in progress will be aborted: running steps are "
            "terminated and the run ends as cancelled.",
            "The checkpoint was already claimed, so it does not come back to the inbox.",
        ]

        def confirmed(answer: bool | None) -> None:
            if answer:
                self._abort_runs("stopped from lobster-tui")

        self.push_screen(ConfirmScreen("Stop the running run?", lines, "Yes, stop", "cancel"), confirmed)

    def _abort_runs(self, reason: str) -> None:
        for context in list(self._in_flight.values()):
            signal = getattr(context, "signal", None)
            if signal is not None:
                signal.abort(reason, stop=True)  # asked for: the run log says cancelled

    def on_unmount(self) -> None:
        # A run still going when the app closes is aborted, so its child processes end with it.
        self._abort_runs("lobster-tui closed")
        self.live_runs.abort_all("lobster-tui closed")

    # -- history and config -------------------------------------------------------------------------

    def action_history(self) -> None:
        """Show the audit journal: every decision, from this app and the CLI, newest first.

        Opened on top of the current screen (escape comes back to it), so nothing in progress
        there, such as a half-filled answer, is dropped.
        """
        if not isinstance(self.screen, HistoryScreen):
            self.push_screen(HistoryScreen())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """History opens from full screens, not over a modal."""
        if action == "history":
            from textual.command import CommandPalette
            from textual.screen import ModalScreen

            # The palette asks from over the screen it was opened on: judge that screen.
            screen = self.screen
            if isinstance(screen, CommandPalette) and len(self.screen_stack) > 1:
                screen = self.screen_stack[-2]
            return not isinstance(screen, (ModalScreen, HistoryScreen))
        if action in ("show_inbox", "show_runs", "start_run"):
            from textual.command import CommandPalette
            from textual.screen import ModalScreen

            # The palette asks from over the screen it was opened on: judge that screen.
            screen = self.screen
            if isinstance(screen, CommandPalette) and len(self.screen_stack) > 1:
                screen = self.screen_stack[-2]
            if isinstance(screen, ModalScreen):
                return False
            # The footer leaves out the key of the screen you are on (80 columns are tight).
            if action == "show_inbox":
                return screen is not self.inbox
            if action == "show_runs":
                return not (self.is_screen_installed("runs") and screen is self.get_screen("runs"))
            return True
        return True

    # -- runs (issue 7) -------------------------------------------------------------------------------

    def action_show_inbox(self) -> None:
        """Back to the inbox of pending checkpoints."""
        while len(self.screen_stack) > 1:
            self.pop_screen()

    def action_show_runs(self) -> None:
        """Show every run of the state directory, live (one Runs screen, kept while the app runs)."""
        from .screens.runs import RunsScreen

        if not self.is_screen_installed("runs"):
            self.install_screen(RunsScreen(), "runs")
        runs = self.get_screen("runs")
        if runs in self.screen_stack:
            while self.screen is not runs:
                self.pop_screen()
            return
        self.action_show_inbox()
        self.push_screen(runs)

    def action_start_run(self) -> None:
        """Choose a workflow file, fill in its args, run it and watch it."""
        from .screens.start_run import StartRequest, StartRunScreen

        def chosen(request: StartRequest | None) -> None:
            if request is not None:
                self.start_workflow_run(request.path, request.args)

        self.push_screen(StartRunScreen(self.cwd), chosen)

    def start_workflow_run(self, path: str, args: Any = None) -> Any:
        """Run a workflow file in a worker and open its live view (on top of the Runs screen)."""
        from .screens.run_view import RunViewScreen

        live = self.live_runs.start(path, args)
        self.action_show_runs()
        self.push_screen(RunViewScreen(None, live))
        return live

    def open_run(self, run_id: str) -> None:
        """Open one run: its steps beside its log (live while it runs)."""
        from .screens.run_view import RunViewScreen

        self.push_screen(RunViewScreen(run_id, self.live_runs.find(run_id)))

    def on_ready(self) -> None:
        # lobster-tui run FILE: straight into the run's live view.
        if self._start_on_ready is not None:
            path, args = self._start_on_ready
            self._start_on_ready = None
            self.start_workflow_run(path, args)

    def on_mount(self) -> None:
        # Config problems are said once, at start; the defaults apply for those keys.
        for problem in self.config_problems:
            self.notify(problem, title="Config", severity="warning", timeout=12, markup=False)

    # -- help -----------------------------------------------------------------------------------------

    def action_help(self) -> None:
        """Show every key that works on the current screen and focused widget."""
        # The focused widget's keys first, then the screen's, then the app's.
        pairs = []
        for active in self.screen.active_bindings.values():
            node = active.node
            if node is self:
                where, rank = "everywhere", 2
            elif node is self.screen:
                where, rank = "this screen", 1
            else:
                where, rank = getattr(node, "HELP_NAME", type(node).__name__), 0
            pairs.append((rank, where, active.binding))
        pairs.sort(key=lambda pair: pair[0])
        rows = help_rows(((where, binding) for _, where, binding in pairs), self.get_key_display)
        palette = Binding(self.COMMAND_PALETTE_BINDING, "command_palette", "Command palette", id="app.palette")
        rows += help_rows([("everywhere", palette)], self.get_key_display)
        self.push_screen(HelpScreen(rows, str(self.state.root), self.approver))


def resolve_approver(approver: str | None, env: Mapping[str, str]) -> tuple[str | None, str]:
    """Who the reviewer is and where that came from: ``--approver``, else the environment."""
    if approver and approver.strip():
        return approver.strip(), "--approver"
    from_env = (env.get("LOBSTER_APPROVAL_APPROVED_BY") or "").strip()
    if from_env:
        return from_env, "LOBSTER_APPROVAL_APPROVED_BY"
    return None, ""


def create_app(
    state_dir: str | Path | None = None,
    *,
    watch: bool = True,
    clock: Clock | None = None,
    approver: str | None = None,
    env: Mapping[str, str] | None = None,
    resume: ResumeFunction | None = None,
    debounce_ms: int = 50,
    cwd: str | None = None,
    config: Config | None = None,
    start_file: str | None = None,
    start_args: Any = None,
) -> LobsterApp:
    """Build the app. ``state_dir`` defaults to ``LOBSTER_STATE_DIR`` or ``~/.lobster/state``.

    ``config`` defaults to the config file in the XDG config directory of ``env``.
    """
    environment = dict(os.environ if env is None else env)
    root = Path(state_dir).expanduser() if state_dir else default_state_dir(environment)
    if config is None:
        config = load_config(env=environment)
    who, source = resolve_approver(approver, environment)
    if who is None and config.approver:
        who, source = config.approver, f"config {config.path}" if config.path else "config"
    app = LobsterApp(
        state=StateStore(root),
        watch=watch,
        clock=clock or utc_now,
        approver=who,
        approver_source=source,
        env=environment,
        resume=resume or _default_resume,
        debounce_ms=debounce_ms,
        cwd=cwd,
        config=config,
        start_file=start_file,
        start_args=start_args,
    )
    app.config_problems.extend(apply_config(app, config))
    return app


def _answer_screen(entry: Checkpoint) -> Screen[None]:
    """The answer form for an input request.

    Imported on first use: the schema form and its field widgets are a tenth of the app's import
    time, and many sessions only approve.
    """
    from .screens.answer import AnswerScreen

    return AnswerScreen(entry)
