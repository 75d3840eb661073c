"""Run logs of runs that did not end on their own: stopped on request, or whose process died.

Real subprocesses and real state directories: a CLI runner killed with SIGKILL, a pid that is
reused by another process, a CLI run stopped with SIGINT, and a run stopped through its signal.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from lobster_tui.core.events import runner_process
from lobster_tui.core.run_log import RunLogWriter, follow_events, list_runs, log_path, read_events, runs_dir
from lobster_tui.core.runner import RunContext, run_workflow
from lobster_tui.core.state import StateStore
from tests.core.polling import wait_until

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def state(tmp_path: Path) -> StateStore:
    return StateStore(tmp_path / "state")




def status_of(state: StateStore, run_id: str, now: datetime | None = None) -> str | None:
    runs = list_runs(state) if now is None else list_runs(state, now=now)
    return next((run.status for run in runs if run.id == run_id), None)


def stamp(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_log(state: StateStore, run_id: str, events: list[dict[str, Any]]) -> Path:
    """A log as the writer leaves it (one compact JSON object a line)."""
    path = log_path(state, run_id)
    runs_dir(state).mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(event, separators=(",", ":")) + "\n" for event in events), encoding="utf-8")
    return path


def started(run_id: str, when: datetime, seq: int = 1, **process: Any) -> dict[str, Any]:
    return {"type": "run_started", "runId": run_id, "seq": seq, "time": stamp(when), "name": "w", "source": "workflow",
            "target": "/w/w.lobster", "args": {}, "cwd": "/w", "resumed": seq > 1, **process}


def step(run_id: str, when: datetime, seq: int) -> dict[str, Any]:
    return {"type": "step_started", "runId": run_id, "seq": seq, "time": stamp(when), "stepId": "slow",
            "kind": "shell", "command": "sleep 100"}


def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def cli_env(state: StateStore) -> dict[str, str]:
    return {**os.environ, "LOBSTER_STATE_DIR": str(state.root), "PYTHONPATH": str(REPO)}


SLEEPY = "name: sleepy\nsteps:\n  - id: nap\n    run: echo begun; sleep 30; echo never\n"


# -- a runner that died ---------------------------------------------------------------------------


def test_a_cli_runner_killed_outright_is_listed_as_interrupted_not_running(state: StateStore, tmp_path: Path) -> None:
    workflow = tmp_path / "sleepy.lobster"
    workflow.write_text(SLEEPY, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "lobster_tui.cli", "run", "--mode", "tool", str(workflow)],
                            env=cli_env(state), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: any(run.status == "running" and run.current_step == "nap" for run in list_runs(state)),
                   message="the run is listed as running")
        [run] = list_runs(state)
        first = read_events(state, run.id)[0]
        assert first["type"] == "run_started" and first["pid"] == proc.pid and first["host"] == os.uname().nodename
        proc.kill()
        # Killed but not yet reaped, the runner is a zombie: already not running.
        wait_until(lambda: status_of(state, run.id) == "interrupted", message="a zombie runner is not running")
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert status_of(state, run.id) == "interrupted"
    [summary] = list_runs(state)
    assert summary.duration_ms is not None and summary.current_step == "nap"


def test_a_reused_pid_does_not_make_a_dead_run_look_alive(state: StateStore) -> None:
    # A live process whose pid the log names, but that started an hour after the run: not its runner.
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        an_hour_ago = datetime.now(timezone.utc) - timedelta(hours=1)
        write_log(state, "reused", [started("reused", an_hour_ago, pid=stranger.pid, host=os.uname().nodename),
                                    step("reused", an_hour_ago, 2)])
        # This test process did start before "now": a segment it could have logged counts as running.
        just_now = datetime.now(timezone.utc)
        write_log(state, "mine", [started("mine", just_now, **runner_process()), step("mine", just_now, 2)])
        assert status_of(state, "reused") == "interrupted"
        assert status_of(state, "mine") == "running"
    finally:
        stranger.kill()
        stranger.wait()


def test_the_newest_segment_decides_even_far_behind_a_loud_step(state: StateStore) -> None:
    """A resumed segment's own process counts, and its run_started can lie megabytes back."""
    now = datetime.now(timezone.utc)
    here = runner_process()
    output = {"type": "output", "runId": "loud", "seq": 9, "time": stamp(now), "stepId": "slow", "stream": "stdout",
              "line": 'x {"type":"run_started"} ' * 4}
    checkpoint = {"type": "checkpoint", "runId": "loud", "seq": 3, "time": stamp(now), "kind": "approval",
                  "stateKey": "k", "approvalId": "ab12cd", "prompt": "go?"}
    path = write_log(state, "loud", [
        started("loud", now, pid=os.getpid(), host=here["host"]),  # alive: this process
        step("loud", now, 2),
        checkpoint,
        started("loud", now, seq=4, pid=dead_pid(), host=here["host"]),  # the resume, whose process died
        step("loud", now, 5),
    ])
    with open(path, "a", encoding="utf-8") as handle:
        handle.write((json.dumps(output, separators=(",", ":")) + "\n") * 20_000)
    assert path.stat().st_size > 1_000_000
    assert status_of(state, "loud") == "interrupted"


