"""The sandbox of the hostile-input tests: an in-process CLI, canaries outside the state directory,
and an audit hook that sees every file the runtime touches.

Layout under the test's ``tmp_path``: ``state/`` (the state directory), ``work/`` (the cwd, with
workflow files), ``outside/`` (canaries: an attractive pipeline resume state whose resume would
write ``outside/PWNED``, an approval index and a user-key file, all outside the state directory).
A run may read and write only under ``state/`` (and read the workflow files it was given); any
audited file event under ``outside/`` is a violation, as is opening a symlink without O_NOFOLLOW.
"""

from __future__ import annotations

import io
import json
import os
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lobster_tui.cli import run_cli
from tests.fault.faultlib import Cli, snapshot_tree

_WATCHED = {
    "open", "os.remove", "os.rename", "os.mkdir", "os.rmdir", "shutil.rmtree", "os.chmod", "os.utime",
    "os.listdir", "os.scandir", "os.symlink", "os.link", "os.truncate", "os.chown",
}
_ACTIVE: list[Sandbox] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _ACTIVE or event not in _WATCHED:
        return
    sandbox = _ACTIVE[-1]
    for position, arg in enumerate(args[:2]):
        if not isinstance(arg, (str, bytes, os.PathLike)):
            continue
        try:
            text = os.fsdecode(arg)
        except (TypeError, ValueError):
            continue
        if "\0" in text:
            continue
        path = os.path.normpath(os.path.join(os.getcwd(), text))
        if path == sandbox.outside_str or path.startswith(sandbox.outside_str + os.sep):
            # A workflow state names its workflow file by design (R-STATE-20 filePath): reading it
            # is allowed; running it would leave outside/PWNED behind.
            if not (event == "open" and path.endswith(".lobster")):
                sandbox.violations.append(f"{event} {path}")
        elif path.startswith(sandbox.state_str + os.sep) and not os.path.realpath(os.path.dirname(path)).startswith(
                os.path.realpath(sandbox.state_str)):
            sandbox.violations.append(f"{event} through a symlinked folder out of the directory: {path}")
        elif event == "open" and position == 0 and len(args) > 2 and isinstance(args[2], int):
            if path.startswith(sandbox.state_str + os.sep) and os.path.islink(path) and not args[2] & getattr(os, "O_NOFOLLOW", 0):
                target = os.path.realpath(path)
                if not target.startswith(sandbox.state_str + os.sep):
                    sandbox.violations.append(f"open followed a symlink out of the directory: {path} -> {target}")


sys.addaudithook(_audit)


CANARY_STATE = {
    "pipeline": [{"name": "exec", "args": {"_": [], "shell": "echo pwned > {pwned}"}, "raw": "exec --shell 'echo pwned'"}],
    "resumeAtIndex": 0,
    "items": [],
    "haltType": "approval_request",
    "prompt": "CANARY-PROMPT",
}


@dataclass
class Sandbox:
    root: Path
    state: Path
    work: Path
    outside: Path
    violations: list[str] = field(default_factory=list)
    calls: int = 0

    @property
    def outside_str(self) -> str:
        return str(self.outside)

    @property
    def state_str(self) -> str:
        return str(self.state)

    @property
    def pwned(self) -> Path:
        return self.outside / "PWNED"

    def __enter__(self) -> Sandbox:
        self.before = snapshot_tree(self.outside)
        _ACTIVE.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _ACTIVE.remove(self)

    def assert_untouched(self) -> None:
        assert self.violations == [], self.violations[:20]
        assert not self.pwned.exists(), "a canary state outside the directory was executed"
        assert snapshot_tree(self.outside) == self.before

    def cli(self, *argv: str) -> Cli:
        """``lobster <argv>`` in this process, with streams captured and signal handlers restored."""
        saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)}
        out, err = io.StringIO(), io.StringIO()
        try:
            code = run_cli(list(argv), out, err, io.StringIO(""))
        finally:
            for sig, handler in saved.items():
                signal.signal(sig, handler)
        self.calls += 1
        return Cli(code, out.getvalue(), err.getvalue())


def make_sandbox(tmp_path: Path, monkeypatch: Any, *, echo_shell: bool = False) -> Sandbox:
    """Directories, canaries and a hermetic environment: no programs on PATH and, for fuzzed
    input (``echo_shell``), a shell that only echoes the line instead of running it."""
    state, work, outside, empty = tmp_path / "state", tmp_path / "work", tmp_path / "outside", tmp_path / "empty-bin"
    for folder in (work, outside, empty):
        folder.mkdir()
    canary = dict(CANARY_STATE)
    canary["pipeline"] = [dict(canary["pipeline"][0], args={"_": [], "shell": f"echo pwned > {outside / 'PWNED'}"})]
    (outside / "canary.json").write_text(json.dumps(canary))
    (outside / "pipeline_resume_canary.json").write_text(json.dumps(canary))
    (outside / "approval_cafef00d.json").write_text(json.dumps({"stateKey": "../outside/pipeline_resume_canary"}))
    (outside / "mykey.json").write_text('{"secret": true}\n')
    (outside / "canary.lobster").write_text(f"steps:\n  - id: s\n    run: echo pwned > {outside / 'PWNED'}\n")
    for name in list(os.environ):
        if name.startswith(("LOBSTER_", "OPENCLAW_", "CLAWD_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("LOBSTER_STATE_DIR", str(state))
    if echo_shell:
        monkeypatch.setenv("LOBSTER_SHELL", "/bin/echo")  # fuzzed shell text is printed, never run
    monkeypatch.setenv("PATH", str(empty))  # fuzzed argv commands find no program
    monkeypatch.setenv("HOME", str(work))
    monkeypatch.chdir(work)
    return Sandbox(tmp_path, state, work, outside)


def check_envelope(result: Cli, context: Any) -> dict[str, Any]:
    """One JSON envelope on stdout, no traceback, and no bug hidden behind the CLI's last guard."""
    assert "Traceback" not in result.stderr, (context, result.stderr[-2000:])
    try:
        envelope = json.loads(result.stdout)
    except ValueError:
        raise AssertionError((context, "stdout is not one JSON document", result.stdout[:500], result.stderr[:500])) from None
    assert isinstance(envelope, dict) and envelope.get("protocolVersion") == 1, (context, envelope)
    if envelope.get("ok") is False:
        assert set(envelope) == {"protocolVersion", "ok", "error"}, (context, envelope)
        assert envelope["error"]["type"] in ("parse_error", "runtime_error"), (context, envelope)
        assert not envelope["error"]["message"].startswith("internal error"), (context, envelope)
        assert result.code == (2 if envelope["error"]["type"] == "parse_error" else 1), (context, result.code)
    else:
        assert envelope.get("ok") is True and envelope.get("status") in ("ok", "needs_approval", "needs_input", "cancelled"), (context, envelope)
    return envelope


def check_human(result: Cli, context: Any) -> None:
    """Human-mode commands: no traceback and no internal error, whatever they print."""
    assert "Traceback" not in result.stderr, (context, result.stderr[-2000:])
    assert "internal error" not in result.stderr, (context, result.stderr[-2000:])
