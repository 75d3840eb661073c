"""The audit journal records every decision made through our runner, failed ones included."""

from __future__ import annotations

import hashlib
import json
import textwrap
from pathlib import Path

from tests.conftest import LobsterCli


def journal(state_dir: Path) -> list[dict]:
    path = state_dir / "audit" / "journal.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_cli_decisions_are_journaled_with_their_outcome(lobster: LobsterCli, state_dir: Path, tmp_path: Path) -> None:
    wf = tmp_path / "review.lobster"
    wf.write_text(textwrap.dedent("""\
        name: review
        steps:
          - id: ask
            input:
              prompt: Ship it?
              responseSchema: {type: object, properties: {ok: {type: boolean}}, required: [ok]}
        """))
    token = lobster("run", "--mode", "tool", str(wf)).json["requiresInput"]["resumeToken"]
    env = {"LOBSTER_APPROVAL_APPROVED_BY": "dana"}
    bad = lobster("resume", "--token", token, "--response-json", '{"ok": "yes"}', env=env)
    assert bad.code == 2
    good = lobster("resume", "--token", token, "--response-json", '{"ok": true}', env=env)
    assert good.json["status"] == "ok"
    failed, done = journal(state_dir)
    assert failed["decision"] == "answer" and failed["outcome"]["status"] == "error"
    assert "must be boolean" in failed["outcome"]["error"]
    assert done["outcome"] == {"status": "ok", "error": None, "next": None}
    assert done["approver"] == "dana" and done["kind"] == "input" and done["step"] == "ask"
    assert done["prompt"] == "Ship it?" and done["workflow"] == str(wf)
    assert done["answerSha256"] == hashlib.sha256(b'{"ok":true}').hexdigest()
    assert (state_dir / "audit" / "journal.jsonl").stat().st_mode & 0o777 == 0o600


def test_pipeline_approval_and_cancel_are_journaled(lobster: LobsterCli, state_dir: Path) -> None:
    first = lobster("run", "--mode", "tool", "exec --json --shell 'echo [1]' | approve --prompt 'Send?'").json
    second = lobster("run", "--mode", "tool", "exec --json --shell 'echo [2]' | approve --prompt 'Post?'").json
    approval_id = first["requiresApproval"]["approvalId"]
    lobster("resume", "--id", approval_id, "--approve", "yes")
    lobster("resume", "--token", second["requiresApproval"]["resumeToken"], "--cancel")
    approve, cancel = journal(state_dir)
    assert approve["approvalId"] == approval_id and approve["decision"] == "approve" and approve["prompt"] == "Send?"
    assert approve["step"] == "approve" and approve["kind"] == "approval"
    assert cancel["decision"] == "cancel" and cancel["outcome"]["status"] == "cancelled"
    assert cancel["approvalId"] == second["requiresApproval"]["approvalId"]
    listing = lobster("audit")
    assert "approve" in listing.stdout and "cancel" in listing.stdout
    assert [e["decision"] for e in lobster("audit", "--json").json] == ["approve", "cancel"]
