"""Stopping a run of another process: only a real ``lobster run``/``resume`` of ours is signalled.

Real CLI subprocesses and real state directories; the refusals use live processes that are not
the run's runner (another program, a reused pid, this very process) and check they survive.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from lobster_tui.core.run_log import list_runs, log_path, read_events, runs_dir
from lobster_tui.core.runner_signal import is_lobster_cli_run, stop_other_runner
from lobster_tui.core.state import StateStore
from tests.core.polling import wait_until

REPO = Path(__file__).resolve().parents[2]
HOST = os.uname().nodename


@pytest.fixture
def state(tmp_path: Path) -> StateStore:
    return StateStore(tmp_path / "state")




def stamp(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def forged_log(state: StateStore, run_id: str, pid: int, when: datetime) -> None:
    """A running run's log naming ``pid`` as its runner."""
    runs_dir(state).mkdir(parents=True, exist_ok=True)
    events: list[dict[str, Any]] = [
        {"type": "run_started", "runId": run_id, "seq": 1, "time": stamp(when), "name": "w", "source": "workflow",
         "target": "/w/w.lobster", "args": {}, "cwd": "/w", "resumed": False, "pid": pid, "host": HOST},
        {"type": "step_started", "runId": run_id, "seq": 2, "time": stamp(when), "stepId": "s", "kind": "shell",
         "command": "sleep 100"},
    ]
    log_path(state, run_id).write_text("".join(json.dumps(event) + "\n" for event in events), encoding="utf-8")


def test_the_command_lines_of_the_cli_are_recognised() -> None:
    assert is_lobster_cli_run(["/usr/bin/python3", "/home/u/.venv/bin/lobster", "run", "--mode", "tool", "x.lobster"])
    assert is_lobster_cli_run(["python", "-m", "lobster_tui.cli", "resume", "--id", "ab12cd", "--approve", "yes"])
    assert not is_lobster_cli_run(["python", "/venv/bin/lobster-tui", "run", "x.lobster"])  # the TUI: many runs
    assert not is_lobster_cli_run(["python", "/venv/bin/lobster", "runs"])
    assert not is_lobster_cli_run(["python", "-m", "pytest", "lobster", "run"])
    assert not is_lobster_cli_run(["sleep", "30"])
    assert not is_lobster_cli_run([])


def test_a_cli_run_in_another_process_is_stopped_with_sigterm_and_logged_cancelled(
    state: StateStore, tmp_path: Path
) -> None:
    workflow = tmp_path / "sleepy.lobster"
    workflow.write_text("name: sleepy\nsteps:\n  - id: nap\n    run: echo begun; sleep 30; echo never\n", encoding="utf-8")
    env = {**os.environ, "LOBSTER_STATE_DIR": str(state.root), "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "lobster_tui.cli", "run", "--mode", "tool", str(workflow)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_until(lambda: any(run.current_step == "nap" for run in list_runs(state)), message="step started")
        [run] = list_runs(state)
        assert run.status == "running" and run.runner_pid == proc.pid
        assert stop_other_runner(state, run.id) is None
        out, _err = proc.communicate(timeout=15)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 143
    assert json.loads(out)["error"] == {"type": "runtime_error", "message": "Received SIGTERM"}
    last = read_events(state, run.id)[-1]
    assert last["type"] == "run_finished" and last["status"] == "cancelled"
    assert stop_other_runner(state, run.id) is not None  # finished: nothing more to stop


def test_a_process_that_is_not_the_runner_is_never_signalled(state: StateStore) -> None:
    now = datetime.now(timezone.utc)
    other = subprocess.Popen(["sleep", "30"])
    try:
        # Another program under the logged pid, started before the run: alive and not a lobster run.
        forged_log(state, "notlobster", other.pid, now + timedelta(seconds=1))
        assert "is not a `lobster run`" in str(stop_other_runner(state, "notlobster"))
        # The same pid, but the process started an hour after the run: the pid was reused.
        forged_log(state, "reused", other.pid, now - timedelta(hours=1))
        assert "reused" in str(stop_other_runner(state, "reused"))
        # This very process (a library host, or the TUI itself, runs many runs).
        forged_log(state, "mine", os.getpid(), now)
        assert stop_other_runner(state, "mine") is not None
        time.sleep(0.1)
        assert other.poll() is None  # still alive: nothing was sent
    finally:
        other.kill()
        other.wait()
    forged_log(state, "gone", other.pid, now)
    assert "gone" in str(stop_other_runner(state, "gone"))
