"""Snapshots of the Runs list and a run view at 120x36.

The data is fixed: ``fixtures/runs_state`` holds run logs of real runs with fixed ids, times and
paths (see ``fixtures/make_runs_state.py``), and the clock is frozen. Update with
``pytest tests/tui/test_runs_snapshots.py --snapshot-update`` after looking at the diff.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from lobster_tui.tui.screens.run_view import RunViewScreen
from lobster_tui.tui.screens.runs import RunsScreen
from tests.tui.helpers import FIXTURES, MakeApp, wait_until

SIZE = (120, 36)


@pytest.fixture
def runs_state(tmp_path: Path) -> Path:
    """A copy of the fixture state directory with four runs: failed, resumed ok, waiting, running."""
    state = tmp_path / "runs_state"
    shutil.copytree(FIXTURES / "runs_state", state)
    return state


async def _runs_listed(pilot: Pilot[Any]) -> RunsScreen:
    await pilot.press("2")
    screen = pilot.app.screen
    assert isinstance(screen, RunsScreen)
    await wait_until(lambda: len(screen.run_list.runs) == 4, pilot, message="runs listed")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    return screen


def test_runs_list(snap_compare: Any, runs_state: Path, make_app: MakeApp) -> None:
    app = make_app(runs_state)

    async def show_runs(pilot: Pilot[Any]) -> None:
        screen = await _runs_listed(pilot)
        screen.run_list.select_run("c83d5e61f0b9")  # the run waiting at its approval
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=show_runs)


def test_run_view_across_a_checkpoint(snap_compare: Any, runs_state: Path, make_app: MakeApp) -> None:
    app = make_app(runs_state)

    async def open_run(pilot: Pilot[Any]) -> None:
        screen = await _runs_listed(pilot)
        screen.run_list.select_run("4f1c2a9e7b30")  # halted at an approval, resumed, ok
        await pilot.press("enter")
        view = pilot.app.screen
        assert isinstance(view, RunViewScreen)
        await wait_until(lambda: view.story.status == "ok", pilot, message="story read")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=open_run)
