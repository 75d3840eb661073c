"""``workflows.list`` / ``workflows.run`` and the PR monitor workflows, with a fake ``gh`` (spec §5.19)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from lobster_tui.core.errors import LobsterRuntimeError
from lobster_tui.core.pipeline.base import CommandContext, CommandRegistry
from lobster_tui.core.pipeline.commands.builtin_workflows import workflows_list, workflows_run
from lobster_tui.core.state import StateStore

FIELDS = "number,title,url,state,isDraft,mergeable,reviewDecision,author,baseRefName,headRefName,updatedAt"
SNAPSHOT = {
    "number": 5,
    "title": "Fix",
    "url": "https://x/5",
    "state": "OPEN",
    "isDraft": False,
    "mergeable": "MERGEABLE",
    "reviewDecision": None,
    "author": {"login": "a"},
    "baseRefName": "main",
    "headRefName": "f",
    "updatedAt": "t1",
}
SUMMARY_FIELDS = [
    "number", "title", "url", "state", "isDraft", "mergeable", "reviewDecision", "updatedAt", "baseRefName", "headRefName",
]  # fmt: skip

FAKE_GH = f"""#!{sys.executable} -S
import json, os, sys
with open(os.environ["FAKE_GH_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
mode = os.environ.get("FAKE_GH_MODE", "ok")
if mode == "fail":
    sys.stderr.write("  HTTP 404: Not Found\\n")
    sys.exit(1)
with open(os.environ["FAKE_GH_PR"]) as snapshot:
    sys.stdout.write(snapshot.read() if mode == "ok" else "<html>")
"""


class Gh:
    """The fake ``gh`` on PATH: what it will print, and what it was asked."""

    def __init__(self, tmp_path: Path) -> None:
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        script = self.bin / "gh"
        script.write_text(FAKE_GH)
        script.chmod(0o755)
        self.pr_file = tmp_path / "pr.json"
        self.log = tmp_path / "gh.log"
        self.tmp_path = tmp_path
        self.state = StateStore(tmp_path / "state")
        self.show(SNAPSHOT)

    def show(self, snapshot: Any) -> None:
        self.pr_file.write_text(json.dumps(snapshot))

    def calls(self) -> list[list[str]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []

    def run(self, args: dict[str, Any], mode: str = "ok", path: str | None = None) -> list[Any]:
        env = {
            "PATH": str(self.bin) + os.pathsep + os.environ.get("PATH", "") if path is None else path,
            "FAKE_GH_LOG": str(self.log),
            "FAKE_GH_PR": str(self.pr_file),
            "FAKE_GH_MODE": mode,
        }
        ctx = CommandContext(env=env, cwd=str(self.tmp_path), mode="tool", registry=CommandRegistry(), state=self.state)
        return workflows_run.run([], {"_": [], **args}, ctx).output


@pytest.fixture
def gh(tmp_path: Path) -> Gh:
    return Gh(tmp_path)


def monitor_args(**extra: Any) -> dict[str, Any]:
    return {"name": "github.pr.monitor", "args-json": json.dumps({"repo": "o/r", "pr": 5, **extra})}


def notify_args() -> dict[str, Any]:
    return {"name": "github.pr.monitor.notify", "args-json": '{"repo":"o/r","pr":5}'}


# -- workflows.list --------------------------------------------------------------------------------


def test_list_reports_both_workflows(tmp_path: Path) -> None:
    ctx = CommandContext(env={}, cwd=str(tmp_path), mode="tool", registry=CommandRegistry(), state=StateStore(tmp_path))
    listed = workflows_list.run([1, 2], {"_": []}, ctx).output
    assert [w["name"] for w in listed] == ["github.pr.monitor", "github.pr.monitor.notify"]
    assert all(list(w) == ["name", "description", "argsSchema", "examples", "sideEffects"] for w in listed)
    monitor, notify = listed
    assert monitor["description"] == "Fetch PR state via gh, diff against last run, emit only on change."
    assert list(monitor["argsSchema"]["properties"]) == ["repo", "pr", "key", "changesOnly", "summaryOnly"]
    assert list(notify["argsSchema"]["properties"]) == ["repo", "pr", "key"]
    assert notify["examples"] == [
        {"args": {"repo": "openclaw/openclaw", "pr": 1152}, "description": 'Emit "PR updated" message only when changed.'}
    ]
    assert monitor["sideEffects"] == notify["sideEffects"] == []
    # Items are copies: editing one does not change what the next listing reports.
    monitor["argsSchema"]["required"].append("x")
    assert workflows_list.run([], {"_": []}, ctx).output[0]["argsSchema"]["required"] == ["repo", "pr"]


# -- github.pr.monitor -----------------------------------------------------------------------------


def test_first_run_reports_every_field_as_changed(gh: Gh) -> None:
    [result] = gh.run(monitor_args())
    assert gh.calls() == [["pr", "view", "5", "--repo", "o/r", "--json", FIELDS]]
    assert list(result) == ["kind", "repo", "prNumber", "key", "changed", "summary", "prSnapshot"]
    assert result["kind"] == "github.pr.monitor"
    assert (result["repo"], result["prNumber"], result["key"], result["changed"]) == ("o/r", 5, "github.pr:o/r#5", True)
    assert result["summary"]["changedFields"] == SUMMARY_FIELDS
    assert result["summary"]["changes"]["title"] == {"from": None, "to": "Fix"}
    assert result["summary"]["changes"]["reviewDecision"] == {"from": None, "to": None}
    assert result["prSnapshot"] == SNAPSHOT
    assert gh.state.read_value("github.pr:o/r#5") == SNAPSHOT


def test_unchanged_and_changed_runs(gh: Gh) -> None:
    gh.run(monitor_args())
    [same] = gh.run(monitor_args())
    assert (same["changed"], same["summary"]) == (False, {"changedFields": [], "changes": {}})
    gh.show({**SNAPSHOT, "state": "MERGED", "updatedAt": "t2"})
    [moved] = gh.run(monitor_args(summaryOnly=True))
    assert moved["changed"] is True
    assert moved["summary"] == {
        "changedFields": ["state", "updatedAt"],
        "changes": {"state": {"from": "OPEN", "to": "MERGED"}, "updatedAt": {"from": "t1", "to": "t2"}},
    }
    assert moved["pr"] == {"number": 5, "title": "Fix", "url": "https://x/5", "state": "MERGED", "updatedAt": "t2"}
    assert "prSnapshot" not in moved


def test_changes_only_suppresses_an_unchanged_pr(gh: Gh) -> None:
    gh.run(monitor_args())
    assert gh.run(monitor_args(changesOnly=True)) == [
        {"kind": "github.pr.monitor", "repo": "o/r", "prNumber": 5, "key": "github.pr:o/r#5", "changed": False, "suppressed": True}
    ]


def test_missing_fields_stay_undefined(gh: Gh) -> None:
    gh.show({key: value for key, value in SNAPSHOT.items() if key != "mergeable"})
    [first] = gh.run(monitor_args())
    # undefined "to" is omitted, as JSON.stringify would; the field still counts as changed.
    assert first["summary"]["changes"]["mergeable"] == {"from": None}
    assert "mergeable" in first["summary"]["changedFields"]
    [second] = gh.run(monitor_args())
    assert second["changed"] is False


def test_custom_key_positional_name_and_corrupt_snapshot(gh: Gh) -> None:
    gh.state.write_value("mine", SNAPSHOT)
    gh.state.key_path("mine").write_text("{broken")
    [result] = gh.run({"_": ["github.pr.monitor"], "args-json": '{"repo":"o/r","pr":"5","key":"mine"}'})
    assert (result["key"], result["prNumber"], result["changed"]) == ("mine", 5, True)
    assert gh.state.read_value("mine") == SNAPSHOT


# -- github.pr.monitor.notify ----------------------------------------------------------------------


def test_notify_messages(gh: Gh) -> None:
    [first] = gh.run(notify_args())
    assert first["message"] == f"PR updated: o/r#5: Fix ({', '.join(SUMMARY_FIELDS)}). https://x/5"
    assert gh.run(notify_args()) == [{"kind": "github.pr.monitor.notify", "suppressed": True}]
    gh.show({**SNAPSHOT, "title": "Fix2"})
    [changed] = gh.run(notify_args())
    assert changed == {
        "kind": "github.pr.monitor.notify",
        "changed": True,
        "repo": "o/r",
        "prNumber": 5,
        "message": "PR updated: o/r#5: Fix2 (title). https://x/5",
        "pr": {"number": 5, "title": "Fix2", "url": "https://x/5", "state": "OPEN", "updatedAt": "t1"},
        "summary": {"changedFields": ["title"], "changes": {"title": {"from": "Fix", "to": "Fix2"}}},
    }


def test_notify_message_without_title_or_url(gh: Gh) -> None:
    gh.show({"number": 5, "title": "  spaced\n title ", "url": ""})
    [result] = gh.run(notify_args())
    assert result["message"].startswith("PR updated: o/r#5: spaced title (number, title, url, state,")
    assert result["message"].endswith(").")


# -- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "workflows.run requires --name"),
        ({"name": "nope", "args-json": "{bad"}, "Unknown workflow: nope"),
        ({"name": "github.pr.monitor", "args-json": "{bad"}, "workflows.run --args-json must be valid JSON"),
        ({"name": "github.pr.monitor"}, "github.pr.monitor requires args.repo and args.pr"),
        ({"name": "github.pr.monitor.notify", "args-json": '{"repo":"o/r","pr":0}'}, "github.pr.monitor requires args.repo and args.pr"),
        ({"name": "github.pr.monitor", "args-json": "[1]"}, "github.pr.monitor requires args.repo and args.pr"),
    ],
)
def test_run_argument_errors(gh: Gh, args: dict[str, Any], message: str) -> None:
    with pytest.raises(LobsterRuntimeError) as caught:
        gh.run(args)
    assert caught.value.message == message
    assert gh.calls() == []


@pytest.mark.parametrize(
    ("mode", "message"),
    [("fail", "gh failed (1): HTTP 404: Not Found"), ("html", "gh returned non-JSON output")],
)
def test_gh_failures_store_nothing(gh: Gh, mode: str, message: str) -> None:
    with pytest.raises(LobsterRuntimeError) as caught:
        gh.run(monitor_args(), mode=mode)
    assert caught.value.message == message
    assert not gh.state.key_path("github.pr:o/r#5").exists()


def test_gh_not_installed(gh: Gh, tmp_path: Path) -> None:
    with pytest.raises(LobsterRuntimeError) as caught:
        gh.run(monitor_args(), path=str(tmp_path / "empty"))
    assert caught.value.message == "gh not found on PATH (install GitHub CLI)"


def test_metadata() -> None:
    assert workflows_list.side_effects == workflows_run.side_effects == []
    assert workflows_list.description == "List available Lobster workflows"
    assert workflows_run.description == "Run a named Lobster workflow"
    assert workflows_run.args_schema is not None and workflows_run.args_schema["required"] == ["name"]
