"""``lobster-tui --serve``: the app in a browser through textual-serve, on loopback."""

from __future__ import annotations

import importlib.util
import io
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from lobster_tui.tui import serve as serve_module
from tests.tui.helpers import REPO


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.skipif(importlib.util.find_spec("textual_serve") is None, reason="textual-serve is not installed")
def test_serve_answers_with_the_apps_page_on_loopback(tmp_path: Path) -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOBSTER_")}
    env["PYTHONPATH"] = f"{REPO}{os.pathsep}{env.get('PYTHONPATH', '')}"
    server = subprocess.Popen(
        [sys.executable, "-m", "lobster_tui.tui", "--serve", "--host", "127.0.0.1", "--port", str(port),
         "--state-dir", str(tmp_path / "state"), "--no-watch"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        page = ""
        while time.monotonic() < deadline:
            if server.poll() is not None:
                _, err = server.communicate()
                pytest.fail(f"the server exited early ({server.returncode}): {err.decode()[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as response:
                    assert response.status == 200
                    page = response.read().decode("utf-8")
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.1)
        assert page, "no page within 30 s"
        # textual-serve's page for *our* app: its title, and the terminal client that connects back.
        assert "lobster-tui" in page
        assert "textual.js" in page
        assert f"ws://127.0.0.1:{port}/ws" in page
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
    assert server.returncode is not None


def test_serve_without_textual_serve_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "textual_serve.server", None)  # import fails
    err = io.StringIO()
    assert serve_module.serve("127.0.0.1", 8000, [], stderr=err) == 1
    assert "needs textual-serve" in err.getvalue() and "pip install 'lobster-tui[serve]'" in err.getvalue()


def test_the_served_command_forwards_the_options_quoted() -> None:
    from lobster_tui.tui.__main__ import _forwarded, build_parser

    args = build_parser().parse_args(
        ["--serve", "--port", "9", "--state-dir", "/tmp/a b", "--approver", "alice", "--config", "c.toml", "--no-watch"]
    )
    forward = _forwarded(args)
    assert forward == ["--state-dir", "/tmp/a b", "--approver", "alice", "--config", "c.toml", "--no-watch"]
    command = serve_module.app_command(forward)
    assert command.endswith("-m lobster_tui.tui --state-dir '/tmp/a b' --approver alice --config c.toml --no-watch")
    assert "--serve" not in command
