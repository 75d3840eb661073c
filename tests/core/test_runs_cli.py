"""``lobster runs`` and ``lobster logs`` over logs left by real ``lobster run``/``resume`` processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, CliResult, LobsterCli

GATED = """\
name: gated
steps:
  - id: greet
    run: echo hi; echo warn >&2
  - id: gate
    approval: "Ship it?"
  - id: after
    run: echo shipped
"""


@pytest.fixture
def gated(tmp_path: Path) -> Path:
    path = tmp_path / "gated.yaml"
    path.write_text(GATED)
    return path


def cli_env(state_dir: Path, **extra: str) -> dict[str, str]:
    """The environment the ``lobster`` fixture uses, for processes this file starts itself."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOBSTER_", "OPENCLAW_", "CLAWD_"))}
    env["LOBSTER_STATE_DIR"] = str(state_dir)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def start_cli(state_dir: Path, cwd: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "lobster_tui.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(state_dir),
        cwd=str(cwd),
    )


def runs_json(lobster: LobsterCli) -> list[dict[str, Any]]:
    result = lobster("runs", "--json")
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


def run_to_approval(lobster: LobsterCli, workflow: Path) -> tuple[str, str]:
    """Run ``workflow`` in tool mode to its approval; returns (run id, approval id)."""
    result = lobster("run", "--mode", "tool", str(workflow))
    assert result.code == 0, result.stderr
    approval_id = result.json["requiresApproval"]["approvalId"]
    [run] = runs_json(lobster)
    return run["id"], approval_id


def test_a_halted_run_is_listed_as_waiting_and_its_log_shows_what_it_did(lobster: LobsterCli, gated: Path) -> None:
    run_id, approval_id = run_to_approval(lobster, gated)
    [run] = runs_json(lobster)
    assert run["status"] == "needs_approval" and run["name"] == "gated"
    assert run["approvalId"] == approval_id and run["currentStep"] == "gate"

    table = lobster("runs")
    assert table.code == 0
    header, row = table.stdout.splitlines()
    assert header.split() == ["ID", "NAME", "STATUS", "STARTED", "DURATION", "STEP"]
    assert row.startswith(run_id) and "waiting: approval" in row and row.endswith("gate")

    transcript = lobster("logs", run_id)
    assert transcript.code == 0, transcript.stderr
    lines = transcript.stdout.splitlines()
    assert lines[0].startswith(f"== run {run_id} gated (workflow) started ")
    assert lines[1] == "-> greet [shell] echo hi; echo warn >&2"
    assert {"    hi", "  ! warn"} <= set(lines[2:4])
    assert lines[4].startswith("<- greet ok in ") and lines[4].endswith(", exit 0")
    assert f"|| checkpoint: approval (id {approval_id}): Ship it?" in lines
    assert lines[-1].startswith("== run waiting for approval after ")


def test_a_resume_continues_the_same_log(lobster: LobsterCli, gated: Path) -> None:
    run_id, approval_id = run_to_approval(lobster, gated)
    resumed = lobster("resume", "--id", approval_id, "--approve", "yes",
                      env={"LOBSTER_APPROVAL_APPROVED_BY": "ann"})
    assert resumed.code == 0 and resumed.json["status"] == "ok", resumed.stdout + resumed.stderr

    [run] = runs_json(lobster)
    assert run["id"] == run_id and run["status"] == "ok" and run["currentStep"] == "after"
    raw = lobster("logs", run_id, "--json")
    events = [json.loads(line) for line in raw.stdout.splitlines()]
    assert {event["runId"] for event in events} == {run_id}
    types = [event["type"] for event in events]
    assert types[types.index("checkpoint"):] == [
        "checkpoint", "run_finished", "resumed", "run_started", "step_started", "output", "step_finished",
        "run_finished",
    ]
    assert events[types.index("resumed")]["approver"] == "ann"
    text = lobster("logs", run_id).stdout
    assert "|| decision: approve by ann" in text and "    shipped" in text
    assert text.splitlines()[-1].startswith("== run ok after ")