def test_without_a_pid_or_from_another_host_a_log_counts_as_running_for_a_day_by_the_given_clock(
    state: StateStore,
) -> None:
    now = datetime.now(timezone.utc)
    write_log(state, "old-style", [started("old-style", now), step("old-style", now, 2)])
    write_log(state, "elsewhere", [started("elsewhere", now, pid=dead_pid(), host="another-machine"),
                                   step("elsewhere", now, 2)])
    for run_id in ("old-style", "elsewhere"):
        assert status_of(state, run_id) == "running"
        assert status_of(state, run_id, now + timedelta(hours=23)) == "running"
        assert status_of(state, run_id, now + timedelta(hours=25)) == "interrupted"


def test_list_runs_counts_a_running_duration_to_the_given_now(state: StateStore) -> None:
    begun = datetime.now(timezone.utc).replace(microsecond=0)  # the log keeps milliseconds
    write_log(state, "busy", [started("busy", begun, **runner_process()), step("busy", begun, 2)])
    [summary] = list_runs(state, now=begun + timedelta(seconds=90))
    assert summary.status == "running" and summary.duration_ms == 90_000


# -- a run someone stopped ------------------------------------------------------------------------


def test_a_stopped_run_is_logged_cancelled_while_its_envelope_stays_the_specs_runtime_error(
    state: StateStore, tmp_path: Path
) -> None:
    workflow = tmp_path / "sleepy.lobster"
    workflow.write_text(SLEEPY, encoding="utf-8")
    rc = RunContext(state=state, cwd=str(tmp_path), subscribers=[RunLogWriter(state)])
    outcomes: list[Any] = []
    thread = threading.Thread(target=lambda: outcomes.append(run_workflow(str(workflow), rc)))
    thread.start()
    wait_until(lambda: any(run.current_step == "nap" for run in list_runs(state)), message="step started")
    rc.signal.abort("stopped from lobster-tui", stop=True)
    thread.join(timeout=15)
    [outcome] = outcomes
    assert outcome.envelope()["error"] == {"type": "runtime_error", "message": "stopped from lobster-tui"}
    last = read_events(state, outcome.run_id)[-1]
    assert last["type"] == "run_finished" and last["status"] == "cancelled"
    assert last["error"] == "stopped from lobster-tui"
    assert status_of(state, outcome.run_id) == "cancelled"
    # An abort nobody asked for (the host timeout) is still a failure.
    timed = RunContext(state=state, cwd=str(tmp_path), subscribers=[RunLogWriter(state)], timeout_ms=300)
    timed_out = run_workflow(str(workflow), timed)
    assert timed_out.envelope()["error"] == {"type": "runtime_error", "message": "lobster runtime timed out"}
    assert status_of(state, str(timed_out.run_id)) == "failed"


def test_a_cli_run_stopped_with_sigint_is_logged_cancelled_and_prints_the_runtime_error(
    state: StateStore, tmp_path: Path
) -> None:
    workflow = tmp_path / "sleepy.lobster"
    workflow.write_text(SLEEPY, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "lobster_tui.cli", "run", "--mode", "tool", str(workflow)],
                            env=cli_env(state), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_until(lambda: any(run.current_step == "nap" for run in list_runs(state)), message="step started")
        proc.send_signal(signal.SIGINT)
        out, _err = proc.communicate(timeout=15)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130
    assert json.loads(out)["error"] == {"type": "runtime_error", "message": "Received SIGINT"}
    [run] = list_runs(state)
    assert run.status == "cancelled"
    assert read_events(state, run.id)[-1]["error"] == "Received SIGINT"


