"""Limits: timeouts end whole process trees, the stdout cap holds, early-closing stdin readers are fine."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.fault.faultlib import (
    assert_envelope,
    kill_marked,
    pids_with_marker,
    run_cli,
    tally,
    wait_until,
)


def _no_marked_processes(marker: str) -> None:
    try:
        # The runner settles only after SIGKILL went to the group; allow the kernel a moment to reap.
        wait_until(lambda: not pids_with_marker(marker), timeout=3.0, what=f"processes marked {marker} to end")
    finally:
        kill_marked(marker)


def test_a_step_timeout_ends_the_whole_tree(tmp_path: Path) -> None:
    marker = f"lobster-fault-{uuid.uuid4().hex[:12]}"
    workflow = tmp_path / "timeout.lobster"
    workflow.write_text(
        "steps:\n"
        "  - id: slow\n"
        f"    run: \"sh -c 'sleep 30; :' {marker}-fg & sh -c 'sleep 30; :' {marker}-quiet >/dev/null 2>&1 &"
        f" (sh -c 'sleep 30; :' {marker}-sub &); sleep 30 & wait\"\n"
        "    timeout_ms: 300\n"
    )
    result = run_cli(tmp_path / "state", "run", "--mode", "tool", str(workflow), cwd=tmp_path)
    envelope = assert_envelope(result, "timeout")
    assert not envelope["ok"] and envelope["error"]["message"] == "Step 'slow' timed out after 300ms", envelope
    _no_marked_processes(marker)


def test_the_host_timeout_ends_the_whole_tree(tmp_path: Path) -> None:
    marker = f"lobster-fault-{uuid.uuid4().hex[:12]}"
    pipeline = f"exec --shell \"sh -c 'sleep 30; :' {marker}-a & sh -c 'sleep 30; :' {marker}-b; :\""
    result = run_cli(tmp_path / "state", "run", "--mode", "tool", "--timeout-ms", "400", pipeline, cwd=tmp_path)
    envelope = assert_envelope(result, "host timeout")
    assert not envelope["ok"] and "timed out" in envelope["error"]["message"], envelope
    _no_marked_processes(marker)


@pytest.mark.parametrize("mode", ["tool", "human"])
def test_the_stdout_cap_holds(mode: str, tmp_path: Path) -> None:
    cap = 4096
    big = "exec --json --shell \"printf '['; i=0; while [ $i -lt 3000 ]; do printf '%s,' $i; i=$((i+1)); done; printf '0]'\""
    result = run_cli(tmp_path / "state", "run", "--mode", mode, "--max-stdout-bytes", str(cap), big, cwd=tmp_path)
    assert "Traceback" not in result.stderr
    assert len(result.stdout.encode()) <= cap, len(result.stdout)
    if mode == "tool":
        envelope = assert_envelope(result, "cap")
        assert envelope["error"]["message"] == "lobster runtime result exceeded maxStdoutBytes", envelope
    else:
        assert result.code == 1 and "exceeded maxStdoutBytes" in result.stderr, result.stderr
    # Under the cap the same output passes.
    small = run_cli(tmp_path / "state", "run", "--mode", mode, "--max-stdout-bytes", "100000", big, cwd=tmp_path)
    assert small.code == 0, small.stderr
    tally("limit cases tried", 2)


def test_children_that_close_stdin_early_do_not_break_the_run(tmp_path: Path) -> None:
    workflow = tmp_path / "epipe.lobster"
    workflow.write_text(
        "steps:\n"
        "  - id: big\n"
        "    run: yes 0123456789abcdef | head -c 4000000\n"
        "  - id: ignores\n"
        "    stdin: $big.stdout\n"
        "    run: exit 0\n"
        "  - id: closes\n"
        "    stdin: $big.stdout\n"
        "    run: exec 0<&-; echo closed\n"
        "  - id: reads_a_little\n"
        "    stdin: $big.stdout\n"
        "    run: head -c 5\n"
    )
    result = run_cli(tmp_path / "state", "run", "--mode", "tool", str(workflow), cwd=tmp_path)
    envelope = assert_envelope(result, "epipe")
    assert envelope["ok"] and envelope["output"] == ["01234"], envelope
    pipeline = (
        "exec --json --shell \"yes '\\\"0123456789\\\",' | head -n 200000 | sed '1s/^/[/; $s/,$/]/'\""
        " | exec --stdin json --shell 'exit 0' | exec --json --shell 'echo [7]'"
    )
    result = run_cli(tmp_path / "state", "run", "--mode", "tool", pipeline, cwd=tmp_path)
    envelope = assert_envelope(result, "epipe pipeline")
    assert envelope["ok"] and envelope["output"] == [7], json.dumps(envelope)[:500]