def test_logs_follow_prints_until_the_resumed_run_finishes(lobster: LobsterCli, gated: Path, state_dir: Path,
                                                           tmp_path: Path) -> None:
    run_id, approval_id = run_to_approval(lobster, gated)
    follower = start_cli(state_dir, tmp_path, "logs", run_id, "--follow")
    try:
        assert follower.stdout is not None
        # The follower has printed the whole first segment and is now waiting at the checkpoint.
        seen: list[str] = []
        while not seen or not seen[-1].startswith("== run waiting for approval"):
            line = follower.stdout.readline()
            assert line, "follower ended early"
            seen.append(line.rstrip("\n"))
        assert follower.poll() is None

        assert lobster("resume", "--id", approval_id, "--approve", "yes").code == 0
        rest, err = follower.communicate(timeout=30)
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()
    assert follower.returncode == 0, err
    tail = rest.splitlines()
    assert tail[0].startswith("|| decision: approve")
    assert "    shipped" in tail and tail[-1].startswith("== run ok after ")


def test_a_rejected_run_ends_cancelled(lobster: LobsterCli, gated: Path) -> None:
    run_id, approval_id = run_to_approval(lobster, gated)
    assert lobster("resume", "--id", approval_id, "--approve", "no").code == 0
    [run] = runs_json(lobster)
    assert run["id"] == run_id and run["status"] == "cancelled"
    assert "|| decision: reject" in lobster("logs", run_id).stdout


def test_a_cancelled_run_ends_cancelled_in_its_own_log(lobster: LobsterCli, gated: Path) -> None:
    run_id, approval_id = run_to_approval(lobster, gated)
    assert lobster("resume", "--id", approval_id, "--cancel").json["status"] == "cancelled"
    [run] = runs_json(lobster)
    assert run["id"] == run_id and run["status"] == "cancelled"
    assert "|| decision: cancel" in lobster("logs", run_id).stdout


def test_environment_values_never_reach_the_log(lobster: LobsterCli, tmp_path: Path, state_dir: Path) -> None:
    workflow = tmp_path / "quiet.yaml"
    workflow.write_text("name: quiet\nsteps:\n  - id: a\n    run: echo visible\n")
    secret = "s3cr3t-do-not-log-7f1c"
    result = lobster("run", "--mode", "tool", str(workflow), env={"MY_API_TOKEN": secret})
    assert result.code == 0, result.stderr
    [log] = list((state_dir / "runs").iterdir())
    text = log.read_text()
    assert "visible" in text and secret not in text and "MY_API_TOKEN" not in text


def test_big_output_is_capped_in_the_log_only(lobster: LobsterCli, tmp_path: Path) -> None:
    workflow = tmp_path / "big.yaml"
    workflow.write_text("name: big\nsteps:\n  - id: loud\n    run: seq 1000\n")
    result = lobster("run", "--mode", "tool", str(workflow),
                     env={"LOBSTER_LOG_HEAD_LINES": "10", "LOBSTER_LOG_TAIL_LINES": "5"})
    assert result.code == 0, result.stderr
    assert result.json["output"][0].count("\n") == 1000  # the run's own result is untouched
    [run] = runs_json(lobster)
    lines = lobster("logs", run["id"]).stdout.splitlines()
    body = [line.strip() for line in lines if line.startswith("    ")]
    assert body == [*map(str, range(1, 11)), "... 985 lines of loud not logged ...", *map(str, range(996, 1001))]


def test_concurrent_cli_runs_each_get_their_own_log(lobster: LobsterCli, tmp_path: Path, state_dir: Path) -> None:
    procs = []
    for index in range(4):
        workflow = tmp_path / f"w{index}.yaml"
        workflow.write_text(f"name: w{index}\nsteps:\n  - id: a\n    run: for i in 1 2 3; do echo w{index}-$i; done\n")
        procs.append(start_cli(state_dir, tmp_path, "run", "--mode", "tool", str(workflow)))
    for proc in procs:
        proc.communicate(timeout=60)
        assert proc.returncode == 0
    runs = runs_json(lobster)
    assert sorted(run["name"] for run in runs) == ["w0", "w1", "w2", "w3"]
    for run in runs:
        body = [line.strip() for line in lobster("logs", run["id"]).stdout.splitlines() if line.startswith("    ")]
        assert body == [f"{run['name']}-{i}" for i in (1, 2, 3)]


