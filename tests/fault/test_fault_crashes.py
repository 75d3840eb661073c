"""Crashes at any moment: ``kill -9`` the runner (``lobster run --mode tool`` and ``lobster resume``).

A SIGKILLed runner cannot clean up, so what survives is what the design guarantees:
- no orphan: every child the runner started (marked with a unique word in its argv) is gone soon
  after the runner died; the runner's watchdog process (``lobster_tui.core.process``) kills the
  process groups of a runner that vanished;
- no torn file: every ``*.json`` in the state directory parses (writes are atomic renames);
- every checkpoint is either pending and resumable, or consumed (a marker, never listed);
- stale locks left by the dead runner are reclaimed by the next run (dead owner pid; a lock whose
  owner file was never written is aged past the protocol's 30 s rule instead of waiting);
- ``scan_checkpoints`` lists the directory without error or broken entries.

Kill moments are seeded and spread uniformly over the duration of an unkilled run of the same
workflow (start-up plus about 300 ms of steps that sleep briefly, spawn children, time out and
write checkpoints), so they land in every phase.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from lobster_tui.core.checkpoints import BrokenCheckpoint, Checkpoint, scan_checkpoints
from lobster_tui.core.state import StateStore
from tests.fault.faultlib import (
    assert_envelope,
    kill_marked,
    pids_with_marker,
    run_cli,
    scaled,
    start_cli,
    tally,
    wait_until,
)
from tests.fault.scenarios import context

WORKFLOW = """\
steps:
  - id: warm
    run: "sh -c 'sleep 0.02; :' {marker}-a; echo '[1]'"
  - id: hold
    run: "sh -c 'sleep 30; :' {marker}-b & sh -c 'sleep 30; :' {marker}-c"
    timeout_ms: 150
    on_error: continue
  - id: gate
    approval: go?
  - id: effect
    run: "echo x >> {effects}; sh -c 'sleep 30; :' {marker}-d & sh -c 'sleep 30; :' {marker}-e"
    timeout_ms: 150
    on_error: continue
  - id: gate2
    approval: again?
  - id: final
    run: "echo y >> {effects}"
"""

ORPHAN_GRACE_SECONDS = 5.0
# process.py registers a child's group with the watchdog as soon as Popen returns: a runner killed
# while Popen is still starting the child (fork to exec, microseconds idle, milliseconds on a loaded
# machine) leaves that child unregistered. Survivors that all started this close to the kill are
# that documented gap (tallied, then ended); anything older is an orphan the design should prevent.
SPAWN_GAP_SECONDS = 0.1


def _since_boot() -> float:
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def _started_at(pid: int) -> float | None:
    """When ``pid`` started, in seconds since boot (clock-tick resolution), from /proc."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            ticks = int(handle.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None
    return ticks / os.sysconf("SC_CLK_TCK")


def _only_spawn_gap(pids: list[int], killed_at: float) -> bool:
    starts = [_started_at(pid) for pid in pids]
    tick = 1 / os.sysconf("SC_CLK_TCK")
    return bool(pids) and all(s is not None and s >= killed_at - SPAWN_GAP_SECONDS - tick for s in starts)


def _write_workflow(work: Path, marker: str, effects: Path) -> Path:
    path = work / "crash.lobster"
    path.write_text(WORKFLOW.format(marker=marker, effects=effects), encoding="utf-8")
    return path


def _age_ownerless_locks(state_dir: Path) -> int:
    """A runner killed between ``mkdir lock`` and writing its owner file leaves an ownerless lock,
    stale only after 30 s by the interop protocol: age it instead of waiting in CI."""
    aged = 0
    for lock in state_dir.glob("*.lock"):
        owner = lock / "owner"
        if lock.is_dir() and (not owner.exists() or not owner.read_text().strip()):
            past = time.time() - 31
            os.utime(lock, (past, past))
            if owner.exists():
                os.utime(owner, (past, past))
            aged += 1
    return aged


