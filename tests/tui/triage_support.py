"""Helpers shared by the triage tests (bulk, history, notices): waiting without hanging on watchers."""

from __future__ import annotations

from typing import Any

from lobster_tui.tui.app import LobsterApp


async def arm_watcher(app: LobsterApp, pilot: Any) -> None:
    """Poke the state directory until a rescan shows the watcher is on (it arms in a worker)."""
    from tests.tui.helpers import wait_until

    generation = app.inbox._scan_generation

    def poked() -> bool:
        app.state.write_value("approval_00000000", {"stateKey": "nothing"})
        return app.inbox._scan_generation > generation

    await wait_until(poked, pilot, timeout=20, message="watcher armed")
