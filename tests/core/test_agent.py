"""``openclaw.agent`` with a fake ``openclaw`` executable that records its argv (spec §5.18)."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from lobster_tui.core.cancel import CancelSignal
from lobster_tui.core.errors import AbortError, LobsterRuntimeError
from lobster_tui.core.pipeline.base import CommandContext, CommandRegistry
from lobster_tui.core.pipeline.commands.agent import OUTPUT_LIMIT_BYTES, openclaw_agent
from lobster_tui.core.state import StateStore

FAKE_OPENCLAW = f"""#!{sys.executable} -S
import json, os, sys, time
with open(os.environ["FAKE_ARGV_FILE"], "w") as handle:
    json.dump(sys.argv[1:], handle)
mode = os.environ.get("FAKE_MODE", "ok")
if mode == "ok":
    print(json.dumps({{"status": "ok", "reply": "done"}}))
elif mode == "fail":
    sys.stderr.write("  agent exploded\\n")
    sys.exit(2)
elif mode == "silent-fail":
    sys.exit(3)
elif mode == "text":
    print("not json")
elif mode == "array":
    print("[1]")
elif mode == "flood":
    sys.stdout.write("x" * ({OUTPUT_LIMIT_BYTES} + 1))
elif mode == "sleep":
    time.sleep(30)
"""


@pytest.fixture
def fake_bin(tmp_path: Path) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    path = folder / "openclaw"
    path.write_text(FAKE_OPENCLAW)
    path.chmod(0o755)
    return path


def run_agent(
    tmp_path: Path,
    fake_bin: Path,
    args: dict[str, Any],
    items: list[Any] | None = None,
    mode: str = "ok",
    env: dict[str, str] | None = None,
    signal: CancelSignal | None = None,
) -> list[Any]:
    base_env = {
        "PATH": f"{fake_bin.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "FAKE_ARGV_FILE": str(tmp_path / "argv.json"),
        "FAKE_MODE": mode,
    }
    ctx = CommandContext(
        env={**base_env, **(env or {})},
        cwd=str(tmp_path),
        mode="tool",
        registry=CommandRegistry(),
        state=StateStore(tmp_path / "state"),
        signal=signal or CancelSignal(),
    )
    return openclaw_agent.run(items or [], {"_": [], **args}, ctx).output


def received_argv(tmp_path: Path) -> list[str]:
    return json.loads((tmp_path / "argv.json").read_text())


def test_full_argv_and_the_json_answer(tmp_path: Path, fake_bin: Path) -> None:
    args = {
        "agent": "ops",
        "prompt": "Summarize",
        "model": "openai/gpt-5.4",
        "session-key": "incident-42",
        "sessionId": "s-1",
        "thinking": "high",
        "timeout": "30",
        "local": True,
    }
    output = run_agent(tmp_path, fake_bin, args, items=[{"a": 1}, "x"])
    assert output == [{"status": "ok", "reply": "done"}]
    assert received_argv(tmp_path) == [
        "agent", "--json", "--message", 'Summarize\n\nPipeline input (JSONL):\n{"a":1}\n"x"',
        "--agent", "ops", "--model", "openai/gpt-5.4", "--session-key", "incident-42", "--session-id", "s-1",
        "--thinking", "high", "--timeout", "30", "--local",
    ]  # fmt: skip


def test_prompt_from_positionals_and_minimal_argv(tmp_path: Path, fake_bin: Path) -> None:
    run_agent(tmp_path, fake_bin, {"_": ["review", "this"], "sessionKey": " k ", "local": "false", "model": " "})
    # --local only counts as a bare flag; blank options are left out.
    assert received_argv(tmp_path) == ["agent", "--json", "--message", "review this", "--session-key", "k"]


def test_message_alias_and_executable_from_env(tmp_path: Path, fake_bin: Path) -> None:
    renamed = fake_bin.with_name("my-openclaw")
    fake_bin.rename(renamed)
    env = {"LOBSTER_OPENCLAW_BIN": str(renamed)}
    run_agent(tmp_path, fake_bin, {"message": "hello", "agent": "a", "timeout": ""}, env=env)
    assert received_argv(tmp_path) == ["agent", "--json", "--message", "hello", "--agent", "a", "--timeout", "0"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"agent": "a"}, "openclaw.agent requires --prompt, --message, or positional text"),
        ({"prompt": "p", "agent": "  "}, "openclaw.agent requires --agent, --session-key, or --session-id"),
        ({"prompt": "p", "agent": "a", "timeout": "-1"}, "openclaw.agent --timeout must be a non-negative integer in seconds"),
        ({"prompt": "p", "agent": "a", "timeout": "1.5"}, "openclaw.agent --timeout must be a non-negative integer in seconds"),
        ({"prompt": "p", "agent": "a", "timeout": "soon"}, "openclaw.agent --timeout must be a non-negative integer in seconds"),
    ],
)
def test_argument_errors_run_nothing(tmp_path: Path, fake_bin: Path, args: dict[str, Any], message: str) -> None:
    with pytest.raises(LobsterRuntimeError) as caught:
        run_agent(tmp_path, fake_bin, args)
    assert caught.value.message == message
    assert not (tmp_path / "argv.json").exists()


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("fail", "openclaw.agent failed: agent exploded"),
        ("silent-fail", "openclaw.agent failed: exited with code 3"),
        ("text", "openclaw.agent expected JSON output from `openclaw agent --json`"),
        ("array", "openclaw.agent expected JSON output from `openclaw agent --json`"),
        ("flood", "openclaw.agent output exceeded 10485760 bytes"),
    ],
)
def test_cli_failures(tmp_path: Path, fake_bin: Path, mode: str, message: str) -> None:
    with pytest.raises(LobsterRuntimeError) as caught:
        run_agent(tmp_path, fake_bin, {"prompt": "p", "agent": "a"}, mode=mode)
    assert caught.value.message == message


def test_missing_cli(tmp_path: Path, fake_bin: Path) -> None:
    with pytest.raises(LobsterRuntimeError) as caught:
        run_agent(tmp_path, fake_bin, {"prompt": "p", "agent": "a"}, env={"LOBSTER_OPENCLAW_BIN": str(tmp_path / "nope")})
    assert caught.value.message == "openclaw.agent could not find the OpenClaw CLI"


def test_cancellation_stops_the_cli(tmp_path: Path, fake_bin: Path) -> None:
    signal = CancelSignal()
    threading.Timer(0.2, signal.abort).start()
    started = time.monotonic()
    with pytest.raises(AbortError):
        run_agent(tmp_path, fake_bin, {"prompt": "p", "agent": "a"}, mode="sleep", signal=signal)
    assert time.monotonic() - started < 5


def test_metadata() -> None:
    assert openclaw_agent.side_effects == ["calls_openclaw_agent"]
    assert openclaw_agent.description == "Run a configured OpenClaw agent turn"
    assert openclaw_agent.args_schema is not None and "sessionKey" in openclaw_agent.args_schema["properties"]
