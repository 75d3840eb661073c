"""Helpers of the fault suite: scale, seeds, tallies, the real CLI, state-tree checks.

``LOBSTER_FAULT_SCALE`` (default 1) multiplies every round, kill and example count, so CI runs the
suite in well under a minute while a soak run (``LOBSTER_FAULT_SCALE=20``) tries much more.
``LOBSTER_FAULT_SEED`` fixes the base seed; without it a fresh one is drawn, and a failing test
prints the seed to rerun it with. ``LOBSTER_FAULT_TALLY=<file>`` makes the tests append what they
tried (rounds, kills, inputs, doubles) as JSON lines, summed up at the end of the session.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SCALE = max(1, int(os.environ.get("LOBSTER_FAULT_SCALE", "1") or "1"))
BASE_SEED = int(os.environ.get("LOBSTER_FAULT_SEED") or random.SystemRandom().randrange(2**32))
TALLY = os.environ.get("LOBSTER_FAULT_TALLY")


def scaled(count: int) -> int:
    """``count`` rounds at scale 1, ``count * LOBSTER_FAULT_SCALE`` otherwise."""
    return count * SCALE


def tally(name: str, count: int) -> None:
    """Record ``count`` things of kind ``name`` tried (or found) for the session summary."""
    if TALLY and count:
        with open(TALLY, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"name": name, "count": count}) + "\n")


# -- the real CLI ------------------------------------------------------------------------------


@dataclass
class Cli:
    """One finished ``lobster`` invocation."""

    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)


def cli_env(state_dir: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOBSTER_", "OPENCLAW_", "CLAWD_"))}
    env["LOBSTER_STATE_DIR"] = str(state_dir)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra or {})
    return env


def cli_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "lobster_tui.cli", *args]


def run_cli(state_dir: Path, *args: str, cwd: Path, env: dict[str, str] | None = None,
            stdin: bytes = b"", timeout: float = 60) -> Cli:
    proc = subprocess.run(
        cli_argv(*args), input=stdin, capture_output=True, env=cli_env(state_dir, env), cwd=str(cwd), timeout=timeout
    )
    return Cli(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))


def start_cli(state_dir: Path, *args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        cli_argv(*args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=cli_env(state_dir, env), cwd=str(cwd),
    )


def finish(proc: subprocess.Popen[bytes], timeout: float = 60) -> Cli:
    out, err = proc.communicate(timeout=timeout)
    return Cli(proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


def assert_envelope(result: Cli, context: str = "") -> dict[str, Any]:
    """No traceback, and stdout is exactly one JSON envelope."""
    assert "Traceback" not in result.stderr, f"{context}\n{result.stderr}"
    try:
        envelope = json.loads(result.stdout)
    except ValueError:
        raise AssertionError(f"{context}: stdout is not one JSON document: {result.stdout[:500]!r} / {result.stderr[:500]!r}") from None
    assert isinstance(envelope, dict) and envelope.get("protocolVersion") == 1, f"{context}: {envelope!r}"
    assert isinstance(envelope.get("ok"), bool), f"{context}: {envelope!r}"
    if not envelope["ok"]:
        assert set(envelope) == {"protocolVersion", "ok", "error"}, f"{context}: {envelope!r}"
        assert envelope["error"]["type"] in ("parse_error", "runtime_error"), f"{context}: {envelope!r}"
    return envelope


# -- waiting and processes ---------------------------------------------------------------------


def wait_until(predicate: Callable[[], Any], timeout: float = 10.0, interval: float = 0.02, what: str = "") -> Any:
    """Poll ``predicate`` until it is truthy; fail with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")
        time.sleep(interval)


def pids_with_marker(marker: str) -> list[int]:
    """Live processes whose argv contains ``marker`` (like ``pgrep -f``, read from /proc), zombies excluded."""
    alive = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
            if marker not in argv:
                continue
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            alive.append(int(entry))
    return alive


def kill_marked(marker: str) -> None:
    """Clean-up after a failed assertion: end what this test started, by pid."""
    for pid in pids_with_marker(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# -- the state tree ----------------------------------------------------------------------------


def snapshot_tree(root: Path, skip: Path | None = None) -> dict[str, tuple[str, int, str]]:
    """Every entry under ``root`` (not following symlinks) with its kind, size and content hash."""
    found: dict[str, tuple[str, int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if skip is not None and (here == skip or skip in here.parents):
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            path = here / name
            if skip is not None and path == skip:
                continue
            info = os.lstat(path)
            if os.path.islink(path):
                found[str(path.relative_to(root))] = ("link", 0, os.readlink(path))
            elif path.is_file():
                digest = hashlib.sha256(path.read_bytes()).hexdigest() if info.st_size < 50_000_000 else str(info.st_mtime_ns)
                found[str(path.relative_to(root))] = ("file", info.st_size, digest)
            elif path.is_dir():
                found[str(path.relative_to(root))] = ("dir", 0, "")
            else:
                found[str(path.relative_to(root))] = ("other", 0, "")
    return found


def state_json_files(state_dir: Path) -> list[Path]:
    if not state_dir.exists():
        return []
    return sorted(p for p in state_dir.iterdir() if p.name.endswith(".json") and p.is_file())


def leftover_locks(state_dir: Path) -> list[str]:
    if not state_dir.exists():
        return []
    return sorted(p.name for p in state_dir.iterdir() if ".lock" in p.name)
