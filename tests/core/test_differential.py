"""Our runtime against the official one (npm @clawdbot/lobster), where Node and it are installed.

Cases run through both runtimes and compare normalised envelopes, and checkpoints cross between
them in one state directory: ours halts and theirs resumes, and the reverse. The npm release is
2026.5.22; cases avoid the rows of spec §12 where head (our target) differs from it.
Set LOBSTER_OFFICIAL_BIN to the official ``lobster`` executable, or install it as .ci/run does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import _clean_env

pytestmark = pytest.mark.official


def _official_bin() -> str | None:
    candidates = [
        os.environ.get("LOBSTER_OFFICIAL_BIN", ""),
        str(Path.home() / ".cache" / "lobster-tui" / "official" / "node_modules" / ".bin" / "lobster"),
        "/work/official-lobster/node_modules/.bin/lobster",
    ]
    for candidate in candidates:
        if candidate and Path(candidate).exists() and shutil.which("node"):
            return candidate
    return None


OFFICIAL = _official_bin()
if OFFICIAL is None:
    pytest.skip("the official Lobster runtime (Node + @clawdbot/lobster) is not installed", allow_module_level=True)


def run(which: str, args: list[str], state_dir: Path, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, Any]:
    command = [OFFICIAL, *args] if which == "official" else [sys.executable, "-m", "lobster_tui.cli", *args]
    full_env = _clean_env(state_dir)
    full_env.update(env or {})
    proc = subprocess.run(command, capture_output=True, text=True, env=full_env, cwd=str(cwd), timeout=60)
    try:
        body = json.loads(proc.stdout) if proc.stdout.strip() else None
    except json.JSONDecodeError:
        body = proc.stdout
    return proc.returncode, body


def normalise(envelope: Any) -> Any:
    """Blank out what differs by design between two runs: tokens and approval ids."""
    if not isinstance(envelope, dict):
        return envelope
    out = json.loads(json.dumps(envelope))
    for key in ("requiresApproval", "requiresInput"):
        if isinstance(out.get(key), dict):
            out[key]["resumeToken"] = "<token>"
            if "approvalId" in out[key]:
                out[key]["approvalId"] = "<id>"
    return out


PIPELINES = [
    "exec --json --shell 'echo [1,2,3]'",
    "exec --json --shell \"printf '%s' '[{\\\"a\\\":1},{\\\"a\\\":2},{\\\"a\\\":3}]'\" | approve --preview-from-stdin --limit 2 --prompt 'Apply?'",
    "exec --shell \"printf 'x\\ny\\nz'\" | approve --preview-from-stdin --limit 2",
    "exec --json --shell \"printf '%s' '[{\\\"id\\\":1,\\\"n\\\":\\\"5\\\",\\\"tag\\\":\\\"a\\\"},{\\\"id\\\":2,\\\"n\\\":5,\\\"tag\\\":\\\"b\\\"},{\\\"id\\\":4,\\\"n\\\":null,\\\"tag\\\":\\\"b\\\"}]'\" | where n<10 | sort --key n --desc | pick id,tag",
    "exec --json --shell \"printf '%s' '[{\\\"id\\\":1,\\\"tag\\\":\\\"a\\\"},{\\\"id\\\":2,\\\"tag\\\":\\\"a\\\"},{\\\"id\\\":3}]'\" | groupBy --key tag",
    "exec --json --shell \"printf '%s' '[{\\\"id\\\":1,\\\"tag\\\":\\\"x\\\"},3]'\" | template --text '{{id}}:{{tag | upper}}:{{missing | default \"N/A\"}}'",
    "exec --json --shell 'echo [1.0, 2.5, 1e21, 0.0000001]'",
    "exec 'x",
    "foo | bar",
    "exec --json --shell 'echo not-json'",
    "exec --shell 'echo boom >&2; exit 4'",
]


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_pipeline_envelopes_match(pipeline: str, tmp_path: Path) -> None:
    ours = run("ours", ["run", "--mode", "tool", pipeline], tmp_path / "a", tmp_path)
    theirs = run("official", ["run", "--mode", "tool", pipeline], tmp_path / "b", tmp_path)
    if isinstance(theirs[1], dict) and "could not parse stdout as JSON" in str(theirs[1].get("error", {}).get("message")):
        # The tail of that message is the JavaScript parser's own wording (spec R-CMD-EXEC-6).
        assert ours[1]["error"]["message"].startswith("exec --json could not parse stdout as JSON: ")
        return
    assert ours[0] == theirs[0]
    assert normalise(ours[1]) == normalise(theirs[1])


WORKFLOW = """\
name: diff-wf
args: {who: {default: world}}
steps:
  - id: greet
    run: echo '{"msg":"hi ${who}"}'
  - id: gate
    approval: {prompt: Send greeting?, items: [1, 2]}
  - id: send
    run: echo sent $greet.json.msg
    when: $gate.approved