# -- following a run whose runner dies ------------------------------------------------------------


def follow_in_thread(state: StateStore, run_id: str, **options: Any) -> tuple[list[dict[str, Any]], threading.Thread,
                                                                              threading.Event]:
    """Follow a log in a thread (the TUI's way); the test sets the returned event if it must give up."""
    seen: list[dict[str, Any]] = []
    stop = threading.Event()
    thread = threading.Thread(target=lambda: seen.extend(follow_events(state, run_id, stop, poll=0.01, **options)),
                              daemon=True)
    thread.start()
    return seen, thread, stop


def test_following_a_cli_run_ends_with_run_interrupted_when_its_runner_is_killed_while_watched(
    state: StateStore, tmp_path: Path
) -> None:
    workflow = tmp_path / "sleepy.lobster"
    workflow.write_text(SLEEPY, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "lobster_tui.cli", "run", "--mode", "tool", str(workflow)],
                            env=cli_env(state), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: any(run.current_step == "nap" for run in list_runs(state)), message="step started")
        [run] = list_runs(state)
        seen, thread, stop = follow_in_thread(state, run.id, runner_check=0.05)
        wait_until(lambda: any(event.get("line") == "begun" for event in seen), message="the follower is caught up")
        assert thread.is_alive()  # a live runner: the follow waits for more
        proc.kill()
        thread.join(timeout=15)
        stop.set()
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert not thread.is_alive(), "the follow kept waiting for a dead runner"
    last = seen[-1]
    assert last["type"] == "run_interrupted" and last["runId"] == run.id
    assert last["pid"] == proc.pid and last["host"] == os.uname().nodename
    assert last["time"] == seen[-2]["time"]  # when the run was last heard of
    assert [event["type"] for event in seen].count("run_interrupted") == 1
    assert [event for event in seen[:-1] if event["type"] != "output"] == [
        event for event in read_events(state, run.id) if event["type"] != "output"]
    # The file itself says nothing of it: the reader made the event.
    assert read_events(state, run.id)[-1]["type"] != "run_interrupted"
    # Opened after the fact, the follow reads the whole log and then says the same.
    after = list(follow_events(state, run.id, threading.Event(), poll=0.01, runner_check=0.05))
    assert after == seen


def test_a_follow_waits_on_a_run_at_a_checkpoint_and_on_a_live_runner_even_when_checking(state: StateStore) -> None:
    now = datetime.now(timezone.utc)
    here = runner_process()
    checkpoint = {"type": "checkpoint", "runId": "gated", "seq": 3, "time": stamp(now), "kind": "approval",
                  "stateKey": "k", "approvalId": "ab12cd", "prompt": "go?"}
    # Its runner is long gone, but a run at a checkpoint is waiting for a decision, not running.
    write_log(state, "gated", [started("gated", now, pid=dead_pid(), host=here["host"]), step("gated", now, 2),
                               checkpoint])
    write_log(state, "alive", [started("alive", now, **here), step("alive", now, 2)])  # this process runs it
    followers = {run_id: follow_in_thread(state, run_id, runner_check=0.01) for run_id in ("gated", "alive")}
    try:
        # Many checks go by (the thread looks every 10 ms); neither follow may end.
        wait_until(lambda: all(len(seen) == 3 - (run_id == "alive") for run_id, (seen, _t, _s) in followers.items()),
                   message="both read")
        for _ in range(20):
            time.sleep(0.02)
            assert all(thread.is_alive() for _seen, thread, _stop in followers.values())
    finally:
        for _seen, thread, stop in followers.values():
            stop.set()
            thread.join(timeout=5)
    assert all(event["type"] != "run_interrupted" for seen, _t, _s in followers.values() for event in seen)


def test_without_runner_check_a_follow_of_a_dead_run_keeps_waiting_as_before(state: StateStore) -> None:
    now = datetime.now(timezone.utc)
    write_log(state, "dead", [started("dead", now, pid=dead_pid(), host=os.uname().nodename), step("dead", now, 2)])
    seen, thread, stop = follow_in_thread(state, "dead")
    wait_until(lambda: len(seen) == 2, message="read")
    stop.set()
    thread.join(timeout=5)
    assert [event["type"] for event in seen] == ["run_started", "step_started"]
