"""Bulk decisions: approve or reject every marked approval after one confirmation.

:func:`plan_bulk` sorts the marked rows into those that will be decided and those that will not
(input requests are never answered in bulk; identity rules and checkpoints that are gone are said
up front). :class:`BulkDecisions` then carries the plan out in one thread worker, one checkpoint
after the other, through the same path as a single decision (``LobsterApp._refusal`` checked again
right before each item, ``LobsterApp._carry_out`` calling the runner, ``DecisionFinished`` handled
by the app), so one failure never stops the rest and every outcome reaches the log panel.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from rich.text import Text
from textual.worker import Worker, get_current_worker

from lobster_tui.core.checkpoints import BrokenCheckpoint, Checkpoint, identity_problem

from .decisions import Decision, DecisionResult, short_key, still_pending
from .event_lines import EventStyles
from .formatting import one_line

if TYPE_CHECKING:
    from .app import LobsterApp

Entry = Checkpoint | BrokenCheckpoint
BulkKind = Literal["approve", "reject"]

INPUT_SKIPPED = "input request: never answered in bulk (press enter on it to answer)"
"""Why an input request is left out of a bulk decision."""

SUCCESS = {
    "approve": ("ok", "needs_approval", "needs_input"),
    "reject": ("ok", "cancelled"),
}
"""Result statuses that mean the decision did what was asked."""


@dataclass(frozen=True)
class BulkPlan:
    """What a bulk decision will do: the approvals it decides and the rows it leaves, with why."""

    kind: BulkKind
    decide: tuple[Checkpoint, ...]
    skipped: tuple[tuple[Entry, str], ...] = ()


def plan_bulk(kind: BulkKind, entries: Sequence[Entry], approver: str | None, in_flight: Sequence[str] = ()) -> BulkPlan:
    """Split marked rows into the approvals to decide and the rest (each with a reason)."""
    decide: list[Checkpoint] = []
    skipped: list[tuple[Entry, str]] = []
    for entry in entries:
        if isinstance(entry, BrokenCheckpoint):
            skipped.append((entry, f"unreadable state file ({entry.reason}); only c applies"))
        elif entry.kind != "approval":
            skipped.append((entry, INPUT_SKIPPED))
        elif entry.state_key in in_flight:
            skipped.append((entry, "a decision on it is already running"))
        elif kind == "approve" and (problem := identity_problem(entry, approver)) is not None:
            skipped.append((entry, f"you may not approve it: {problem}"))
        elif (gone := still_pending(entry)) is not None:
            skipped.append((entry, gone))
        else:
            decide.append(entry)
    return BulkPlan(kind, tuple(decide), tuple(skipped))


def label(entry: Entry) -> str:
    """``workflow › step (id)`` for log lines and toasts."""
    if isinstance(entry, BrokenCheckpoint):
        return f"broken {entry.path.name} ({short_key(entry.state_key)})"
    return f"{one_line(entry.workflow, 40)} › {one_line(entry.step, 24)} ({entry.short_id})"


@dataclass
class ItemOutcome:
    """What happened to one row of a bulk decision."""

    entry: Entry
    status: str
    """``done`` (did what was asked), ``failed``, ``skipped`` or ``not started``."""
    message: str


@dataclass
class BulkReport:
    """Every row's outcome, in order, and the counts a summary needs."""

    kind: BulkKind
    items: list[ItemOutcome] = field(default_factory=list)

    def count(self, status: str) -> int:
        """How many rows ended with this status."""
        return sum(1 for item in self.items if item.status == status)

    def summary(self) -> str:
        """One sentence such as "Approved 4 of 5 · 1 failed · 2 skipped"."""
        done = self.count("done")
        tried = done + self.count("failed") + self.count("not started")
        verb = "Approved" if self.kind == "approve" else "Rejected"
        parts = [f"{verb} {done} of {tried}"]
        for status in ("failed", "not started", "skipped"):
            if self.count(status):
                parts.append(f"{self.count(status)} {status}")
        return " · ".join(parts)


