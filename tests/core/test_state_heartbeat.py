"""Lock heartbeats: a held lock's owner file is touched, by one thread per process for all locks."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from lobster_tui.core.state import StateStore


def _heartbeat_threads() -> int:
    return sum(1 for thread in threading.enumerate() if thread.name == "lobster-lock-heartbeat")


def test_a_held_lock_is_touched_and_every_lock_shares_one_thread(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    store.write_value("first", {"n": 1})
    store.write_value("second", {"n": 2})
    with store.locked("first"), store.locked("second"):
        owner = tmp_path / "first.json.lock" / "owner"
        assert owner.is_file()
        past = time.time() - 60
        os.utime(owner, (past, past))
        deadline = time.monotonic() + 10
        while os.stat(owner).st_mtime <= past + 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert os.stat(owner).st_mtime > past + 1, "the owner file of a held lock was never touched"
        assert _heartbeat_threads() == 1
    assert not (tmp_path / "first.json.lock").exists()
    with store.locked("first"):
        assert _heartbeat_threads() == 1
