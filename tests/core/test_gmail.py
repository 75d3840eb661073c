"""Gmail helpers with a fake ``gog`` named by ``GOG_BIN`` (spec §5.20)."""

from __future__ import annotations

import json
import shutil
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from lobster_tui.core.errors import LobsterRuntimeError
from lobster_tui.core.pipeline.base import CommandContext, CommandRegistry, CommandResult, CommandSpec
from lobster_tui.core.pipeline.commands.gmail import TRIAGE_OUTPUT_SCHEMA, email_triage, gog_gmail_search, gog_gmail_send
from lobster_tui.core.pipeline.commands.llm import llm_invoke
from lobster_tui.core.state import StateStore

FAKE_GOG = f"""#!{sys.executable} -S
import json, os, sys
with open(os.environ["FAKE_GOG_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
mode = os.environ.get("FAKE_GOG_MODE", "ok")
if mode == "fail":
    sys.stderr.write("quota exceeded\\n")
    sys.exit(2)
with open(os.environ["FAKE_GOG_OUT"]) as out:
    sys.stdout.write(out.read())
"""


class Gog:
    """The fake ``gog``: what it prints, how it exits, what it was asked."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.bin = tmp_path / "fake-gog"
        self.bin.write_text(FAKE_GOG)
        self.bin.chmod(0o755)
        self.out = tmp_path / "gog-out.json"
        self.log = tmp_path / "gog.log"
        self.registry = CommandRegistry()
        self.print("[]")

    def print(self, text: str) -> None:
        self.out.write_text(text)

    def calls(self) -> list[list[str]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []

    def ctx(self, mode: str = "ok", **env: str) -> CommandContext:
        return CommandContext(
            env={
                "GOG_BIN": str(self.bin),
                "FAKE_GOG_LOG": str(self.log),
                "FAKE_GOG_OUT": str(self.out),
                "FAKE_GOG_MODE": mode,
                **env,
            },
            cwd=str(self.tmp_path),
            mode="tool",
            registry=self.registry,
            state=StateStore(self.tmp_path / "state"),
        )

    def run(self, spec: CommandSpec, items: list[Any] | None = None, mode: str = "ok", **args: Any) -> list[Any]:
        return spec.run(items or [], {"_": [], **args}, self.ctx(mode)).output


@pytest.fixture
def gog(tmp_path: Path) -> Gog:
    return Gog(tmp_path)


# -- gog.gmail.search ------------------------------------------------------------------------------


def test_search_argv_defaults_and_aliases(gog: Gog) -> None:
    gog.run(gog_gmail_search)
    gog.run(gog_gmail_search, query="from:boss", limit="5")
    gog.run(gog_gmail_search, max="abc")
    assert gog.calls() == [
        ["gmail", "search", "newer_than:1d", "--json", "--max", "20"],
        ["gmail", "search", "from:boss", "--json", "--max", "5"],
        ["gmail", "search", "newer_than:1d", "--json", "--max", "NaN"],
    ]


@pytest.mark.parametrize(
    ("printed", "items"),
    [
        ('[{"id":"a"},{"id":"b"}]', [{"id": "a"}, {"id": "b"}]),
        ('{"nextPageToken":"n","threads":[{"id":"t"}]}', [{"id": "t"}]),
        ('[{"threads":[{"id":"1"},{"id":"2"}]},{"id":"3"}]', [{"id": "1"}, {"id": "2"}, {"id": "3"}]),
        ('{"id":"solo"}', [{"id": "solo"}]),
    ],
)
def test_search_flattens_thread_pages(gog: Gog, printed: str, items: list[Any]) -> None:
    gog.print(printed)
    assert gog.run(gog_gmail_search) == items


def test_search_failures(gog: Gog, tmp_path: Path) -> None:
    with pytest.raises(LobsterRuntimeError) as caught:
        gog.run(gog_gmail_search, mode="fail")
    assert caught.value.message == "gog.gmail.search failed (2): quota exceeded\n"
    gog.print("not json")
    with pytest.raises(LobsterRuntimeError) as caught:
        gog.run(gog_gmail_search)
    assert caught.value.message == "gog.gmail.search expected JSON output"
    gog.bin = tmp_path / "missing-gog"
    with pytest.raises(LobsterRuntimeError) as caught:
        gog.run(gog_gmail_search)
    assert caught.value.message == "gog not found on PATH (install: https://github.com/steipete/gogcli)"


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node for a .js GOG_BIN")
def test_a_javascript_gog_bin_runs_with_node(gog: Gog, tmp_path: Path) -> None:
    script = tmp_path / "gog.mjs"  # not executable: it is handed to node
    script.write_text('console.log(JSON.stringify([{argv: process.argv.slice(2)}]))\n')
    gog.bin = script
    assert gog.run(gog_gmail_search, query="q") == [{"argv": ["gmail", "search", "q", "--json", "--max", "20"]}]


# -- gog.gmail.send --------------------------------------------------------------------------------


def test_send_one_message_per_draft(gog: Gog) -> None:
    gog.print('{"id":"sent-1"}')
    drafts = [{"to": " a@x.io ", "subject": "Hi", "body": "Body\n"}, {"to": "b@x.io", "subject": "", "extra": 1}]
    marks: list[str] = []
    ctx = gog.ctx()
    ctx.on_non_retryable_side_effect = lambda: marks.append("sent")  # type: ignore[attr-defined]
    assert gog_gmail_send.run(drafts, {"_": []}, ctx).output == [{"id": "sent-1"}, {"id": "sent-1"}]
    assert gog.calls() == [
        ["gmail", "send", "--to", "a@x.io", "--subject", "Hi", "--body", "Body", "--json"],
        ["gmail", "send", "--to", "b@x.io", "--json"],
    ]
    assert marks == ["sent", "sent"]


@pytest.mark.parametrize(("printed", "result"), [("", {"ok": True}), ("queued", {"ok": True, "raw": "queued"})])
def test_send_tolerates_non_json_answers(gog: Gog, printed: str, result: dict[str, Any]) -> None:
    gog.print(printed)
    assert gog.run(gog_gmail_send, items=[{"to": "a@x.io"}]) == [result]


def test_send_dry_run_sends_nothing(gog: Gog) -> None:
    output = gog.run(gog_gmail_send, items=[{"to": "a@x.io", "subject": " S ", "body": 5}], **{"dry-run": True})
    assert output == [{"ok": True, "dryRun": True, "to": "a@x.io", "subject": "S", "body": "5"}]
    assert gog.calls() == []


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (["a@x.io"], "gog.gmail.send expects draft objects"),
        ([None], "gog.gmail.send expects draft objects"),
        ([{"subject": "no recipient"}], "gog.gmail.send draft missing to"),
        ([[1]], "gog.gmail.send draft missing to"),
    ],
)
def test_send_rejects_bad_drafts(gog: Gog, items: list[Any], message: str) -> None:
    with pytest.raises(LobsterRuntimeError) as caught:
        gog.run(gog_gmail_send, items=items)
    assert caught.value.message == message
    assert gog.calls() == []


def test_send_failure_stops_the_rest(gog: Gog) -> None:
    with pytest.raises(LobsterRuntimeError) as caught:
        gog.run(gog_gmail_send, items=[{"to": "a@x.io"}, {"to": "b@x.io"}], mode="fail")
    assert caught.value.message == "gog.gmail.send failed (2): quota exceeded\n"
    assert len(gog.calls()) == 1


# -- email.triage ----------------------------------------------------------------------------------

MESSAGES = [
    {"id": "1", "from": "Boss <boss@corp.com>", "subject": "URGENT: numbers", "labels": ["UNREAD"]},
    {"id": "2", "from": "Ann <ann@corp.com>", "subject": "Lunch?", "labels": ["unread", "INBOX"], "threadId": "t2"},
    {"id": "3", "from": "no-reply@shop.com", "subject": "Receipt", "labels": ["UNREAD"]},
    {"messageId": "4", "sender": "bob@corp.com", "subject": "Notes", "bodyPreview": "fyi", "internalDate": 17},
]


def test_deterministic_triage(gog: Gog) -> None:
    [report] = gog.run(email_triage, items=MESSAGES)
    assert report["mode"] == "deterministic"
    assert report["summary"] == "1 need replies, 1 need action, 2 FYI"
    assert report["buckets"] == {"needsReply": ["2"], "needsAction": ["1"], "fyi": ["3", "4"]}
    assert list(report) == ["summary", "buckets", "emails", "mode"]
    assert report["emails"][3] == {
        "id": "4", "threadId": "4", "from": "bob@corp.com", "subject": "Notes", "date": "17", "snippet": "fyi", "labels": [],
    }  # fmt: skip
    assert report["emails"][1]["threadId"] == "t2"


def test_triage_limit_and_drafts_without_an_llm(gog: Gog) -> None:
    [report] = gog.run(email_triage, items=MESSAGES, limit="2")
    assert [email["id"] for email in report["emails"]] == ["1", "2"]
    [one] = gog.run(email_triage, items=MESSAGES, limit="0")
    assert len(one["emails"]) == 1
    # --llm without any configured provider falls back to rules, which draft nothing.
    assert gog.run(email_triage, items=MESSAGES, llm=True, emit="drafts") == []


def fake_llm(answer: Any, seen: list[tuple[list[Any], dict[str, Any]]]) -> CommandSpec:
    def run(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
        seen.append((items, args))
        return CommandResult(output=[{"kind": "llm.invoke", "output": {"format": "json", "text": None, "data": answer}}])

    return CommandSpec(name="llm.invoke", run=run)


DECISIONS = {
    "decisions": [
        {"id": "1", "category": "needs_action", "rationale": "deadline"},
        {"id": "2", "category": "needs_reply", "reply": {"body": "Sure, noon works."}},
        {"id": "3", "category": "needs_reply", "reply": {"subject": "Re: Receipt", "body": "Thanks"}},
        {"id": "4", "category": "something else"},
        {"id": "", "category": "fyi"},
    ]
}


def test_llm_triage_report_and_drafts(gog: Gog) -> None:
    seen: list[tuple[list[Any], dict[str, Any]]] = []
    gog.registry.add(fake_llm(DECISIONS, seen))
    ctx_env = {"LOBSTER_LLM_PROVIDER": "http", "LOBSTER_RUN_STATE_KEY": "triage-run"}
    args = {"_": [], "llm": True, "model": " m1 ", "temperature": "0.2"}
    [report] = email_triage.run(MESSAGES, args, gog.ctx(**ctx_env)).output
    assert report["mode"] == "llm"
    assert report["summary"] == "2 need replies, 1 need action, 1 FYI"
    assert report["buckets"] == {"needsReply": ["2", "3"], "needsAction": ["1"], "fyi": ["4"]}
    # The no-reply sender gets no draft even though the model wrote one.
    assert report["drafts"] == [{"emailId": "2", "to": "ann@corp.com", "subject": "Re: Lunch?", "body": "Sure, noon works."}]
    assert report["decisions"][0] == {"id": "1", "category": "needs_action", "rationale": "deadline"}
    assert report["decisions"][2]["reply"] == {"subject": "Re: Receipt", "body": "Thanks"}
    assert len(report["decisions"]) == 4

    [(items, llm_args)] = seen
    assert items == report["emails"]
    assert llm_args["model"] == "m1"
    assert llm_args["temperature"] == "0.2"
    assert llm_args["state-key"] == "triage-run"
    assert llm_args["schema-version"] == "email_triage.v1"
    assert json.loads(llm_args["output-schema"]) == TRIAGE_OUTPUT_SCHEMA
    assert llm_args["prompt"].startswith("You are an email triage assistant.\n")
    assert '"subject": "Lunch?"' in llm_args["prompt"]

    drafts = email_triage.run(MESSAGES, {**args, "emit": "drafts"}, gog.ctx(**ctx_env)).output
    assert drafts == [{"to": "ann@corp.com", "subject": "Re: Lunch?", "body": "Sure, noon works.", "emailId": "2"}]


def test_llm_triage_needs_an_llm_command(gog: Gog) -> None:
    with pytest.raises(LobsterRuntimeError) as caught:
        email_triage.run(MESSAGES, {"_": [], "llm": True}, gog.ctx(OPENCLAW_URL="http://127.0.0.1:1"))
    assert caught.value.message == "email.triage requires llm.invoke to be registered"


class _Adapter(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self.rfile.read(int(self.headers.get("content-length") or 0))
        # llm.invoke validates the answer against the triage schema, so only valid categories here.
        decisions = [d for d in DECISIONS["decisions"] if d["category"] in ("needs_reply", "needs_action", "fyi")]
        data = json.dumps({"ok": True, "result": {"output": {"data": {"decisions": decisions}}}}).encode("utf-8")
        self.send_response(200)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""


@pytest.fixture
def adapter_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Adapter)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_llm_triage_through_the_real_llm_invoke(gog: Gog, adapter_url: str) -> None:
    gog.registry.add(llm_invoke)
    [report] = email_triage.run(MESSAGES, {"_": [], "llm": True}, gog.ctx(LOBSTER_LLM_ADAPTER_URL=adapter_url)).output
    assert report["buckets"]["needsReply"] == ["2", "3"]
    assert [draft["to"] for draft in report["drafts"]] == ["ann@corp.com"]


def test_metadata() -> None:
    assert gog_gmail_search.side_effects == ["reads_email"]
    assert gog_gmail_send.side_effects == ["sends_email"]
    assert email_triage.side_effects == []
    assert gog_gmail_search.description == "Fetch Gmail threads via gog (JSON)"
    assert gog_gmail_send.description == "Send Gmail messages via gog"
    assert email_triage.description == "Email triage (deterministic by default, optionally LLM-assisted via llm.invoke)"
