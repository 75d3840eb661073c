"""Helpers shared by the triage tests (bulk, history, notices): waiting without hanging on watchers."""

from __future__ import annotations

from typing import Any

from textual.worker import WorkerCancelled, WorkerFailed

from lobster_tui.tui.app import LobsterApp

# Workers that follow a directory run until their screen closes; waiting for them never ends.
FOLLOWERS = ("watch", "history-watch")


async def settle(app: LobsterApp, pilot: Any, rounds: int = 3) -> None:
    """Wait for every worker that finishes (scans, decisions, reads) and the messages it posted.

    Unlike a bare ``wait_for_complete()``, a scan cancelled by a newer scan (exclusive workers)
    does not end the wait with ``WorkerCancelled``, and the directory watchers are not waited for.
    """
    for _ in range(rounds):
        busy = [w for w in app.workers if w.group not in FOLLOWERS and not w.is_finished]
        if busy:
            try:
                await app.workers.wait_for_complete(busy)
            except (WorkerCancelled, WorkerFailed):
                pass
        await pilot.pause()


async def arm_watcher(app: LobsterApp, pilot: Any) -> None:
    """Poke the state directory until a rescan shows the watcher is on (it arms in a worker)."""
    from tests.tui.helpers import wait_until

    generation = app.inbox._scan_generation

    def poked() -> bool:
        app.state.write_value("approval_00000000", {"stateKey": "nothing"})
        return app.inbox._scan_generation > generation

    await wait_until(poked, pilot, timeout=20, message="watcher armed")
