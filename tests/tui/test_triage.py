"""Pilot tests of triage at scale: bulk decisions, copying, new-arrival notices, stale marks, sort.

Every checkpoint is made by the real runner in a temp state directory; every decision goes through
the real core ``resume`` (and so into the real audit journal).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from lobster_tui.core.audit import read_journal
from lobster_tui.core.checkpoints import Checkpoint
from lobster_tui.core.runner import resume
from lobster_tui.tui.config import Config
from lobster_tui.tui.screens.bulk_confirm import BulkConfirmScreen
from lobster_tui.tui.widgets.checkpoint_list import MARK, NEW_MARK, STALE_MARK
from tests.tui.helpers import FROZEN_NOW, REPO, Lobster, MakeApp, settle, wait_until
from tests.tui.triage_support import arm_watcher

GATE = """\
name: gate-{n}
steps:
  - id: gate
    approval:
      prompt: Ship release {n}?
  - id: ship
    when: $gate.approved
    run: echo shipped {n}
"""

GUARDED = """\
name: guarded
steps:
  - id: gate
    approval:
      prompt: Restart the databases?
      required_approver: bob
  - id: restart
    when: $gate.approved
    run: echo restarted
"""


def make_gates(lobster: Lobster, count: int, start: int = 1) -> list[str]:
    """``count`` pending approvals (real runs of a one-gate workflow); their approval ids."""
    ids = []
    for n in range(start, start + count):
        outcome = lobster.workflow(f"gate-{n}", text=GATE.format(n=n))
        ids.append(outcome.requires_approval["approvalId"])  # type: ignore[index]
    return ids


def journal(lobster: Lobster) -> list[dict[str, Any]]:
    entries, skipped = read_journal(lobster.state)
    assert skipped == 0
    return entries


def log_text(app: Any) -> str:
    return "\n".join(app.inbox.log_panel.transcript)


def toasts(app: Any) -> list[tuple[str, str]]:
    return [(n.title, n.message) for n in app._notifications]


def mark_cells(app: Any) -> dict[str, str]:
    table = app.inbox.checkpoint_list
    return {e.state_key: str(table.cell(e.state_key, "mark")) for e in table.shown}


async def test_bulk_approves_five_in_one_action_and_skips_the_input_request(
    lobster: Lobster, make_app: MakeApp
) -> None:
    ids = make_gates(lobster, 5)
    lobster.workflow("release-notes")  # an input request: marked too, never bulk-answered
    app = make_app(lobster.root, approver="alice")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        listing = app.inbox.checkpoint_list
        assert len(listing.entries) == 6
        # A with nothing marked says how to mark; nothing opens.
        await pilot.press("A")
        await pilot.pause()
        assert app.screen is app.inbox
        assert toasts(app)[-1][1].startswith("Mark checkpoints with space first")
        await pilot.press("asterisk")  # marks every shown row
        assert len(listing.marked) == 6
        assert set(mark_cells(app).values()) == {MARK}
        assert "6 marked" in str(listing.border_subtitle)
        await pilot.press("A")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, BulkConfirmScreen)
        # One modal lists every approval (workflow, step, prompt, id); the safe choice has focus.
        assert app.focused is not None and app.focused.id == "no"
        rows = [modal.query_one("#bulk-items").get_row_at(i) for i in range(5)]  # type: ignore[attr-defined]
        assert sorted(row[3] for row in rows) == sorted(ids)
        assert {str(row[1]) for row in rows} == {"gate"}
        assert {str(row[2]) for row in rows} == {f"Ship release {n}?" for n in range(1, 6)}
        skipped = str(modal.query_one("#bulk-skipped").render())
        assert "release-notes › review" in skipped and "never answered in bulk" in skipped
        await pilot.press("y")
        await settle(app, pilot)

        # All five resumed; the input request is still pending.
        remaining = [e for e in listing.entries if isinstance(e, Checkpoint)]
        assert [e.kind for e in remaining] == ["input"]
        assert len(lobster.resume_files()) == 1
        lines = journal(lobster)
        assert [line["decision"] for line in lines] == ["approve"] * 5
        assert sorted(line["approvalId"] for line in lines) == sorted(ids)
        assert all(line["approver"] == "alice" and line["outcome"]["status"] == "ok" for line in lines)
        # Per-item lines in the log, one summary toast (no toast per item).
        text = log_text(app)
        for n in range(1, 6):
            assert f"shipped {n}" in text
            assert f"✓ gate-{n} › gate" in text
        assert "⊘ release-notes › review" in text and "never answered in bulk" in text
        titles = [title for title, _ in toasts(app)]
        assert titles.count("Approved 5 of 5 · 1 skipped") == 1
        assert not any(title.startswith("approve:") for title in titles)
        # Marks go with the decided checkpoints.
        assert [e.kind for e in listing.marked] == ["input"]

        # Marking only input requests: A says why nothing happens and opens no modal.
        await pilot.press("A")
        await pilot.pause()
        assert app.screen is app.inbox
        assert any("Nothing to approve" in message for _, message in toasts(app))


async def test_one_failure_does_not_stop_the_rest(lobster: Lobster, make_app: MakeApp) -> None:
    ids = make_gates(lobster, 3)
    guarded = lobster.workflow("guarded", text=GUARDED).requires_approval["approvalId"]  # type: ignore[index]
    app = make_app(lobster.root, approver="alice")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        for _ in range(4):
            await pilot.press("space")  # marks and moves down
        assert len(app.inbox.checkpoint_list.marked) == 4
        await pilot.press("A")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, BulkConfirmScreen)
        # The identity rule is checked up front: bob's gate is left out, and said so.
        assert sorted(c.approval_id for c in modal.plan.decide) == sorted(ids)
        assert "requires approver 'bob'" in str(modal.query_one("#bulk-skipped").render())
        # While the modal is open, someone resumes one of them with the CLI's runner.
        first = modal.plan.decide[1]
        elsewhere = resume(lobster.context({"LOBSTER_APPROVAL_APPROVED_BY": "carol"}), approval_id=first.approval_id, approved=True)
        assert elsewhere.status == "ok"
        await pilot.press("y")
        await settle(app, pilot)

        lines = journal(lobster)
        by_id = {line["approvalId"]: line for line in lines}
        assert by_id[first.approval_id]["approver"] == "carol"  # decided once, elsewhere
        assert len(lines) == 3
        assert {line["approver"] for line in lines if line["approvalId"] != first.approval_id} == {"alice"}
        text = log_text(app)
        assert f"✗ {first.workflow} › gate ({first.approval_id})" in text
        assert "no longer pending" in text or "already resumed" in text
        assert "requires approver 'bob'" in text
        [(title, message)] = [(t, m) for t, m in toasts(app) if t.startswith("Approved")]
        assert title == "Approved 2 of 3 · 1 failed · 1 skipped"
        assert first.short_id in message
        # Bob's gate is still pending; the others are gone.
        assert [e.approval_id for e in app.inbox.checkpoint_list.entries] == [guarded]


async def test_bulk_reject_cancels_each_run(lobster: Lobster, make_app: MakeApp) -> None:
    make_gates(lobster, 2)
    app = make_app(lobster.root, approver="alice")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("asterisk", "X")
        await pilot.pause()
        assert isinstance(app.screen, BulkConfirmScreen)
        await pilot.press("n")  # backs out: nothing changes
        await pilot.pause()
        assert len(lobster.resume_files()) == 2
        await pilot.press("X", "y")
        await settle(app, pilot)
        assert lobster.resume_files() == []
        assert [line["decision"] for line in journal(lobster)] == ["reject", "reject"]
        assert "shipped" not in log_text(app)
        assert ("Rejected 2 of 2", "Every marked approval was decided; details in the log.") in toasts(app)


def _shell_env(lobster: Lobster) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOBSTER_")}
    env["LOBSTER_STATE_DIR"] = str(lobster.root)
    # The `lobster` console script of this environment, and this checkout first on the path.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = f"{REPO}{os.pathsep}{env.get('PYTHONPATH', '')}"
    return env


async def test_copy_id_and_the_resume_command_that_really_resumes(lobster: Lobster, make_app: MakeApp) -> None:
    [approval_id] = make_gates(lobster, 1)
    lobster.workflow("release-notes")
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        listing = app.inbox.checkpoint_list
        request = next(e for e in listing.entries if isinstance(e, Checkpoint) and e.kind == "input")
        listing.select_key(request.state_key)
        await pilot.press("Y")
        expected = (
            f"lobster resume --token {request.token} --response-json "
            """'{"decision":"publish","audience":{"channels":["changelog"]}}'"""
        )
        assert app.clipboard == expected
        assert toasts(app)[-1] == ("Copied command", expected)  # the toast shows exactly that

        gate = next(e for e in listing.entries if isinstance(e, Checkpoint) and e.kind == "approval")
        listing.select_key(gate.state_key)
        await pilot.press("y")
        assert app.clipboard == approval_id
        assert toasts(app)[-1] == ("Copied id", approval_id)
        await pilot.press("Y")
        assert app.clipboard == f"lobster resume --id {approval_id} --approve yes"
        command = app.clipboard

    # Both commands, pasted into a shell with the same LOBSTER_STATE_DIR, decide their checkpoint.
    for pasted in (command, expected):
        done = subprocess.run(pasted, shell=True, env=_shell_env(lobster), capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["status"] == "ok", done.stdout
    assert lobster.resume_files() == []
    assert [line["decision"] for line in journal(lobster)] == ["approve", "answer"]


async def test_a_new_checkpoint_raises_the_badge_until_the_reviewer_looks(lobster: Lobster, make_app: MakeApp) -> None:
    make_gates(lobster, 1)
    rings: list[int] = []
    app = make_app(lobster.root, watch=True, debounce_ms=20)
    app.bell = lambda: rings.append(1)  # type: ignore[method-assign]
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await wait_until(lambda: len(app.inbox.checkpoint_list.entries) == 1, pilot)
        await arm_watcher(app, pilot)
        # What is pending at start is not news.
        assert "new" not in str(app.sub_title) and rings == []
        make_gates(lobster, 2, start=2)  # written by "another terminal" while the app is open
        await wait_until(lambda: "2 new" in str(app.sub_title), pilot, message="badge")
        assert str(app.sub_title) == "3 pending · ✦ 2 new"
        assert rings, "the bell rang"
        assert sorted(mark_cells(app).values()) == ["", NEW_MARK, NEW_MARK]
        # Headless: no desktop notification escape is written (there is no terminal).
        await pilot.press("j")  # the reviewer looks
        assert "new" not in str(app.sub_title)
        assert set(mark_cells(app).values()) == {""}


async def test_bell_and_notifications_can_be_turned_off(lobster: Lobster, make_app: MakeApp) -> None:
    make_gates(lobster, 1)
    rings: list[int] = []
    app = make_app(lobster.root, config=Config(bell=False, notifications=False))
    app.bell = lambda: rings.append(1)  # type: ignore[method-assign]
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        make_gates(lobster, 1, start=2)
        app.inbox.rescan()
        await settle(app, pilot)
        assert "1 new" in str(app.sub_title)  # the badge stays: it is in the app, not a noise
        assert rings == []


async def test_the_next_gate_of_a_run_decided_here_is_not_news(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("two-gates", text="""\
name: two-gates
steps:
  - id: first
    approval: First?
  - id: second
    approval: Second?