def _check_after_kill(state_dir: Path, work: Path, marker: str, killed_at: float) -> None:
    """Everything a crash must leave intact; resumes every pending checkpoint once."""
    # No orphan: the children die with their runner.
    try:
        wait_until(lambda: not pids_with_marker(marker), timeout=ORPHAN_GRACE_SECONDS, what=f"children of {marker} to die")
    except AssertionError:
        survivors = pids_with_marker(marker)
        if not _only_spawn_gap(survivors, killed_at):
            raise
        tally("kills in the spawn-registration gap (children ended by the test)", 1)
    finally:
        kill_marked(marker)
    if not state_dir.exists():
        return
    # No torn file.
    for path in state_dir.iterdir():
        if path.name.endswith(".json") and path.is_file():
            json.loads(path.read_text(encoding="utf-8"))
    # Listing works and lists nothing broken.
    store = StateStore(state_dir)
    found = scan_checkpoints(store)
    assert not [c for c in found if isinstance(c, BrokenCheckpoint)], found
    tally("ownerless locks aged", _age_ownerless_locks(state_dir))
    # Every pending checkpoint can be resumed: the next run reclaims the dead runner's locks.
    for checkpoint in found:
        assert isinstance(checkpoint, Checkpoint)
        outcome = _resume_core(state_dir, work, checkpoint.token)
        assert outcome["ok"], (checkpoint.state_key, outcome)
        assert outcome["status"] in ("ok", "needs_approval"), outcome
    # Every lock left behind (on any key) is reclaimable, and reclaiming leaves nothing.
    for lock in list(state_dir.glob("*.json.lock")):
        with store.locked(lock.name[: -len(".json.lock")], max_wait=5.0):
            pass
    assert not list(state_dir.glob("*.json.lock")), os.listdir(state_dir)
    tally("release dirs left by a kill", len(list(state_dir.glob("*.lock.release-*"))))
    # Consumed checkpoints stay consumed and are never listed.
    for path in state_dir.glob("*_resume_*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        listed = {c.state_key for c in scan_checkpoints(store) if isinstance(c, Checkpoint)}
        if isinstance(data, dict) and data.get("type") == "lobster.consumed-resume-state.v1":
            assert path.stem not in listed


def _resume_core(state_dir: Path, work: Path, token: str) -> dict:
    from lobster_tui.core.runner import resume

    return resume(context(state_dir, work), token=token, approved=True).envelope()


def _kill_at(proc: subprocess.Popen[bytes], delay: float) -> tuple[bool, float]:
    """SIGKILL ``proc`` after ``delay`` seconds; (False, _) when it had already finished.
    The second value is the moment of the kill, in seconds since boot."""
    deadline = time.monotonic() + delay
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        time.sleep(0.002)
    killed = proc.poll() is None
    killed_at = _since_boot()
    if killed:
        os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    return killed, killed_at


def _baseline(state_dir: Path, work: Path, args: list[str]) -> float:
    started = time.monotonic()
    result = run_cli(state_dir, *args, cwd=work)
    assert_envelope(result, "baseline")
    return time.monotonic() - started


@pytest.mark.parametrize("phase", ["run", "resume"])
def test_kill_9_at_random_moments_loses_nothing(phase: str, rng: random.Random, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    effects = tmp_path / "effects.txt"
    survived = 0
    duration = None
    for kill_no in range(scaled(6)):
        state_dir = tmp_path / f"state{kill_no}"
        marker = f"lobster-fault-{uuid.uuid4().hex[:12]}"
        workflow = _write_workflow(work, marker, effects)
        if phase == "run":
            args = ["run", "--mode", "tool", str(workflow)]
        else:
            outcome = context(state_dir, work)
            from lobster_tui.core.runner import run_workflow

            halted = run_workflow(str(workflow), outcome).envelope()
            args = ["resume", "--token", halted["requiresApproval"]["resumeToken"], "--approve", "yes"]
        if duration is None:
            # Calibrate on a copy of the state, so the measured run does not consume the checkpoint.
            calibration = tmp_path / "calibration"
            if state_dir.exists():
                subprocess.run(["cp", "-a", str(state_dir), str(calibration)], check=True)
            duration = _baseline(calibration, work, args)
            kill_marked(marker)
        delay = rng.uniform(0, duration)
        proc = start_cli(state_dir, *args, cwd=work)
        killed, killed_at = _kill_at(proc, delay)
        try:
            _check_after_kill(state_dir, work, marker, killed_at)
        except AssertionError as error:
            raise AssertionError(f"kill {kill_no} at {delay * 1000:.0f} ms of {duration * 1000:.0f} ms "
                                 f"(killed={killed}): {error}") from None
        survived += 1
        tally(f"kills survived ({phase})", 1 if killed else 0)
    assert survived == scaled(6)
