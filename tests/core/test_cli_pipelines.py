"""Spec §14 conformance cases about inline pipelines and resume, through the real CLI."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from tests.conftest import LobsterCli, decode_token, files_in

P1 = """exec --json --shell "printf '%s' '[{\\"a\\":1}]'" | approve --prompt 'ok?' | pick a"""
ENVELOPE_KEYS = ["protocolVersion", "ok", "status", "output", "requiresApproval", "requiresInput"]


def halt(lobster: LobsterCli, pipeline: str = P1) -> dict:
    result = lobster("run", "--mode", "tool", pipeline)
    assert result.code == 0, result.stderr
    return result.json


def test_c1_tool_mode_ok_envelope_keys_and_order(lobster: LobsterCli) -> None:
    result = lobster("run", "--mode", "tool", "exec --json --shell 'echo [1,2,3]'")
    assert result.code == 0
    env = result.json
    assert list(env) == ENVELOPE_KEYS
    assert env == {"protocolVersion": 1, "ok": True, "status": "ok", "output": [1, 2, 3],
                   "requiresApproval": None, "requiresInput": None}
    assert result.stdout.endswith("}\n") and result.stdout.count("\n") == len(result.stdout.splitlines())


def test_c2_parse_error_in_both_modes(lobster: LobsterCli) -> None:
    tool = lobster("run", "--mode", "tool", "exec 'x")
    assert tool.code == 2
    assert tool.json == {"protocolVersion": 1, "ok": False, "error": {"type": "parse_error", "message": "Unclosed quote"}}
    human = lobster("run", "exec 'x")
    assert human.code == 2 and human.stderr == "Parse error: Unclosed quote\n" and human.stdout == ""


def test_c3_unknown_command_and_empty_pipeline(lobster: LobsterCli) -> None:
    unknown = lobster("run", "--mode", "tool", "foo | bar")
    assert unknown.code == 1 and unknown.json["error"] == {"type": "runtime_error", "message": "Unknown command: foo"}
    empty = lobster("run", "--mode", "tool")
    assert empty.code == 2 and empty.json["error"]["message"] == "Empty pipeline"
    stage = lobster("run", "--mode", "tool", "a || b")
    assert stage.json["error"]["message"] == "Empty command stage"


def test_c4_approval_halt_writes_state_and_index(lobster: LobsterCli, state_dir: Path) -> None:
    env = halt(lobster)
    assert env["status"] == "needs_approval" and env["output"] == [] and env["requiresInput"] is None
    request = env["requiresApproval"]
    assert list(request) == ["type", "prompt", "items", "resumeToken", "approvalId"]
    assert request["prompt"] == "ok?" and request["items"] == [{"a": 1}]
    assert re.fullmatch(r"[a-f0-9]{8}", request["approvalId"])
    token = decode_token(request["resumeToken"])
    assert list(token) == ["protocolVersion", "v", "kind", "stateKey"]
    assert token["kind"] == "pipeline-resume" and token["stateKey"].startswith("pipeline_resume_")
    names = files_in(state_dir)
    assert names == sorted([f"{token['stateKey']}.json", f"approval_{request['approvalId']}.json"])
    state = json.loads((state_dir / f"{token['stateKey']}.json").read_text())
    assert state["resumeAtIndex"] == 2 and state["items"] == [{"a": 1}] and state["haltType"] == "approval_request"
    index = json.loads((state_dir / f"approval_{request['approvalId']}.json").read_text())
    assert index["stateKey"] == token["stateKey"]
    for name in names:
        assert stat.S_IMODE(os.stat(state_dir / name).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(state_dir).st_mode) == 0o700


def test_c5_approve_by_token_cleans_up(lobster: LobsterCli, state_dir: Path) -> None:
    token = halt(lobster)["requiresApproval"]["resumeToken"]
    result = lobster("resume", "--token", token, "--approve", "yes")
    assert result.code == 0 and result.json["status"] == "ok" and result.json["output"] == [{"a": 1}]
    assert files_in(state_dir) == []


def test_c6_reject_cancels_and_cleans_up(lobster: LobsterCli, state_dir: Path) -> None:
    token = halt(lobster)["requiresApproval"]["resumeToken"]
    result = lobster("resume", "--token", token, "--approve", "no")
    assert result.json["status"] == "cancelled" and result.json["output"] == []
    assert files_in(state_dir) == []


def test_c7_approve_by_short_id_and_unknown_ids(lobster: LobsterCli, state_dir: Path) -> None:
    approval_id = halt(lobster)["requiresApproval"]["approvalId"]
    result = lobster("resume", "--id", approval_id, "--approve", "yes")
    assert result.json["output"] == [{"a": 1}] and files_in(state_dir) == []
    missing = lobster("resume", "--id", "deadbeef", "--approve", "yes")
    assert missing.code == 2
    assert missing.json["error"] == {"type": "parse_error", "message": 'Approval ID "deadbeef" not found or expired'}
    (state_dir / "approval_deadbeef.json").write_text("{not json")
    corrupt = lobster("resume", "--id", "deadbeef", "--approve", "yes")
    assert corrupt.code == 2 and "not found or expired" in corrupt.json["error"]["message"]


def test_c8_double_resume_is_refused(lobster: LobsterCli) -> None:
    request = halt(lobster)["requiresApproval"]
    assert lobster("resume", "--token", request["resumeToken"], "--approve", "yes").code == 0
    again = lobster("resume", "--token", request["resumeToken"], "--approve", "yes")
    assert again.code == 1 and again.json["error"]["message"] == "Pipeline resume state not found"
    by_id = lobster("resume", "--id", request["approvalId"], "--approve", "yes")
    assert by_id.code == 2 and "not found" in by_id.json["error"]["message"]


def test_c9_sequential_gates_leave_no_files(lobster: LobsterCli, state_dir: Path) -> None:
    pipeline = ("exec --json --shell \"printf '%s' '[{\\\"x\\\":1}]'\" | approve --prompt 'first?' | "
                "approve --prompt 'second?' | pick x")
    first = halt(lobster, pipeline)["requiresApproval"]
    assert first["prompt"] == "first?"
    second = lobster("resume", "--token", first["resumeToken"], "--approve", "yes").json
    assert second["status"] == "needs_approval" and second["requiresApproval"]["prompt"] == "second?"
    assert second["requiresApproval"]["approvalId"] != first["approvalId"]
    assert not (state_dir / f"approval_{first['approvalId']}.json").exists()
    done = lobster("resume", "--token", second["requiresApproval"]["resumeToken"], "--approve", "yes").json
    assert done["status"] == "ok" and done["output"] == [{"x": 1}]
    assert files_in(state_dir) == []


def test_c10_preview_from_stdin(lobster: LobsterCli) -> None:
    records = ("exec --json --shell \"printf '%s' '[{\\\"a\\\":1},{\\\"a\\\":2},{\\\"a\\\":3}]'\" | "
               "approve --preview-from-stdin --limit 2 --prompt 'Apply?'")
    request = halt(lobster, records)["requiresApproval"]
    assert len(request["items"]) == 3
    assert request["preview"] == json.dumps([{"a": 1}, {"a": 2}], indent=2)
    strings = halt(lobster, "exec --shell \"printf 'x\\ny\\nz'\" | approve --preview-from-stdin --limit 2")
    assert strings["requiresApproval"]["preview"] == "x\ny" and strings["requiresApproval"]["prompt"] == "Approve?"
    none = halt(lobster, "exec --shell \"printf 'x\\ny'\" | approve --preview-from-stdin --limit 0")
    assert "preview" not in none["requiresApproval"]


ASK = """exec --json --shell "printf '%s' '[{\\"a\\":1}]'" | ask --prompt 'Go?' | pick decision"""


def test_c11_ask_same_stage_resume(lobster: LobsterCli, state_dir: Path) -> None:
    env = halt(lobster, ASK)
    assert env["status"] == "needs_input"
    request = env["requiresInput"]
    assert list(request) == ["type", "prompt", "responseSchema", "resumeToken"]
    assert request["responseSchema"]["required"] == ["decision"]
    key = decode_token(request["resumeToken"])["stateKey"]
    state = json.loads((state_dir / f"{key}.json").read_text())
    assert state["resumeMode"] == "same_stage" and state["resumeAtIndex"] == 1 and state["items"] == []
    assert state["commandInput"]["pending"]["suspendedState"] == {"type": "ask"}
    assert not any(name.startswith("approval_") for name in files_in(state_dir))
    done = lobster("resume", "--token", request["resumeToken"], "--response-json", '{"decision":"approve","feedback":"x"}')
    assert done.json["status"] == "ok" and done.json["output"] == [{"decision": "approve"}]
    assert files_in(state_dir) == []


def test_c12_invalid_answer_keeps_checkpoint(lobster: LobsterCli) -> None:
    token = halt(lobster, ASK)["requiresInput"]["resumeToken"]
    bad = lobster("resume", "--token", token, "--response-json", '{"decision":"nah"}')
    assert bad.code == 2
    assert bad.json["error"]["message"] == (
        "pipeline input response failed schema validation at /decision: must be equal to one of the allowed values"
    )
    good = lobster("resume", "--token", token, "--response-json", '{"decision":"reject"}')
    assert good.json["output"] == [{"decision": "reject"}]


def test_c13_wrong_intent(lobster: LobsterCli) -> None:
    input_token = halt(lobster, ASK)["requiresInput"]["resumeToken"]
    wrong = lobster("resume", "--token", input_token, "--approve", "yes")
    assert wrong.code == 2 and wrong.json["error"]["message"] == "pipeline input resumes require response"
    approval_token = halt(lobster)["requiresApproval"]["resumeToken"]
    wrong = lobster("resume", "--token", approval_token, "--response-json", "{}")
    assert wrong.code == 2
    assert wrong.json["error"]["message"] == "approval resumes require approved=true|false, not response"


def test_c14_ask_subject_from_stdin(lobster: LobsterCli) -> None:
    schema = '{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}'
    pipeline = ("exec --json --shell \"printf '%s' '[{\\\"draft\\\":\\\"hello\\\"}]'\" | "
                f"ask --subject-from-stdin --prompt 'Review?' --schema '{schema}'")
    request = halt(lobster, pipeline)["requiresInput"]
    assert request["subject"] == {"text": '{"draft":"hello"}'}
    done = lobster("resume", "--token", request["resumeToken"], "--response-json", '{"ok":true}')
    assert done.json["status"] == "ok" and done.json["output"] == [{"ok": True}]


def test_c15_human_ask_emit_saves_nothing(lobster: LobsterCli, state_dir: Path) -> None:
    result = lobster("run", "ask --emit --prompt 'Review?' --schema '{\"type\":\"object\"}'")
    assert result.code == 0
    [item] = result.json
    assert item["type"] == "input_request" and item["prompt"] == "Review?" and item["items"] == []
    assert "commandInput" not in item
    assert files_in(state_dir) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--token", "t", "--approve", "yes", "--cancel"], "resume accepts only one of --approve, --response-json, or --cancel"),
        (["--token", "t"], "resume requires --approve yes|no, --response-json, or --cancel"),
        (["--approve", "yes"], "resume requires --token or --id"),
        (["--token", "t", "--approve", "maybe"], "resume --approve must be yes or no"),
        (["--token", "t", "--response-json", "{bad"], "resume --response-json must be valid JSON"),
        (["--token", "t", "--cancel", "perhaps"], "resume --cancel must be true or false"),
    ],
)
def test_c16_resume_argument_validation(lobster: LobsterCli, args: list[str], message: str) -> None:
    result = lobster("resume", *args)
    assert result.code == 2 and result.json["error"] == {"type": "parse_error", "message": message}


def _b64(payload: object) -> str:
    import base64

    return base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("abc", "Invalid token"),
        (_b64({"protocolVersion": 2, "v": 1}), "Unsupported protocol version"),
        (_b64({"protocolVersion": 1, "v": 2}), "Unsupported token version"),
        (_b64({"protocolVersion": 1, "v": 1, "kind": "other", "stateKey": "x"}), "Invalid token"),
        (_b64({"protocolVersion": 1, "v": 1, "kind": "pipeline-resume"}), "Invalid token"),
        (_b64({"protocolVersion": 1, "v": 1, "kind": "workflow-file"}), "Invalid workflow token"),
        (_b64("just a string"), "Invalid token"),
    ],
)
def test_c17_token_decoding(lobster: LobsterCli, token: str, message: str) -> None:
    result = lobster("resume", "--token", token, "--approve", "yes")
    assert result.code == 2 and result.json["error"] == {"type": "parse_error", "message": message}


def test_c18_missing_state(lobster: LobsterCli) -> None:
    pipeline = _b64({"protocolVersion": 1, "v": 1, "kind": "pipeline-resume", "stateKey": "pipeline_resume_nope"})
    workflow = _b64({"protocolVersion": 1, "v": 1, "kind": "workflow-file", "stateKey": "workflow_resume_nope"})
    assert lobster("resume", "--token", pipeline, "--approve", "yes").json["error"]["message"] == "Pipeline resume state not found"
    assert lobster("resume", "--token", workflow, "--approve", "yes").json["error"]["message"] == "Workflow resume state not found"
    cancel = lobster("resume", "--token", pipeline, "--cancel")
    assert cancel.code == 1 and cancel.json["error"]["message"] == "Resume state not found"
    empty = _b64({"protocolVersion": 1, "v": 1, "kind": "pipeline-resume", "stateKey": "___"})
    bad_key = lobster("resume", "--token", empty, "--approve", "yes")
    assert bad_key.code == 1 and bad_key.json["error"]["message"] == "state key is empty/invalid"


def test_cancel_removes_state_and_index(lobster: LobsterCli, state_dir: Path) -> None:
    request = halt(lobster)["requiresApproval"]
    result = lobster("resume", "--id", request["approvalId"], "--cancel")
    assert result.json["status"] == "cancelled" and files_in(state_dir) == []


def test_legacy_inline_workflow_token_is_never_executed(lobster: LobsterCli, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    wf = tmp_path / "wf.lobster"
    wf.write_text(f"steps:\n  - id: gate\n    approval: ok\n  - id: effect\n    run: touch {marker}\n")
    token = _b64({"protocolVersion": 1, "v": 1, "kind": "workflow-file", "filePath": str(wf), "resumeAtIndex": 1,
                  "steps": {"gate": {"id": "gate", "approved": True}}, "args": {}})
    result = lobster("resume", "--token", token, "--approve", "yes")
    assert result.code == 2 and result.json["error"]["message"] == "Invalid workflow token"
    assert not marker.exists()
    assert lobster("resume", "--token", token, "--cancel").json["status"] == "cancelled"


def test_c41_renderers_in_tool_mode_leave_stdout_to_the_envelope(lobster: LobsterCli) -> None:
    # The reference prints the rendered text before the envelope (S-3); "Our choices" 3 fixes it.
    for renderer in ("json", "table"):
        result = lobster("run", "--mode", "tool", f"exec --json --shell 'echo [1,2]' | {renderer}")
        assert result.json["output"] == [1, 2] and result.stdout.startswith("{")
    human = lobster("exec --json --shell 'echo [1]' | json")
    assert human.stdout == "[\n  1\n]\n"


def test_c42_failed_resume_after_side_effect_is_not_retryable(lobster: LobsterCli, tmp_path: Path) -> None:
    counter = tmp_path / "count"
    pipeline = f"exec --json --shell 'echo [1]' | approve --prompt ok | exec --shell 'echo x >> {counter}; false'"
    token = halt(lobster, pipeline)["requiresApproval"]["resumeToken"]
    first = lobster("resume", "--token", token, "--approve", "yes")
    assert first.code == 1 and first.json["error"]["message"].startswith("exec failed (1)")
    second = lobster("resume", "--token", token, "--approve", "yes")
    assert second.json["error"]["message"] == "Pipeline resume state not found"
    assert counter.read_text().count("x") == 1


def test_c44_approval_as_last_stage_leaves_no_index(lobster: LobsterCli, state_dir: Path) -> None:
    request = halt(lobster, "exec --json --shell 'echo [1]' | approve --prompt ok")["requiresApproval"]
    done = lobster("resume", "--token", request["resumeToken"], "--approve", "yes")
    assert done.json["output"] == [1]
    assert files_in(state_dir) == []  # the reference leaks approval_<id>.json here (L-1)
    again = lobster("resume", "--id", request["approvalId"], "--approve", "yes")
    assert again.code == 2 and again.json["error"]["message"] == f'Approval ID "{request["approvalId"]}" not found or expired'


def test_c47_doctor_version_help(lobster: LobsterCli) -> None:
    doctor = lobster("doctor")
    assert doctor.code == 0
    report = doctor.json["output"][0]
    assert report["toolMode"] is True and report["protocolVersion"] == 1 and isinstance(report["version"], str)
    assert lobster("doctor", "a", "b").json["output"][0]["notes"] == ["a", "b"]
    for flag in ("version", "--version", "-v"):
        assert lobster(flag).stdout.strip() == report["version"]
    unknown = lobster("help", "nope")
    assert unknown.code == 2 and unknown.stderr == "Unknown command: nope\n"
    bare = lobster()
    assert bare.code == 0 and "Usage:" in bare.stdout
    assert "Usage:" in lobster("run", "x", "--help").stdout


def test_human_mode_prints_items_and_errors(lobster: LobsterCli) -> None:
    ok = lobster("exec --json --shell 'echo [1,2]'")
    assert ok.code == 0 and json.loads(ok.stdout) == [1, 2]
    failed = lobster("exec --shell 'echo boom >&2; exit 3'")
    assert failed.code == 1 and failed.stderr == "Error: exec failed (3): boom\n"
    approval = lobster("exec --json --shell 'echo [1]' | approve --prompt hi")
    assert approval.json[0]["type"] == "approval_request"


def test_c36_pipeline_dry_run(lobster: LobsterCli, state_dir: Path) -> None:
    result = lobster("run", "--dry-run", "exec --json \"echo [1,2,3]\" | where active=true | table")
    assert result.code == 0 and result.stdout == ""
    assert "[DRY RUN] Pipeline (3 stages):" in result.stderr
    for name in ("exec", "where", "table"):
        assert name in result.stderr
    assert files_in(state_dir) == []
    invoke = lobster("run", "openclaw.invoke", "--tool", "message", "--action", "send", "--dry-run")
    assert invoke.code != 0 and "[DRY RUN]" not in invoke.stderr
    assert "Error: openclaw.invoke requires --url or OPENCLAW_URL" in invoke.stderr
