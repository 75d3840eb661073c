"""Permissions: the state directory is 0700 and its files 0600 (also under umask 000 and after
rewrites); ``lobster doctor`` warns about loose modes and foreign owners (simulated with chown to
uid 65534, which needs root; those cases skip otherwise)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from lobster_tui.core.doctor import state_dir_warnings
from lobster_tui.core.state import StateStore
from tests.fault.faultlib import cli_argv, cli_env

ROOT = os.geteuid() == 0


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _cli_umask0(state: Path, cwd: Path, *args: str) -> dict:
    proc = subprocess.run(cli_argv(*args), capture_output=True, text=True, env=cli_env(state), cwd=cwd, umask=0,
                          timeout=60)
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout)


def test_directory_0700_and_files_0600_even_under_umask_000(tmp_path: Path) -> None:
    state = tmp_path / "state"
    halted = _cli_umask0(state, tmp_path, "run", "--mode", "tool",
                         "exec --json --shell 'echo [1]' | state.set k | approve --prompt p")
    assert _mode(state) == 0o700
    for path in state.rglob("*"):
        if path.is_dir():
            assert _mode(path) == 0o700, path
        else:
            assert _mode(path) == 0o600, path
    # A resume rewrites (claim marker) and deletes; what remains keeps its mode.
    _cli_umask0(state, tmp_path, "resume", "--id", halted["requiresApproval"]["approvalId"], "--approve", "yes")
    for path in state.rglob("*"):
        assert _mode(path) == (0o700 if path.is_dir() else 0o600), path


def test_rewriting_keeps_the_mode(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state")
    store.write_value("k", 1)
    assert _mode(store.key_path("k")) == 0o600
    os.chmod(store.key_path("k"), 0o640)
    store.write_value("k", 2)
    assert _mode(store.key_path("k")) == 0o640 and store.read_value("k") == 2
    assert not [p for p in store.root.iterdir() if p.name.endswith(".tmp")]


def test_doctor_warns_about_loose_modes(tmp_path: Path) -> None:
    state = tmp_path / "state"
    StateStore(state).write_value("k", 1)
    assert state_dir_warnings(state) == []
    os.chmod(state, 0o777)
    assert any("world-writable" in w for w in state_dir_warnings(state))
    os.chmod(state, 0o750)
    assert any("readable by others" in w for w in state_dir_warnings(state))
    os.chmod(state, 0o700)
    os.chmod(state / "k.json", 0o666)
    assert any("world-writable" in w and "k.json" in w for w in state_dir_warnings(state))
    proc = subprocess.run(cli_argv("doctor"), capture_output=True, text=True, env=cli_env(state), cwd=tmp_path, timeout=60)
    assert proc.returncode == 0 and json.loads(proc.stdout)["ok"] is True
    assert "[WARN]" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.skipif(not ROOT, reason="chown to another uid needs root")
def test_doctor_warns_about_files_and_directories_of_another_user(tmp_path: Path) -> None:
    state = tmp_path / "state"
    store = StateStore(state)
    store.write_value("theirs", 1)
    os.chown(state / "theirs.json", 65534, 65534)
    warnings = state_dir_warnings(state)
    assert any("owned by another user" in w and "theirs.json" in w for w in warnings), warnings
    os.chown(state, 65534, 65534)
    assert any("owned by uid 65534" in w for w in state_dir_warnings(state))
    proc = subprocess.run(cli_argv("doctor"), capture_output=True, text=True, env=cli_env(state), cwd=tmp_path, timeout=60)
    assert proc.returncode == 0 and "owned by" in proc.stderr and "Traceback" not in proc.stderr