def test_a_unique_prefix_finds_a_run(lobster: LobsterCli, gated: Path) -> None:
    run_id, _ = run_to_approval(lobster, gated)
    assert lobster("logs", run_id[:5]).stdout.startswith(f"== run {run_id} ")


def test_unknown_run_id_is_a_clear_error(lobster: LobsterCli, gated: Path) -> None:
    run_to_approval(lobster, gated)
    for args in (("logs", "0000nothere"), ("logs", "0000nothere", "--follow")):
        result: CliResult = lobster(*args)
        assert result.code == 1 and result.stdout == ""
        assert result.stderr.startswith("Error: no run log for '0000nothere'")


def test_no_runs_yet(lobster: LobsterCli) -> None:
    assert lobster("runs").stdout == "No runs recorded yet.\n"
    assert runs_json(lobster) == []


def test_bad_arguments_exit_2_with_usage(lobster: LobsterCli) -> None:
    for args in (("runs", "--bogus"), ("logs",), ("logs", "a", "b"), ("logs", "a", "--bogus")):
        result = lobster(*args)
        assert result.code == 2 and "Usage: lobster" in result.stderr, args


def test_a_corrupt_log_line_is_reported_not_fatal(lobster: LobsterCli, gated: Path, state_dir: Path) -> None:
    run_id, _ = run_to_approval(lobster, gated)
    path = state_dir / "runs" / f"{run_id}.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines.insert(2, b"\x00\x00\x00 not json")
    path.write_bytes(b"\n".join(lines))
    result = lobster("logs", run_id)
    assert result.code == 0
    assert result.stderr == "warning: line 3 of the log is not a valid event; skipped\n"
    assert "|| checkpoint: approval" in result.stdout


def test_retention_keeps_a_run_waiting_for_approval(lobster: LobsterCli, gated: Path, tmp_path: Path) -> None:
    waiting_id, _ = run_to_approval(lobster, gated)
    quick = tmp_path / "quick.yaml"
    quick.write_text("name: quick\nsteps:\n  - id: a\n    run: echo quick\n")
    for _ in range(3):
        assert lobster("run", "--mode", "tool", str(quick), env={"LOBSTER_LOG_KEEP_RUNS": "1"}).code == 0
    runs = runs_json(lobster)
    assert [run["name"] for run in runs] == ["quick", "gated"]
    assert runs[1]["id"] == waiting_id and runs[1]["status"] == "needs_approval"


SLEEPY = "name: sleepy\nsteps:\n  - id: nap\n    run: echo begun; sleep 30\n"


def test_a_killed_runner_reads_interrupted_in_runs_and_ends_logs_follow(
    lobster: LobsterCli, state_dir: Path, tmp_path: Path
) -> None:
    workflow = tmp_path / "sleepy.yaml"
    workflow.write_text(SLEEPY)
    proc = start_cli(state_dir, tmp_path, "run", "--mode", "tool", str(workflow))
    try:
        deadline = time.monotonic() + 15
        while not any(run["currentStep"] == "nap" for run in runs_json(lobster)):
            assert time.monotonic() < deadline, "the run never reached its step"
            time.sleep(0.05)
        [run] = runs_json(lobster)
        # While it runs, --json says who runs it.
        assert (run["status"], run["runnerPid"], run["runnerHost"]) == ("running", proc.pid, os.uname().nodename)
    finally:
        proc.kill()  # outright: no run_finished is ever written
        proc.communicate(timeout=15)
    [run] = runs_json(lobster)
    assert (run["status"], run["runnerPid"], run["runnerHost"]) == ("interrupted", None, None)
    _header, row = lobster("runs").stdout.splitlines()
    assert row.startswith(run["id"]) and " interrupted " in row
    # A follow does not wait for a runner that is gone: it says so and ends.
    followed = lobster("logs", run["id"], "--follow", timeout=30)
    assert followed.code == 0, followed.stderr
    lines = followed.stdout.splitlines()
    assert "    begun" in lines
    assert lines[-1] == f"== run interrupted: its process (pid {proc.pid}) is gone (killed or crashed); the run never finished"
    # The log itself is unchanged: a plain read ends where the runner stopped writing.
    assert "interrupted" not in lobster("logs", run["id"]).stdout
