"""Unit tests of the TUI's plain parts: formatting, event lines, the event feed, decision wording,
answer checks, resources, the command line and the demo."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from lobster_tui.core.checkpoints import Checkpoint
from lobster_tui.tui.answer_check import check_value, schema_label
from lobster_tui.tui.decisions import Decision, explain_gone
from lobster_tui.tui.event_feed import EventFeed, OutputBlock, Skipped
from lobster_tui.tui.event_lines import EventStyles, event_text, theme_colour
from lobster_tui.tui.formatting import format_age, format_duration, is_records, one_line
from tests.tui.helpers import FIXTURES, Lobster


def test_format_age_and_duration() -> None:
    now = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
    assert format_age(now - timedelta(seconds=5), now) == "5s"
    assert format_age(now - timedelta(minutes=7, seconds=59), now) == "7m"
    assert format_age(now - timedelta(hours=3), now) == "3h"
    assert format_age(now - timedelta(days=2, hours=1), now) == "2d"
    assert format_age(now + timedelta(seconds=30), now) == "0s"  # clock skew never goes negative
    assert format_duration(812) == "812ms" and format_duration(1400) == "1.4s" and format_duration(None) == ""


def test_one_line_collapses_cuts_and_neutralises_control_characters() -> None:
    assert one_line("Archive\n  these   now?", 40) == "Archive these now?"
    assert one_line("abcdefghij", 5) == "abcd…"
    assert one_line("evil\x1b[2Jtext", 40) == "evil?[2Jtext"
    assert is_records([{"a": 1}, {"b": 2}]) and not is_records([1, {"a": 1}]) and not is_records([])


def test_event_lines_cover_every_event_type() -> None:
    events = json.loads((FIXTURES / "run_events.json").read_text(encoding="utf-8"))
    lines = [event_text(e, EventStyles()) for e in events]
    plain = [line.plain for line in lines if line is not None]
    assert plain[0] == "↻ approve by alice"
    assert "▶ inbox-cleanup resumed" in plain
    assert any(p.startswith("● archive") for p in plain)
    assert "  ! archived m-1042" in plain
    assert "✓ archive  ok  412ms" in plain
    assert plain[-1] == "■ run ok in 468ms"
    failed = event_text({"type": "step_finished", "stepId": "x", "status": "failed", "durationMs": 3,
                         "error": "exit 2"}, EventStyles())
    assert failed is not None and failed.plain == "✗ x  failed  3ms  exit 2"
    halt = event_text({"type": "checkpoint", "kind": "approval", "prompt": "Go?", "approvalId": "ab12cd34"},
                      EventStyles())
    assert halt is not None and halt.plain == "⏸ waiting for approval: Go?  (ab12cd34)"
    assert event_text({"type": "something_new"}, EventStyles()) is None


def test_theme_colours_skip_expressions_rich_cannot_parse() -> None:
    assert theme_colour({"error": "#ff0000"}, "error") == "#ff0000"
    assert theme_colour({"text-muted": "auto 60%"}, "text-muted") is None
    assert theme_colour({}, "error") is None


def test_event_feed_notifies_once_per_batch_under_a_flood() -> None:
    notified = threading.Semaphore(0)
    calls: list[int] = []

    def notify() -> None:
        calls.append(1)
        notified.release()

    feed = EventFeed(notify, keep_lines=1000)

    def produce() -> None:
        for index in range(20000):
            feed.push({"type": "output", "stepId": "s", "stream": "stdout", "line": str(index)})
        feed.push({"type": "step_finished", "stepId": "s", "status": "ok"})

    thread = threading.Thread(target=produce)
    thread.start()
    thread.join()
    # Nobody drained: one notification for the lot, memory capped (the newest lines kept, a
    # marker where the rest were), finishing events kept.
    assert len(calls) == 1
    assert feed.pending_lines <= 2000
    items, dropped = feed.drain()
    assert dropped == 19000
    skipped, block, finished = items
    assert isinstance(skipped, Skipped) and skipped.count == 19000 and skipped.step_id == "s"
    assert isinstance(block, OutputBlock) and block.lines() == [str(index) for index in range(19000, 20000)]
    assert finished["type"] == "step_finished"
    feed.push({"type": "output", "line": "again"})
    assert len(calls) == 2  # after a drain the next event notifies again


def test_stale_explanations(tmp_path: Path) -> None:
    gone = tmp_path / "workflow_resume_x.json"
    assert explain_gone(gone) == "no longer pending: resumed or cancelled elsewhere"
    gone.write_text(json.dumps({"type": "lobster.consumed-resume-state.v1", "consumedAt": "2026-11-30T05:00:00.000Z",
                                "claimId": "x"}))
    assert explain_gone(gone) == "already resumed at 2026-11-30T05:00:00.000Z"


def test_decision_summaries_say_what_happens(lobster: Lobster) -> None:
    lobster.workflow("inbox-cleanup")
    from lobster_tui.core.checkpoints import scan_checkpoints

    [entry] = scan_checkpoints(lobster.state)
    assert isinstance(entry, Checkpoint)
    approve = Decision("approve", entry, approver="alice")
    assert approve.title == "Approve inbox-cleanup · confirm?"
    assert "3 items pass the gate." in approve.summary()
    assert approve.resume_arguments() == {"token": entry.token, "approved": True}
    reject = Decision("reject", entry)
    assert any("ends as cancelled" in line for line in reject.summary())
    assert reject.resume_arguments()["approved"] is False
    assert Decision("cancel", entry).resume_arguments() == {"token": entry.token, "cancel": True}


def test_answer_checks_use_the_runners_wording(lobster: Lobster) -> None:
    lobster.workflow("release-notes")
    from lobster_tui.core.checkpoints import scan_checkpoints

    [entry] = scan_checkpoints(lobster.state)
    assert isinstance(entry, Checkpoint)
    assert schema_label(entry) == "Workflow input step review"
    assert check_value(entry, entry.defaults).ok
    bad = check_value(entry, {"decision": "publish"})
    assert bad.problem == (
        "Workflow input step review response failed schema validation at /: must have required property 'audience'"
    )


def test_resources_find_the_stylesheet_and_examples() -> None:
    from lobster_tui.tui.resources import examples_dir, stylesheet

    assert stylesheet().is_file() and stylesheet().name == "app.tcss"
    assert (examples_dir() / "inbox-cleanup.lobster").is_file()
    # Colours in the stylesheet come from theme variables only.
    import re

    text = stylesheet().read_text(encoding="utf-8")
    assert not re.search(r"#[0-9a-fA-F]{3,8}\b|\brgb\(|\bhsl\(", text)


def test_command_line() -> None:
    from lobster_tui.tui.__main__ import build_parser

    args = build_parser().parse_args(["--state-dir", "/x", "--approver", "bob", "--no-watch"])
    assert (args.state_dir, args.approver, args.no_watch, args.demo) == ("/x", "bob", True, False)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--bogus"])


def test_app_factory_edges(tmp_path: Path) -> None:
    from lobster_tui.tui.app import create_app

    app = create_app(env={"LOBSTER_STATE_DIR": str(tmp_path / "s"), "LOBSTER_APPROVAL_APPROVED_BY": " carol "},
                     watch=False)
    assert app.state.root == tmp_path / "s"
    assert (app.approver, app.approver_source) == ("carol", "LOBSTER_APPROVAL_APPROVED_BY")
    app = create_app(tmp_path, approver="dave", env={"LOBSTER_APPROVAL_APPROVED_BY": "carol"})
    assert (app.approver, app.approver_source) == ("dave", "--approver")


def test_no_color_turns_the_app_monochrome(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from textual.filter import Monochrome

    from lobster_tui.tui.app import create_app

    monkeypatch.setenv("NO_COLOR", "1")
    app = create_app(tmp_path, watch=False, env={})
    assert app.no_color
    assert any(isinstance(f, Monochrome) for f in app._filters)


def test_demo_runs_the_examples_to_their_first_checkpoints(tmp_path: Path) -> None:
    from lobster_tui.core.checkpoints import scan_checkpoints
    from lobster_tui.core.state import StateStore
    from lobster_tui.tui.demo import make_demo_state

    root = make_demo_state(tmp_path / "demo", env={"PATH": "/usr/local/bin:/usr/bin:/bin"})
    entries = scan_checkpoints(StateStore(root))
    assert sorted((e.workflow if e.source == "workflow" else "pipeline", e.step) for e in entries) == [  # type: ignore[union-attr]
        ("deploy", "staging_gate"),
        ("inbox-cleanup", "confirm"),
        ("pipeline", "approve"),
        ("release-notes", "review"),
    ]
