"""Unit tests of the triage parts that need no app: commands to copy, arrival notices, bulk plans."""

from __future__ import annotations

import shlex

from lobster_tui.core.checkpoints import Checkpoint, scan_checkpoints
from lobster_tui.tui.bulk import INPUT_SKIPPED, BulkReport, ItemOutcome, plan_bulk
from lobster_tui.tui.clipboard import copy_id, resume_command
from lobster_tui.tui.notify import (
    ArrivalNotice,
    describe_arrivals,
    notification_sequences,
    osc_text,
)
from tests.tui.helpers import Lobster
from tests.tui.test_triage import GATE, GUARDED


def _checkpoints(lobster: Lobster) -> list[Checkpoint]:
    return [e for e in scan_checkpoints(lobster.state) if isinstance(e, Checkpoint)]


def test_commands_to_copy(lobster: Lobster) -> None:
    lobster.workflow("gate-1", text=GATE.format(n=1))
    lobster.pipeline("approve --prompt 'Go?'")
    lobster.workflow("release-notes")
    by_kind = {(c.source, c.kind): c for c in _checkpoints(lobster)}
    gate = by_kind[("workflow", "approval")]
    assert copy_id(gate) == gate.approval_id
    assert resume_command(gate) == f"lobster resume --id {gate.approval_id} --approve yes"
    pipe = by_kind[("pipeline", "approval")]
    without_id = pipe.copy_with(approval_id=None)
    assert copy_id(without_id) == pipe.state_key
    assert resume_command(without_id) == f"lobster resume --token {pipe.token} --approve yes"
    request = by_kind[("workflow", "input")]
    words = shlex.split(resume_command(request))
    assert words == ["lobster", "resume", "--token", request.token, "--response-json",
                     '{"decision":"publish","audience":{"channels":["changelog"]}}']
    bare = request.copy_with(has_defaults=False, defaults=None)
    assert resume_command(bare).endswith("--response-json '{}'")
    # Quoting: a hostile default can never break out of its argument.
    hostile = request.copy_with(defaults={"x": "'; rm -rf / #"})
    assert shlex.split(resume_command(hostile))[-1] == '{"x":"\'; rm -rf / #"}'


def test_arrivals_are_news_only_after_the_first_scan(lobster: Lobster) -> None:
    lobster.workflow("gate-1", text=GATE.format(n=1))
    notice = ArrivalNotice()
    first = _checkpoints(lobster)
    assert notice.scanned(first) == [] and notice.badge == ""
    lobster.workflow("gate-2", text=GATE.format(n=2))
    lobster.workflow("gate-3", text=GATE.format(n=3))
    arrived = notice.scanned(_checkpoints(lobster))
    assert sorted(c.workflow for c in arrived) == ["gate-2", "gate-3"]
    assert notice.badge == "2 new"
    assert notice.scanned(_checkpoints(lobster)) == []  # same scan again: nothing new
    assert notice.seen(arrived[0].state_key) and notice.badge == "1 new"
    assert notice.seen() and notice.badge == "" and not notice.seen()
    # A gate of a run resumed here is not news.
    notice.own_run(first[0])
    twin = first[0].copy_with(state_key="workflow_resume_00000000-0000-0000-0000-000000000000")
    assert notice.scanned([twin]) == []
    title, body = describe_arrivals(arrived)
    assert title == "lobster: 2 new checkpoints" and "(and 1 more)" in body


def test_notification_escapes_per_terminal() -> None:
    osc9 = "\x1b]9;T: b\x1b\\"
    osc777 = "\x1b]777;notify;T;b\x1b\\"
    assert notification_sequences("T", "b", {"TERM_PROGRAM": "iTerm.app"}) == [osc9]
    assert notification_sequences("T", "b", {"VTE_VERSION": "7600"}) == [osc777]
    assert notification_sequences("T", "b", {"TERM": "xterm-256color"}) == [osc9, osc777]
    [wrapped] = notification_sequences("T", "b", {"TMUX": "/tmp/tmux", "KITTY_WINDOW_ID": "1"})
    assert wrapped.startswith("\x1bPtmux;\x1b\x1b]9;") and wrapped.endswith("\x1b\\")
    # Text from a state file cannot end the sequence early or add fields.
    assert osc_text("a;b\x07c\x1bd") == "a b c d"


def test_bulk_plan_leaves_out_what_cannot_be_decided(lobster: Lobster) -> None:
    lobster.workflow("gate-1", text=GATE.format(n=1))
    lobster.workflow("guarded", text=GUARDED)
    lobster.workflow("release-notes")
    entries = _checkpoints(lobster)
    plan = plan_bulk("approve", entries, "alice")
    assert [c.workflow for c in plan.decide] == ["gate-1"]
    reasons = {entry.workflow: why for entry, why in plan.skipped}  # type: ignore[union-attr]
    assert reasons["release-notes"] == INPUT_SKIPPED
    assert "requires approver 'bob'" in reasons["guarded"]
    # Rejecting needs no identity: bob's gate may be rejected by anyone.
    assert sorted(c.workflow for c in plan_bulk("reject", entries, "alice").decide) == ["gate-1", "guarded"]
    gate = plan.decide[0]
    assert plan_bulk("approve", [gate], "alice", in_flight=[gate.state_key]).decide == ()


def test_bulk_report_summary() -> None:
    report = BulkReport("approve", [
        ItemOutcome(None, "done", "ok"), ItemOutcome(None, "done", "ok"),  # type: ignore[arg-type]
        ItemOutcome(None, "failed", "gone"), ItemOutcome(None, "skipped", "input"),  # type: ignore[arg-type]
    ])
    assert report.summary() == "Approved 2 of 3 · 1 failed · 1 skipped"
    assert BulkReport("reject").summary() == "Rejected 0 of 0"
