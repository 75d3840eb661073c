"""``openclaw.invoke`` / ``clawd.invoke`` against a recording HTTP server on 127.0.0.1 (spec §5.16)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from lobster_tui.core.cancel import CancelSignal
from lobster_tui.core.errors import AbortError, LobsterRuntimeError
from lobster_tui.core.pipeline.base import CommandContext, CommandRegistry
from lobster_tui.core.pipeline.commands import invoke
from lobster_tui.core.pipeline.commands.invoke import HttpResponse, InvalidUrlError, clawd_invoke, openclaw_invoke, parse_url
from lobster_tui.core.state import StateStore

NON_LOCAL_REFUSAL = (
    "openclaw.invoke refuses to send OPENCLAW_TOKEN/CLAWD_TOKEN to non-local --url; "
    "pass --token explicitly for remote endpoints"
)


class RecordingServer(ThreadingHTTPServer):
    """Answers every POST with the next queued ``(status, body)`` and records what it received."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.responses: list[tuple[int, str]] = []
        self.release = threading.Event()
        self.block = False
        self.redirect_to: str | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-answer (the cancellation test) is expected, not noise."""


class _Handler(BaseHTTPRequestHandler):
    server: RecordingServer

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length).decode("utf-8")
        self.server.requests.append(
            {"method": self.command, "path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
        )
        if self.server.redirect_to is not None:
            self.send_response(302)
            self.send_header("location", self.server.redirect_to)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        if self.server.block:
            self.server.release.wait(5)
        status, text = self.server.responses.pop(0) if self.server.responses else (200, '{"ok":true,"result":null}')
        data = text.encode("utf-8")
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST  # noqa: N815 - a redirected POST arrives as a GET

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""


def start_server() -> RecordingServer:
    srv = RecordingServer()
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
    return srv


def stop_server(srv: RecordingServer) -> None:
    srv.release.set()
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    srv = start_server()
    yield srv
    stop_server(srv)


def make_ctx(tmp_path: Path, env: dict[str, str], signal: CancelSignal | None = None) -> CommandContext:
    return CommandContext(
        env=env,
        cwd=str(tmp_path),
        mode="tool",
        registry=CommandRegistry(),
        state=StateStore(tmp_path / "state"),
        signal=signal or CancelSignal(),
    )


def run(spec: Any, tmp_path: Path, env: dict[str, str], items: list[Any] | None = None, **args: Any) -> list[Any]:
    return spec.run(items or [], {"_": [], **args}, make_ctx(tmp_path, env)).output


# -- C-38: credential locality ---------------------------------------------------------------------


def test_ambient_token_is_never_sent_to_a_non_local_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    monkeypatch.setattr(invoke, "post_json", lambda *a, **k: calls.append(a))
    env = {"OPENCLAW_URL": "http://example.invalid", "OPENCLAW_TOKEN": "x"}
    with pytest.raises(LobsterRuntimeError) as caught:
        run(openclaw_invoke, tmp_path, env, tool="t", action="a")
    assert caught.value.message == NON_LOCAL_REFUSAL
    assert calls == []


def test_a_non_canonical_loopback_spelling_is_not_local(tmp_path: Path, server: RecordingServer) -> None:
    # IPv4-mapped IPv6 is not one of the four local names, so the ambient token stays home.
    env = {"OPENCLAW_URL": f"http://[::ffff:127.0.0.1]:{server.server_address[1]}", "OPENCLAW_TOKEN": "x"}
    with pytest.raises(LobsterRuntimeError, match="refuses to send"):
        run(openclaw_invoke, tmp_path, env, tool="t", action="a")
    assert server.requests == []


def test_non_http_scheme_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(LobsterRuntimeError) as caught:
        run(openclaw_invoke, tmp_path, {"OPENCLAW_URL": "ftp://x", "OPENCLAW_TOKEN": "x"}, tool="t", action="a")
    assert caught.value.message == "openclaw.invoke requires an http(s) --url"


def test_local_server_receives_the_exact_request(tmp_path: Path, server: RecordingServer) -> None:
    server.responses.append((200, '{"ok":true,"result":[{"r":1}]}'))
    output = run(openclaw_invoke, tmp_path, {"OPENCLAW_URL": server.url, "OPENCLAW_TOKEN": "x"}, tool="t", action="a")
    assert output == [{"r": 1}]
    [request] = server.requests
    assert request["path"] == "/tools/invoke"
    assert request["body"] == '{"tool":"t","action":"a","args":{}}'
    assert request["headers"]["authorization"] == "Bearer x"
    assert request["headers"]["content-type"] == "application/json"


def test_explicit_token_may_go_to_a_remote_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[tuple[str, str, str]] = []

    def fake_post(url: Any, body: str, *, token: str, signal: CancelSignal) -> HttpResponse:
        sent.append((url.href, body, token))
        return HttpResponse(200, "OK", '{"ok":true,"result":7}')

    monkeypatch.setattr(invoke, "post_json", fake_post)
    env = {"OPENCLAW_URL": "https://gateway.example.com/base?q=1", "OPENCLAW_TOKEN": "ambient"}
    assert run(openclaw_invoke, tmp_path, env, tool="t", action="a", token="explicit") == [7]
    # A bare --token is explicit too; its value is the string "true".
    assert run(openclaw_invoke, tmp_path, env, tool="t", action="a", token=True) == [7]
    assert sent == [
        ("https://gateway.example.com/tools/invoke", '{"tool":"t","action":"a","args":{}}', "explicit"),
        ("https://gateway.example.com/tools/invoke", '{"tool":"t","action":"a","args":{}}', "true"),
    ]


def test_no_token_means_no_authorization_header(tmp_path: Path, server: RecordingServer) -> None:
    run(openclaw_invoke, tmp_path, {"OPENCLAW_URL": server.url}, tool="t", action="a")
    assert "authorization" not in server.requests[0]["headers"]


# -- request shape ---------------------------------------------------------------------------------


def test_url_path_is_replaced_by_tools_invoke(tmp_path: Path, server: RecordingServer) -> None:
    run(openclaw_invoke, tmp_path, {}, url=f"{server.url}/base/deeper?x=1#frag", tool="t", action="a")
    assert server.requests[0]["path"] == "/tools/invoke"


def test_session_key_and_dry_run_are_forwarded(tmp_path: Path, server: RecordingServer) -> None:
    env = {"OPENCLAW_URL": server.url}
    run(openclaw_invoke, tmp_path, env, tool="t", action="a", **{"session-key": "s1", "dry-run": "false"})
    run(openclaw_invoke, tmp_path, env, tool="t", action="a", dryRun="")
    first, second = (json.loads(r["body"]) for r in server.requests)
    # "false" is a non-empty string, hence truthy (S-2); an empty value is false.
    assert first == {"tool": "t", "action": "a", "args": {}, "sessionKey": "s1", "dryRun": True}
    assert second == {"tool": "t", "action": "a", "args": {}, "dryRun": False}


def test_each_makes_one_call_per_item_in_order(tmp_path: Path, server: RecordingServer) -> None:
    server.responses += [(200, '{"ok":true,"result":[1,2]}'), (200, '{"ok":true,"result":{"n":3}}')]
    output = run(
        openclaw_invoke,
        tmp_path,
        {"OPENCLAW_URL": server.url},
        items=["a", {"b": 1}],
        tool="message",
        action="send",
        each=True,
        **{"item-key": "message", "args-json": '{"to":"x"}'},
    )
    assert output == [1, 2, {"n": 3}]
    assert [json.loads(r["body"])["args"] for r in server.requests] == [
        {"to": "x", "message": "a"},
        {"to": "x", "message": {"b": 1}},
    ]


def test_without_each_the_input_is_drained_and_one_call_made(tmp_path: Path, server: RecordingServer) -> None:
    run(openclaw_invoke, tmp_path, {"OPENCLAW_URL": server.url}, items=[1, 2, 3], tool="t", action="a")
    assert len(server.requests) == 1


# -- responses -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('{"x":1}', [{"x": 1}]),
        ("[1,2]", [1, 2]),
        ("", [None]),
        ('{"ok":true}', [None]),
        ('{"ok":true,"result":"s"}', ["s"]),
    ],
)
def test_result_shapes(tmp_path: Path, server: RecordingServer, body: str, expected: list[Any]) -> None:
    server.responses.append((200, body))
    assert run(openclaw_invoke, tmp_path, {"OPENCLAW_URL": server.url}, tool="t", action="a") == expected


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('{"ok":false,"error":{"message":"boom"}}', "openclaw.invoke tool error: boom"),
        ('{"ok":false}', "openclaw.invoke tool error: Unknown error"),
        ('{"ok":"yes","result":1}', "openclaw.invoke tool error: Unknown error"),
        ("not json", "openclaw.invoke expected JSON response"),
    ],
)
def test_error_responses(tmp_path: Path, server: RecordingServer, body: str, message: str) -> None:
    server.responses.append((200, body))
    with pytest.raises(LobsterRuntimeError) as caught:
        run(openclaw_invoke, tmp_path, {"OPENCLAW_URL": server.url}, tool="t", action="a")
    assert caught.value.message == message


def test_non_2xx_quotes_the_first_400_characters(tmp_path: Path, server: RecordingServer) -> None:
    server.responses.append((502, "é" * 10 + "x" * 500))
    with pytest.raises(LobsterRuntimeError) as caught:
        run(openclaw_invoke, tmp_path, {"OPENCLAW_URL": server.url}, tool="t", action="a")
    assert caught.value.message == "openclaw.invoke failed (502): " + "é" * 10 + "x" * 390


def test_a_failure_is_never_retried(tmp_path: Path, server: RecordingServer) -> None:
    server.responses += [(503, "busy"), (200, "[1]"), (200, "[2]")]
    with pytest.raises(LobsterRuntimeError, match=r"failed \(503\): busy"):
        run(openclaw_invoke, tmp_path, {"OPENCLAW_URL": server.url}, items=[1, 2], tool="t", action="a", each=True)
    assert len(server.requests) == 1


def test_redirects_never_carry_the_token_to_another_origin(tmp_path: Path, server: RecordingServer) -> None:
    other = start_server()
    try:
        other.responses.append((200, '{"ok":true,"result":"moved"}'))
        server.redirect_to = f"{other.url}/elsewhere"
        assert run(openclaw_invoke, tmp_path, {"OPENCLAW_URL": server.url}, tool="t", action="a", token="secret") == ["moved"]
        assert server.requests[0]["headers"]["authorization"] == "Bearer secret"
        [followed] = other.requests
        assert followed["path"] == "/elsewhere"
        assert "authorization" not in followed["headers"]
    finally:
        stop_server(other)


def test_transport_errors_surface(tmp_path: Path) -> None:
    closed = RecordingServer()
    port = closed.server_address[1]
    closed.server_close()
    with pytest.raises(LobsterRuntimeError, match="^fetch failed"):
        run(openclaw_invoke, tmp_path, {"OPENCLAW_URL": f"http://127.0.0.1:{port}"}, tool="t", action="a")


def test_cancellation_aborts_the_in_flight_request(tmp_path: Path, server: RecordingServer) -> None:
    server.block = True
    signal = CancelSignal()
    threading.Timer(0.1, signal.abort).start()
    started = time.monotonic()
    with pytest.raises(AbortError, match="aborted"):
        openclaw_invoke.run([], {"_": [], "tool": "t", "action": "a"}, make_ctx(tmp_path, {"OPENCLAW_URL": server.url}, signal))
    assert time.monotonic() - started < 2
    assert len(server.requests) == 1


# -- argument checks and naming --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "args", "message"),
    [
        ({}, {"tool": "t", "action": "a"}, "clawd.invoke requires --url or OPENCLAW_URL"),
        ({"OPENCLAW_URL": "  "}, {"tool": "t", "action": "a"}, "clawd.invoke requires --url or OPENCLAW_URL"),
        ({"OPENCLAW_URL": "http://127.0.0.1:1"}, {"tool": "t"}, "clawd.invoke requires --tool and --action"),
        (
            {"OPENCLAW_URL": "http://127.0.0.1:1"},
            {"tool": "t", "action": "a", "args-json": "{bad"},
            "clawd.invoke --args-json must be valid JSON",
        ),
        (
            {"OPENCLAW_URL": "http://127.0.0.1:1"},
            {"tool": "t", "action": "a", "args-json": "[1]", "each": True},
            "clawd.invoke --each requires --args-json to be an object",
        ),
        ({"CLAWD_URL": "ftp://h"}, {"tool": "t", "action": "a"}, "clawd.invoke requires an http(s) --url"),
        ({"CLAWD_URL": "localhost:8080"}, {"tool": "t", "action": "a"}, "Invalid URL"),
    ],
)
def test_argument_errors_name_the_invoked_command(
    tmp_path: Path, env: dict[str, str], args: dict[str, Any], message: str
) -> None:
    with pytest.raises(LobsterRuntimeError) as caught:
        run(clawd_invoke, tmp_path, env, **args)
    assert caught.value.message == message


def test_clawd_names_and_environment(tmp_path: Path, server: RecordingServer) -> None:
    server.responses.append((200, '{"ok":false,"error":{"message":"nope"}}'))
    with pytest.raises(LobsterRuntimeError) as caught:
        run(clawd_invoke, tmp_path, {"CLAWD_URL": server.url, "CLAWD_TOKEN": "c"}, tool="t", action="a")
    assert caught.value.message == "clawd.invoke tool error: nope"
    assert server.requests[0]["headers"]["authorization"] == "Bearer c"


def test_metadata() -> None:
    for spec in (openclaw_invoke, clawd_invoke):
        assert spec.side_effects == ["calls_clawd_tool"]
        assert spec.description == "Call a local OpenClaw tool endpoint"
        assert spec.args_schema is not None and spec.args_schema["required"] == ["tool", "action"]
        assert spec.examples is None
        assert spec.help().startswith(f"{spec.name} — call a local OpenClaw tool endpoint\n")


# -- URL resolution --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "host", "href"),
    [
        ("http://LOCALHOST:80/x", "localhost", "http://localhost/tools/invoke"),
        ("http://127.1:8080", "127.0.0.1", "http://127.0.0.1:8080/tools/invoke"),
        ("http://0x7f.0.0.1", "127.0.0.1", "http://127.0.0.1/tools/invoke"),
        ("http://2130706433", "127.0.0.1", "http://127.0.0.1/tools/invoke"),
        ("http://[0:0:0:0:0:0:0:1]:9", "[::1]", "http://[::1]:9/tools/invoke"),
        ("https://h.example:443/a/b?c#d", "h.example", "https://h.example/tools/invoke"),
    ],
)
def test_parse_url_canonicalises_hosts(text: str, host: str, href: str) -> None:
    url = parse_url(text, absolute_path="/tools/invoke")
    assert (url.hostname, url.href) == (host, href)


@pytest.mark.parametrize("text", ["localhost:8080", "127.0.0.1:8080", "http://", "http://a b", "http://h:99999", "http://256.0.0.1"])
def test_parse_url_rejects_what_whatwg_rejects(text: str) -> None:
    with pytest.raises(InvalidUrlError):
        parse_url(text, absolute_path="/tools/invoke")