"""

INPUT_WORKFLOW = """\
steps:
  - id: draft
    run: echo '{"text":"hello"}'
  - id: review
    input:
      prompt: Review?
      responseSchema:
        type: object
        properties: {decision: {type: string, enum: [approve, reject]}}
        required: [decision]
      defaults: {decision: approve}
  - id: finish
    run: echo "$review.response.decision"
"""


@pytest.mark.parametrize("body", [WORKFLOW, INPUT_WORKFLOW])
def test_workflow_halts_match(body: str, tmp_path: Path) -> None:
    wf = tmp_path / "wf.lobster"
    wf.write_text(body)
    ours = run("ours", ["run", "--mode", "tool", str(wf)], tmp_path / "a", tmp_path)
    theirs = run("official", ["run", "--mode", "tool", str(wf)], tmp_path / "b", tmp_path)
    assert normalise(ours[1]) == normalise(theirs[1])


def _decide(halted: dict[str, Any]) -> list[str]:
    if halted.get("requiresApproval"):
        return ["--id", halted["requiresApproval"]["approvalId"], "--approve", "yes"]
    return ["--token", halted["requiresInput"]["resumeToken"], "--response-json", '{"decision":"reject"}']


@pytest.mark.parametrize("first,second", [("ours", "official"), ("official", "ours")])
@pytest.mark.parametrize("body", [WORKFLOW, INPUT_WORKFLOW])
def test_workflow_checkpoints_cross_runtimes(first: str, second: str, body: str, tmp_path: Path) -> None:
    wf = tmp_path / "wf.lobster"
    wf.write_text(body)
    state = tmp_path / "state"
    _, halted = run(first, ["run", "--mode", "tool", str(wf)], state, tmp_path)
    code, done = run(second, ["resume", *_decide(halted)], state, tmp_path)
    assert code == 0 and done["status"] == "ok"
    expected = ["sent hi world\n"] if "greet" in body else ["reject\n"]
    assert done["output"] == expected
    leftovers = [p.name for p in state.iterdir() if p.name.startswith("workflow")]
    assert leftovers == []


@pytest.mark.parametrize("first,second", [("ours", "official"), ("official", "ours")])
def test_pipeline_checkpoint_crosses_runtimes(first: str, second: str, tmp_path: Path) -> None:
    state = tmp_path / "state"
    pipeline = "exec --json --shell \"printf '%s' '[{\\\"a\\\":1,\\\"b\\\":2}]'\" | approve --prompt 'ok?' | pick a"
    _, halted = run(first, ["run", "--mode", "tool", pipeline], state, tmp_path)
    code, done = run(second, ["resume", "--id", halted["requiresApproval"]["approvalId"], "--approve", "yes"], state, tmp_path)
    assert code == 0 and done["output"] == [{"a": 1}]
    assert not [p for p in state.iterdir() if p.name.startswith("pipeline_resume_")]


def test_state_files_have_the_same_shape(tmp_path: Path) -> None:
    pipeline = "exec --json --shell 'echo [1]' | approve --prompt 'ok?' | pick a"
    run("ours", ["run", "--mode", "tool", pipeline], tmp_path / "a", tmp_path)
    run("official", ["run", "--mode", "tool", pipeline], tmp_path / "b", tmp_path)

    def shape(directory: Path) -> dict[str, Any]:
        [state_file] = directory.glob("pipeline_resume_*.json")
        data = json.loads(state_file.read_text())
        # Fields head adds over the release (spec §12 D-7) and our run-log link are set aside.
        for key in ("createdAt", "supersededResumeStateKeys", "runId"):
            data.pop(key, None)
        return data

    assert shape(tmp_path / "a") == shape(tmp_path / "b")


def test_cancel_crosses_runtimes(tmp_path: Path) -> None:
    state = tmp_path / "state"
    wf = tmp_path / "wf.lobster"
    wf.write_text(textwrap.dedent(WORKFLOW))
    _, halted = run("official", ["run", "--mode", "tool", str(wf)], state, tmp_path)
    code, done = run("ours", ["resume", "--id", halted["requiresApproval"]["approvalId"], "--cancel"], state, tmp_path)
    assert code == 0 and done["status"] == "cancelled"
    assert [p.name for p in state.iterdir() if p.suffix == ".json"] == []

