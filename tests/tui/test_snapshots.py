"""Snapshots of the main screens at 120x36, from the official runtime's fixture state directory.

The data is fixed (state keys, approval ids and ``createdAt`` come from the fixtures, the clock is
frozen, the live panel replays recorded events), and no screen shown here has a blinking cursor.
Update with ``pytest tests/tui/test_snapshots.py --snapshot-update`` after looking at the diff.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tests.tui.helpers import FIXTURES, MakeApp

SIZE = (120, 36)


async def _settled(pilot: Pilot[Any]) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_inbox(snap_compare: Any, official_state: Path, make_app: MakeApp) -> None:
    app = make_app(official_state, approver="alice")
    assert snap_compare(app, terminal_size=SIZE, run_before=_settled)


def test_review_screen(snap_compare: Any, official_state: Path, make_app: MakeApp) -> None:
    app = make_app(official_state, approver="alice")

    async def open_review(pilot: Pilot[Any]) -> None:
        await _settled(pilot)
        await pilot.press("j", "enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=open_review)


def test_confirm_modal(snap_compare: Any, official_state: Path, make_app: MakeApp) -> None:
    app = make_app(official_state, approver="alice")

    async def ask_to_approve(pilot: Pilot[Any]) -> None:
        await _settled(pilot)
        await pilot.press("j", "a")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ask_to_approve)


def test_live_log_panel(snap_compare: Any, official_state: Path, make_app: MakeApp) -> None:
    app = make_app(official_state, approver="alice")
    events = json.loads((FIXTURES / "run_events.json").read_text(encoding="utf-8"))

    async def replay_a_run(pilot: Pilot[Any]) -> None:
        await _settled(pilot)
        await pilot.press("j")
        inbox = pilot.app.inbox  # type: ignore[attr-defined]
        inbox.show_log()
        feed = inbox.log_panel.new_feed("approve · inbox-cleanup")
        for event in events:
            feed.push(event)
        await pilot.pause()
        inbox.log_panel.finish(feed, "ok", "The run finished ok.")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=replay_a_run)
