"""Pilot tests of the History screen: the audit journal of CLI and TUI decisions, filters, live follow."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from lobster_tui.tui.screens.history import HistoryScreen, outcome_text
from tests.tui.helpers import REPO, Lobster, MakeApp, settle, wait_until
from tests.tui.test_triage import GATE

FAILING = """\
name: breaks
steps:
  - id: gate
    approval:
      prompt: Run the broken step?
  - id: boom
    when: $gate.approved
    run: echo "disk full" >&2; exit 3
"""


def cli(lobster: Lobster, *args: str, approver: str | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m lobster_tui.cli`` in a subprocess on the same state directory."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOBSTER_")}
    env["LOBSTER_STATE_DIR"] = str(lobster.root)
    env["PYTHONPATH"] = f"{REPO}{os.pathsep}{env.get('PYTHONPATH', '')}"
    if approver:
        env["LOBSTER_APPROVAL_APPROVED_BY"] = approver
    return subprocess.run(
        [sys.executable, "-m", "lobster_tui.cli", *args],
        env=env, cwd=str(lobster.workdir), capture_output=True, text=True, timeout=60,
    )


def rows(screen: HistoryScreen) -> list[tuple[str, str, str, str]]:
    """(approver, decision, step, outcome) of each shown row, newest first (outcome uncut)."""
    table = screen.table
    found = []
    for index in range(table.row_count):
        cells = [str(cell) for cell in table.get_row_at(index)]
        found.append((cells[1], cells[2], cells[3].rsplit(" › ", 1)[-1], outcome_text(screen.shown[index])))
    return found


async def test_history_shows_cli_and_tui_decisions_newest_first_with_filters(
    lobster: Lobster, make_app: MakeApp
) -> None:
    first = lobster.workflow("gate-1", text=GATE.format(n=1))
    lobster.workflow("gate-2", text=GATE.format(n=2))
    lobster.workflow("breaks", text=FAILING)
    token = first.requires_approval["resumeToken"]  # type: ignore[index]
    # 1. The CLI approves gate-1 (as carol).
    done = cli(lobster, "resume", "--token", token, "--approve", "yes", approver="carol")
    assert done.returncode == 0, done.stderr

    app = make_app(lobster.root, approver="alice")
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(app, pilot)
        listing = app.inbox.checkpoint_list
        # 2. The TUI rejects gate-2; 3. the TUI approves "breaks", whose next step fails.
        listing.select_key(next(e.state_key for e in listing.entries if e.workflow == "gate-2"))
        await pilot.press("x", "y")
        await settle(app, pilot)
        listing.select_key(next(e.state_key for e in listing.entries if e.workflow == "breaks"))
        await pilot.press("a", "y")
        await settle(app, pilot)
        assert listing.entries == ()
        # 4. The CLI tries gate-1's token again: the runner says it is gone, and records that too.
        again = cli(lobster, "resume", "--token", token, "--approve", "yes", approver="carol")
        assert again.returncode != 0

        await pilot.press("3")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        shown = rows(screen)
        gone = first.state_key.rsplit("_", 1)[-1][:8]  # type: ignore[union-attr]
        assert [(who, decision, step) for who, decision, step, _ in shown] == [
            ("carol", "approve", f"checkpoint {gone} (gone)"),
            ("alice", "approve", "gate"),
            ("alice", "reject", "gate"),
            ("carol", "approve", "gate"),
        ]
        outcomes = [outcome for *_, outcome in shown]
        assert outcomes[0].startswith("error:") and "not found" in outcomes[0]
        assert outcomes[1].startswith("error:")  # the failed run after the TUI's approval
        assert outcomes[2] == "cancelled" and outcomes[3] == "ok"
        assert [str(screen.table.get_row_at(i)[3]).split(" › ")[0] for i in range(1, 4)] == [
            "breaks", "gate-2", "gate-1",
        ]
        detail = str(screen.query_one("#history-detail").render())
        assert "approve by carol" in detail and "resume state not found" in detail.lower()

        # d cycles the decision filter: approve, reject, answer, cancel, failed, all.
        await pilot.press("d")
        assert [d for _, d, _, _ in rows(screen)] == ["approve"] * 3
        await pilot.press("d")
        assert [d for _, d, _, _ in rows(screen)] == ["reject"]
        await pilot.press("d", "d")
        assert rows(screen) == []
        assert "No decision matches" in str(screen.query_one("#history-detail").render())
        await pilot.press("d")  # failed
        assert [who for who, *_ in rows(screen)] == ["carol", "alice"]
        assert "decision: failed" in str(screen.table.border_title)
        await pilot.press("d")
        assert len(rows(screen)) == 4

        # / filters by text (approver, workflow, prompt, id, outcome...).
        await pilot.press("slash", *"carol", "enter")
        assert [who for who, *_ in rows(screen)] == ["carol", "carol"]
        await pilot.press("escape")  # clears the filters first
        assert len(rows(screen)) == 4
        await pilot.press("escape")  # then goes back
        assert app.screen is app.inbox


async def test_history_follows_new_journal_lines_live(lobster: Lobster, make_app: MakeApp) -> None:
    ids = [lobster.workflow(f"gate-{n}", text=GATE.format(n=n)).requires_approval["approvalId"] for n in (1, 2)]  # type: ignore[index]
    app = make_app(lobster.root, watch=True, debounce_ms=20)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("3")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await settle(app, pilot)
        assert rows(screen) == []
        # The watcher arms in a worker: poke the folder until a read proves it is on.
        generation = screen._generation

        def poked() -> bool:
            (lobster.root / "audit" / "probe").write_text("x", encoding="utf-8")
            return screen._generation > generation

        await wait_until(poked, pilot, timeout=20, message="journal watcher armed")
        assert cli(lobster, "resume", "--id", ids[0], "--approve", "yes", approver="dave").returncode == 0
        await wait_until(lambda: len(screen.shown) == 1, pilot, timeout=20, message="first line followed")
        assert cli(lobster, "resume", "--id", ids[1], "--approve", "no", approver="erin").returncode == 0
        await wait_until(lambda: len(screen.shown) == 2, pilot, timeout=20, message="second line followed")
        assert [(who, decision) for who, decision, *_ in rows(screen)] == [("erin", "reject"), ("dave", "approve")]


async def test_history_key_is_bound_with_an_id_and_not_over_a_modal(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("gate-1", text=GATE.format(n=1))
    app = make_app(lobster.root)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        assert any(b.id == "app.history" and b.key == "3" for b in app.BINDINGS)  # type: ignore[union-attr]
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("3")  # a modal is open: nothing else opens over it
        await pilot.pause()
        assert type(app.screen).__name__ == "ConfirmScreen"
        await pilot.press("n", "3")
        await settle(app, pilot)
        assert isinstance(app.screen, HistoryScreen)
        await pilot.press("3")  # already there
        await pilot.pause()
        assert len(app.screen_stack) == 2
        detail: Any = app.screen.query_one("#history-detail")
        assert "No decisions recorded yet" in str(detail.render())


async def test_the_palette_offers_history_and_the_bulk_keys(lobster: Lobster, make_app: MakeApp) -> None:
    lobster.workflow("gate-1", text=GATE.format(n=1))
    app = make_app(lobster.root)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("space", "ctrl+p")
        await pilot.pause()
        await pilot.press(*"approve marked")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert type(app.screen).__name__ == "BulkConfirmScreen"
        await pilot.press("n", "ctrl+p")
        await pilot.pause()
        await pilot.press(*"history")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, HistoryScreen)