""")
    app = make_app(lobster.root, watch=True, debounce_ms=20)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await arm_watcher(app, pilot)
        await pilot.press("a", "y")
        await settle(app, pilot)
        await wait_until(lambda: [getattr(e, "step", "") for e in app.inbox.checkpoint_list.entries] == ["second"], pilot)
        assert "new" not in str(app.sub_title)


def _restamp(lobster: Lobster, created: dict[str, str]) -> None:
    """Give checkpoints (by workflow name) a fixed createdAt."""
    for path in lobster.root.glob("workflow_resume_*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        data["createdAt"] = created[Path(data["filePath"]).stem]
        path.write_text(json.dumps(data), encoding="utf-8")


async def test_stale_mark_past_the_threshold_and_the_sort_toggle(lobster: Lobster, make_app: MakeApp) -> None:
    make_gates(lobster, 3)
    _restamp(lobster, {
        "gate-1": (FROZEN_NOW - timedelta(days=2)).isoformat(),
        "gate-2": (FROZEN_NOW - timedelta(hours=25)).isoformat(),
        "gate-3": (FROZEN_NOW - timedelta(hours=3)).isoformat(),
    })
    app = make_app(lobster.root)  # frozen clock, default threshold 24h
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        listing = app.inbox.checkpoint_list
        ages = [str(listing.cell(e.state_key, "age")) for e in listing.shown]
        assert ages == ["3h", f"1d{STALE_MARK}", f"2d{STALE_MARK}"]  # newest first
        await pilot.press("o")
        assert [str(listing.cell(e.state_key, "age")) for e in listing.shown] == ages[::-1]
        assert listing.border_subtitle == "oldest first"
        assert listing.highlighted is not None
        await pilot.press("o")
        assert [str(listing.cell(e.state_key, "age")) for e in listing.shown] == ages

    app = make_app(lobster.root, config=Config(stale_after=timedelta(hours=2)))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        listing = app.inbox.checkpoint_list
        assert all(str(listing.cell(e.state_key, "age")).endswith(STALE_MARK) for e in listing.shown)
