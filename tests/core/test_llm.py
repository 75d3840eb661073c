"""``llm.invoke`` / ``llm_task.invoke`` against a local adapter on 127.0.0.1 (spec §5.17)."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from lobster_tui.core.cancel import CancelSignal
from lobster_tui.core.errors import AbortError, LobsterRuntimeError
from lobster_tui.core.jsvalues import stable_stringify
from lobster_tui.core.pipeline.base import CommandContext, CommandRegistry
from lobster_tui.core.pipeline.commands.llm import llm_invoke, llm_task_invoke
from lobster_tui.core.state import StateStore

ANSWER = {"ok": True, "result": {"runId": "r1", "model": "m1", "output": {"text": "hi", "data": {"a": 1}}}}


class AdapterServer(ThreadingHTTPServer):
    """Answers each POST with the next queued ``(status, json-able or text)``; repeats the last."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.responses: list[tuple[int, Any]] = [(200, ANSWER)]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def payloads(self) -> list[Any]:
        return [json.loads(request["body"]) for request in self.requests]


class _Handler(BaseHTTPRequestHandler):
    server: AdapterServer

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = self.rfile.read(int(self.headers.get("content-length") or 0)).decode("utf-8")
        self.server.requests.append(
            {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
        )
        responses = self.server.responses
        status, answer = responses.pop(0) if len(responses) > 1 else responses[0]
        data = (answer if isinstance(answer, str) else json.dumps(answer)).encode("utf-8")
        self.send_response(status)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""


@pytest.fixture
def server() -> Iterator[AdapterServer]:
    srv = AdapterServer()
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def state(tmp_path: Path) -> StateStore:
    return StateStore(tmp_path / "state")


def call(
    spec: Any,
    tmp_path: Path,
    state: StateStore,
    env: dict[str, str],
    items: list[Any] | None = None,
    signal: CancelSignal | None = None,
    **args: Any,
) -> list[Any]:
    ctx = CommandContext(
        env=env,
        cwd=str(tmp_path),
        mode="tool",
        registry=CommandRegistry(),
        state=state,
        signal=signal or CancelSignal(),
    )
    return spec.run(items or [], {"_": [], **args}, ctx).output


def http_env(server: AdapterServer, **extra: str) -> dict[str, str]:
    return {"LOBSTER_LLM_PROVIDER": "http", "LOBSTER_LLM_ADAPTER_URL": server.url, **extra}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- the call --------------------------------------------------------------------------------------


def test_http_provider_sends_the_payload_and_normalises_the_answer(
    tmp_path: Path, state: StateStore, server: AdapterServer
) -> None:
    env = http_env(server, LOBSTER_LLM_ADAPTER_TOKEN="tok")
    [item] = call(llm_invoke, tmp_path, state, env, items=["a", {"x": 1}, None, 5], prompt="Summarize")
    artifacts = [{"kind": "text", "text": "a"}, {"x": 1}, {"kind": "json", "data": None}, {"kind": "text", "text": "5"}]
    hashes = [sha(stable_stringify(artifact)) for artifact in artifacts]
    [request] = server.requests
    assert request["path"] == "/invoke"
    assert request["headers"]["authorization"] == "Bearer tok"
    assert request["body"] == json.dumps(
        {"prompt": "Summarize", "artifacts": artifacts, "artifactHashes": hashes, "schemaVersion": "v1"},
        separators=(",", ":"),
    )
    identity = {
        "cacheKeyVersion": 2,
        "provider": "http",
        "prompt": "Summarize",
        "model": "http-default",
        "schemaVersion": "v1",
        "artifactHashes": hashes,
        "outputSchema": None,
        "temperature": None,
        "maxOutputTokens": None,
    }
    assert list(item) == [
        "kind", "runId", "prompt", "model", "schemaVersion", "status", "cacheKey", "artifactHashes",
        "output", "usage", "metadata", "warnings", "diagnostics", "createdAt", "source", "cached", "attemptCount",
    ]  # fmt: skip
    assert item["kind"] == "llm.invoke"
    assert item["cacheKey"] == sha(stable_stringify(identity))
    assert (item["runId"], item["model"], item["prompt"], item["status"]) == ("r1", "m1", None, "completed")
    assert item["output"] == {"format": "json", "text": "hi", "data": {"a": 1}}
    assert (item["source"], item["cached"], item["attemptCount"]) == ("http", False, 1)
    assert "replayed" not in item


def test_optional_payload_fields_and_their_order(tmp_path: Path, state: StateStore, server: AdapterServer) -> None:
    call(
        llm_invoke,
        tmp_path,
        state,
        http_env(server, LOBSTER_LLM_MODEL="env-model"),
        **{
            "_": ["positional", "prompt"],
            "artifacts-json": '["extra"]',
            "metadata-json": '{"m":1}',
            "schema-version": "v9",
            "max-output-tokens": "100",
            "temperature": "0.5",
        },
    )
    payload = server.payloads()[0]
    assert list(payload) == [
        "prompt", "model", "artifacts", "artifactHashes", "metadata", "schemaVersion", "maxOutputTokens", "temperature",
    ]  # fmt: skip
    assert payload["prompt"] == "positional prompt"
    assert payload["model"] == "env-model"
    assert payload["artifacts"] == [{"kind": "text", "text": "extra"}]
    assert (payload["maxOutputTokens"], payload["temperature"]) == (100, 0.5)


def test_text_only_answers_have_text_format(tmp_path: Path, state: StateStore, server: AdapterServer) -> None:
    server.responses = [(200, {"output": {"text": "plain"}})]  # not an envelope: wrapped as the result
    [item] = call(llm_invoke, tmp_path, state, http_env(server), prompt="p")
    assert item["output"] == {"format": "text", "text": "plain", "data": None}


def test_openclaw_provider_via_llm_task(tmp_path: Path, state: StateStore, server: AdapterServer) -> None:
    server.responses = [(200, {"ok": True, "result": {"output": {"text": "t"}}})]
    env = {"OPENCLAW_URL": f"{server.url}/ignored/path", "OPENCLAW_TOKEN": "oc"}
    [item] = call(llm_task_invoke, tmp_path, state, env, prompt="p")
    [request] = server.requests
    assert request["path"] == "/tools/invoke"
    assert request["headers"]["authorization"] == "Bearer oc"
    body = json.loads(request["body"])
    assert (body["tool"], body["action"], body["args"]["prompt"]) == ("llm-task", "invoke", "p")
    assert (item["kind"], item["source"], item["cached"]) == ("llm_task.invoke", "clawd", False)


def test_openclaw_gateway_error_is_a_request_failure(tmp_path: Path, state: StateStore, server: AdapterServer) -> None:
    server.responses = [(200, {"ok": False, "error": {"message": "no llm-task"}})]
    with pytest.raises(LobsterRuntimeError) as caught:
        call(llm_task_invoke, tmp_path, state, {"OPENCLAW_URL": server.url}, prompt="p")
    assert caught.value.message == "llm_task.invoke request failed: openclaw adapter error: no llm-task"


def test_provider_auto_detection_prefers_pi(tmp_path: Path, state: StateStore, server: AdapterServer) -> None:
    env = {"LOBSTER_PI_LLM_ADAPTER_URL": f"{server.url}/custom", "OPENCLAW_URL": "http://127.0.0.1:1"}
    [item] = call(llm_invoke, tmp_path, state, env, prompt="p")
    assert server.requests[0]["path"] == "/custom"
    assert item["source"] == "pi"


# -- caching ---------------------------------------------------------------------------------------


def test_file_cache_replays_without_a_call(tmp_path: Path, state: StateStore, server: AdapterServer) -> None:
    env = http_env(server)
    [live] = call(llm_invoke, tmp_path, state, env, items=["x"], prompt="p")
    [replayed] = call(llm_invoke, tmp_path, state, env, items=["x"], prompt="p")
    assert len(server.requests) == 1
    assert replayed == {**live, "source": "cache", "cached": True, "replayed": True}
    entry = json.loads((tmp_path / ".lobster-cache" / "llm.invoke" / f"{live['cacheKey']}.json").read_text())
    assert list(entry) == ["items", "cacheKey", "storedAt"]
    assert entry["items"] == [live] and entry["cacheKey"] == live["cacheKey"]


def test_cache_key_covers_temperature_and_max_tokens(tmp_path: Path, state: StateStore, server: AdapterServer) -> None:
    env = http_env(server)
    keys = {
        call(llm_invoke, tmp_path, state, env, prompt="p", **extra)[0]["cacheKey"]
        for extra in ({}, {"temperature": "0"}, {"temperature": "1"}, {"max-output-tokens": "5"})
    }
    assert len(keys) == 4
    assert len(server.requests) == 4


def test_cache_dir_refresh_and_disable(tmp_path: Path, state: StateStore, server: AdapterServer) -> None:
    cache_dir = tmp_path / "cache"
    env = http_env(server, LOBSTER_CACHE_DIR=str(cache_dir))
    call(llm_invoke, tmp_path, state, env, prompt="p")
    assert len(list((cache_dir / "llm.invoke").iterdir())) == 1
    [refreshed] = call(llm_invoke, tmp_path, state, env, prompt="p", refresh=True)
    assert refreshed["source"] == "http"
    call(llm_invoke, tmp_path, state, {**env, "LOBSTER_LLM_FORCE_REFRESH": "yes"}, prompt="p")
    # The command's own flag reading: "false" really is false here.
    assert call(llm_invoke, tmp_path, state, env, prompt="p", refresh="false")[0]["source"] == "cache"
    assert len(server.requests) == 3
    call(llm_invoke, tmp_path, state, env, prompt="other", **{"disable-cache": True})
    call(llm_invoke, tmp_path, state, env, prompt="other", **{"disable-cache": True})
    assert len(server.requests) == 5
    assert len(list((cache_dir / "llm.invoke").iterdir())) == 1


def test_corrupt_cache_entry_is_a_miss(tmp_path: Path, state: StateStore, server: AdapterServer) -> None:
    env = http_env(server)
    [live] = call(llm_invoke, tmp_path, state, env, prompt="p")
    path = tmp_path / ".lobster-cache" / "llm.invoke" / f"{live['cacheKey']}.json"
    path.write_text('{"items": [')
    assert call(llm_invoke, tmp_path, state, env, prompt="p")[0]["source"] == "http"
    assert json.loads(path.read_text())["cacheKey"] == live["cacheKey"]


def test_run_state_replay(tmp_path: Path, state: StateStore, server: AdapterServer) -> None:
    env = http_env(server, LOBSTER_RUN_STATE_KEY="run-1")
    no_cache = {"disable-cache": True}
    [live] = call(llm_invoke, tmp_path, state, env, prompt="p", **no_cache)
    record = state.read_value("run-1")
    assert list(record) == ["type", "version", "cacheKey", "items", "storedAt"]
    assert (record["type"], record["version"], record["cacheKey"], record["items"]) == (
        "llm.invoke", 1, live["cacheKey"], [live],
    )  # fmt: skip
    [replayed] = call(llm_invoke, tmp_path, state, env, prompt="p", **no_cache)
    assert replayed == {**live, "source": "run_state", "cached": True, "replayed": True}
    assert len(server.requests) == 1
    # A different request under the same key is not a replay, and replaces the record.
    call(llm_invoke, tmp_path, state, env, prompt="q", **no_cache)
    assert len(server.requests) == 2
    # --state-key wins over the environment; --refresh bypasses run state.
    call(llm_invoke, tmp_path, state, env, prompt="q", refresh=True, **{"state-key": "other", **no_cache})
    assert len(server.requests) == 3
    assert state.read_value("other")["cacheKey"] == state.read_value("run-1")["cacheKey"]


def test_run_state_of_another_command_is_not_replayed(tmp_path: Path, state: StateStore, server: AdapterServer) -> None:
    env = http_env(server)
    [live] = call(llm_invoke, tmp_path, state, env, prompt="p", **{"state-key": "k", "disable-cache": True})
    state.write_value("k", {**state.read_value("k"), "type": "llm_task.invoke"})
    call(llm_invoke, tmp_path, state, env, prompt="p", **{"state-key": "k", "disable-cache": True})
    assert len(server.requests) == 2


# -- output schema ---------------------------------------------------------------------------------

SCHEMA = '{"type":"object","required":["a"],"properties":{"a":{"type":"string"}}}'
BAD = {"ok": True, "result": {"output": {"data": {"b": 1}}}}
GOOD = {"ok": True, "result": {"output": {"data": {"a": "yes"}}}}


@pytest.mark.parametrize(("retries", "calls"), [(None, 2), ("0", 1), ("2", 3)])
def test_schema_failures_make_exactly_one_plus_retries_calls(
    tmp_path: Path, state: StateStore, server: AdapterServer, retries: str | None, calls: int
) -> None:
    server.responses = [(200, BAD)]
    args = {"output-schema": SCHEMA, **({"max-validation-retries": retries} if retries else {})}
    with pytest.raises(LobsterRuntimeError) as caught:
        call(llm_invoke, tmp_path, state, http_env(server), prompt="p", **args)
    assert caught.value.message == "llm.invoke output failed schema validation: / must have required property 'a'"
    payloads = server.payloads()
    assert len(payloads) == calls
    assert "retryContext" not in payloads[0]
    for attempt, payload in enumerate(payloads[1:], start=2):
        assert payload["retryContext"] == {"attempt": attempt, "validationErrors": ["/ must have required property 'a'"]}
    assert not (tmp_path / ".lobster-cache").exists()


def test_schema_retry_that_succeeds(tmp_path: Path, state: StateStore, server: AdapterServer) -> None:
    server.responses = [(200, BAD), (200, GOOD)]
    env = http_env(server, LOBSTER_LLM_VALIDATION_RETRIES="3")
    [item] = call(llm_invoke, tmp_path, state, env, prompt="p", **{"output-schema": SCHEMA})
    assert item["attemptCount"] == 2
    assert item["output"]["data"] == {"a": "yes"}
    assert server.payloads()[0]["outputSchema"] == json.loads(SCHEMA)


def test_uncompilable_schema_fails_before_any_call(tmp_path: Path, state: StateStore, server: AdapterServer) -> None:
    with pytest.raises(LobsterRuntimeError, match="^schema is invalid"):
        call(llm_invoke, tmp_path, state, http_env(server), prompt="p", **{"output-schema": '{"type":"nope"}'})
    assert server.requests == []


# -- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "answer", "message"),
    [
        (200, {"ok": False, "error": {"message": "quota"}}, "llm.invoke remote error: quota"),
        (200, {"ok": False}, "llm.invoke remote error: llm adapter returned an error"),
        (200, {"ok": True, "result": {"output": "x"}}, "llm.invoke received invalid response envelope"),
        (200, {"ok": True, "result": None}, "llm.invoke received invalid response envelope"),
        (200, {"ok": True, "result": {"output": {}, "warnings": [1]}}, "llm.invoke received invalid response envelope"),
        (200, {"ok": "true"}, "llm.invoke received invalid response envelope"),
        (200, "<html>", "llm.invoke request failed: Response was not JSON"),
        (500, "x" * 450, "llm.invoke request failed: 500 Internal Server Error: " + "x" * 400),
    ],
)
def test_adapter_errors(
    tmp_path: Path, state: StateStore, server: AdapterServer, status: int, answer: Any, message: str
) -> None:
    server.responses = [(status, answer)]
    with pytest.raises(LobsterRuntimeError) as caught:
        call(llm_invoke, tmp_path, state, http_env(server), prompt="p")
    assert caught.value.message == message
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("spec", "env", "args", "message"),
    [
        (llm_invoke, {"LOBSTER_LLM_PROVIDER": "http", "LOBSTER_LLM_ADAPTER_URL": "http://127.0.0.1:1"}, {},
         "llm.invoke requires --prompt or positional text"),
        (llm_invoke, {}, {"provider": "Nope", "prompt": "p"}, "Unsupported llm provider: nope"),
        (llm_invoke, {}, {"prompt": "p"}, "llm.invoke could not resolve a provider. Set --provider or LOBSTER_LLM_PROVIDER"),
        (llm_invoke, {}, {"provider": "http", "prompt": "p"},
         "llm.invoke requires LOBSTER_LLM_ADAPTER_URL for provider=http"),
        (llm_invoke, {}, {"provider": "pi", "prompt": "p"},
         "llm.invoke requires LOBSTER_PI_LLM_ADAPTER_URL for provider=pi"),
        (llm_task_invoke, {}, {"prompt": "p"},
         "llm_task.invoke requires OPENCLAW_URL (or CLAWD_URL) for provider=openclaw"),
        (llm_invoke, {"LOBSTER_LLM_ADAPTER_URL": "http://127.0.0.1:1"}, {"prompt": "p", "artifacts-json": "{}"},
         "llm.invoke --artifacts-json must be a JSON array"),
        (llm_invoke, {"LOBSTER_LLM_ADAPTER_URL": "http://127.0.0.1:1"}, {"prompt": "p", "metadata-json": "[1]"},
         "llm.invoke --metadata-json must be a JSON object"),
        (llm_task_invoke, {"OPENCLAW_URL": "http://127.0.0.1:1"}, {"prompt": "p", "output-schema": "nope"},
         "llm_task.invoke --output-schema must be a JSON object"),
        (llm_invoke, {"LOBSTER_LLM_ADAPTER_URL": "not a url"}, {"prompt": "p"}, "llm.invoke request failed: Invalid URL"),
    ],
)  # fmt: skip
def test_argument_and_configuration_errors(
    tmp_path: Path, state: StateStore, spec: Any, env: dict[str, str], args: dict[str, Any], message: str
) -> None:
    with pytest.raises(LobsterRuntimeError) as caught:
        call(spec, tmp_path, state, env, **args)
    assert caught.value.message == message


def test_unreachable_adapter_is_a_request_failure(tmp_path: Path, state: StateStore) -> None:
    closed = AdapterServer()
    url = closed.url
    closed.server_close()
    with pytest.raises(LobsterRuntimeError, match=r"^llm\.invoke request failed: fetch failed"):
        call(llm_invoke, tmp_path, state, {"LOBSTER_LLM_ADAPTER_URL": url}, prompt="p")


def test_a_cancelled_run_does_not_even_replay(tmp_path: Path, state: StateStore, server: AdapterServer) -> None:
    env = http_env(server)
    call(llm_invoke, tmp_path, state, env, prompt="p")
    signal = CancelSignal()
    signal.abort()
    with pytest.raises(AbortError):
        call(llm_invoke, tmp_path, state, env, prompt="p", signal=signal)


def test_metadata() -> None:
    assert llm_invoke.side_effects == llm_task_invoke.side_effects == ["calls_llm"]
    assert llm_invoke.description == "Call a configured LLM adapter with typed payloads and caching"
    assert llm_task_invoke.description == "Backward-compatible alias for llm.invoke using the OpenClaw adapter"
    assert llm_invoke.args_schema is not None and llm_invoke.args_schema["required"] == []