class BulkDecisions:
    """Confirms a bulk decision in one modal and runs it item by item in one worker."""

    def __init__(self, app: LobsterApp) -> None:
        self.app = app

    def request(self, kind: BulkKind, entries: Sequence[Entry]) -> None:
        """Plan, confirm (one modal listing every checkpoint), then carry out."""
        from .screens.bulk_confirm import BulkConfirmScreen

        app = self.app
        plan = plan_bulk(kind, entries, app.approver, list(app._in_flight))
        if not plan.decide:
            reasons = "; ".join(f"{label(entry)}: {why}" for entry, why in plan.skipped[:3])
            more = f" (and {len(plan.skipped) - 3} more)" if len(plan.skipped) > 3 else ""
            app.notify(f"Nothing to {kind}. {reasons}{more}", title=f"Bulk {kind}", severity="warning", markup=False)
            if any("no longer pending" in why or "already resumed" in why for _, why in plan.skipped):
                app.inbox.rescan()
            return

        def confirmed(answer: bool | None) -> None:
            if answer:
                self.start(plan)

        app.push_screen(BulkConfirmScreen(plan, app.approver), confirmed)

    def start(self, plan: BulkPlan) -> Worker[BulkReport]:
        """Run a confirmed plan in one thread worker (the decisions group, like single decisions)."""
        app = self.app
        app.inbox.show_log()
        panel = app.inbox.log_panel
        styles = EventStyles.from_theme(app.theme_variables)
        count = len(plan.decide)
        panel.write_line(Text(f"══ bulk {plan.kind} · {count} checkpoint{'s' if count != 1 else ''} ══", style=styles.heading))
        return app.run_worker(
            lambda: self._run(plan),
            name=f"bulk {plan.kind}",
            group="decisions",
            thread=True,
            exit_on_error=False,
        )

    # -- worker thread ---------------------------------------------------------------------------

    def _run(self, plan: BulkPlan) -> BulkReport:
        app = self.app
        worker = get_current_worker()
        report = BulkReport(plan.kind)
        total = len(plan.decide)
        stopped = False
        for index, checkpoint in enumerate(plan.decide, 1):
            if worker.is_cancelled:
                report.items.append(ItemOutcome(checkpoint, "not started", "the app is closing"))
                continue
            if stopped:
                # s (stop) aborts the running item; the reviewer meant the rest too.
                report.items.append(ItemOutcome(checkpoint, "not started", "the bulk decision was stopped"))
                continue
            decision = Decision(plan.kind, checkpoint, approver=app.approver)
            try:
                begun = app.call_from_thread(self._begin, decision, index, total)
            except RuntimeError:  # the app closed
                report.items.append(ItemOutcome(checkpoint, "not started", "the app closed"))
                continue
            if isinstance(begun, str):
                report.items.append(ItemOutcome(checkpoint, "failed", begun))
                continue
            result = app._carry_out(decision, begun, quiet=True)
            stopped = result.status == "stopped"
            self._wait_until_handled(worker)
            report.items.append(self._outcome(plan.kind, checkpoint, result))
        report.items.extend(ItemOutcome(entry, "skipped", why) for entry, why in plan.skipped)
        try:
            app.call_from_thread(self._finish, report)
        except RuntimeError:
            pass
        return report

    def _wait_until_handled(self, worker: Worker[BulkReport]) -> None:
        # DecisionFinished was posted to the app; a callback queued after it runs once the app has
        # handled it, so this item's last log line is written before the next item's first.
        handled = threading.Event()
        self.app.call_later(handled.set)
        while not handled.wait(0.05):
            if worker.is_cancelled or not self.app.is_running:
                return

    @staticmethod
    def _outcome(kind: BulkKind, checkpoint: Checkpoint, result: DecisionResult) -> ItemOutcome:
        if result.status in SUCCESS[kind]:
            return ItemOutcome(checkpoint, "done", result.message)
        return ItemOutcome(checkpoint, "failed", result.message)

    # -- UI thread -----------------------------------------------------------------------------------

    def _begin(self, decision: Decision, index: int, total: int) -> object:
        """Check this item again right now (identity, still pending, not in flight) and open its log."""
        from .messages import DecisionStarted

        app = self.app
        refusal = app._refusal(decision.kind, decision.entry)
        if refusal is not None:
            title, message = refusal
            styles = EventStyles.from_theme(app.theme_variables)
            app.inbox.log_panel.write_line(
                Text(f"✗ {index}/{total} {label(decision.entry)}: {title}: {message}", style=styles.error)
            )
            return f"{title}: {message}"
        feed = app.inbox.log_panel.new_feed(f"{decision.kind} {index}/{total} · {label(decision.entry)}")
        key = decision.state_key
        app._feeds[key] = feed
        app._in_flight[key] = decision
        app._decided_on_highlight[key] = False
        app.notice.own_run(decision.entry)
        app.post_message(DecisionStarted(decision))
        app.inbox.refresh_bindings()
        return feed

    def _finish(self, report: BulkReport) -> None:
        """Per-item lines in the log panel and one summary toast."""
        app = self.app
        panel = app.inbox.log_panel
        styles = EventStyles.from_theme(app.theme_variables)
        panel.write_line(Text(f"══ bulk {report.kind}: {report.summary()} ══", style=styles.heading))
        marks = {"done": ("✓", styles.ok), "failed": ("✗", styles.error), "skipped": ("⊘", styles.muted),
                 "not started": ("·", styles.muted)}
        for item in report.items:
            mark, style = marks[item.status]
            panel.write_line(Text(f"  {mark} {label(item.entry)}: {one_line(item.message, 160)}", style=style))
        failed = [item for item in report.items if item.status in ("failed", "not started")]
        skipped = [item for item in report.items if item.status == "skipped"]
        # The toast names what did not happen (failures first); the log has every line.
        noted = [("✗", item) for item in failed] + [("⊘", item) for item in skipped]
        lines = [f"{mark} {label(item.entry)}: {one_line(item.message, 70)}" for mark, item in noted[:4]]
        if len(noted) > 4:
            lines.append(f"… {len(noted) - 4} more in the log")
        message = "\n".join(lines) or "Every marked approval was decided; details in the log."
        severity = "error" if failed else "warning" if skipped else "information"
        app.notify(message, title=report.summary(), severity=severity, markup=False, timeout=8)  # type: ignore[arg-type]
        app.inbox.rescan()
