"""Spec §14 conformance cases about workflow files and their checkpoints, through the real CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, LobsterCli, _clean_env, decode_token, files_in

WF1 = """\
name: wf1
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


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_c19_workflow_approval(lobster: LobsterCli, tmp_path: Path, state_dir: Path) -> None:
    wf = write(tmp_path, "wf1.lobster", WF1)
    env = lobster("run", "--mode", "tool", str(wf), "--args-json", '{"who":"bob"}').json
    assert env["status"] == "needs_approval"
    request = env["requiresApproval"]
    assert request["prompt"] == "Send greeting?" and request["items"] == [1, 2] and "preview" not in request
    token = decode_token(request["resumeToken"])
    assert token["kind"] == "workflow-file"
    state = json.loads((state_dir / f"{token['stateKey']}.json").read_text())
    assert state["resumeAtIndex"] == 2 and state["approvalStepId"] == "gate" and state["approvalIdentity"] == {}
    assert state["args"] == {"who": "bob"} and state["steps"]["greet"]["json"]["msg"] == "hi bob"
    assert state["filePath"] == str(wf)
    done = lobster("resume", "--token", request["resumeToken"], "--approve", "yes").json
    assert done["status"] == "ok" and done["output"] == ["sent hi bob\n"]
    assert files_in(state_dir) == []
    again = lobster("run", "--mode", "tool", str(wf)).json["requiresApproval"]
    assert lobster("resume", "--id", again["approvalId"], "--approve", "no").json["status"] == "cancelled"
    assert files_in(state_dir) == []


C20 = """\
steps:
  - id: draft
    run: echo '{"text":"hello"}'
  - id: review
    input:
      prompt: Review?
      responseSchema:
        type: object
        properties:
          decision: {type: string, enum: [approve, reject]}
          n: {type: integer, minimum: 3}
        required: [decision]
        additionalProperties: false
      defaults: {decision: approve}
  - id: finish
    run: echo "$review.response.decision"
"""


@pytest.mark.parametrize(
    ("answer", "tail"),
    [
        ("{}", "/: must have required property 'decision'"),
        ('{"decision":"maybe"}', "/decision: must be equal to one of the allowed values"),
        ('{"decision":"approve","n":1}', "/n: must be >= 3"),
        ('{"decision":"approve","x":1}', "/: must NOT have additional properties"),
        ('{"decision":5}', "/decision: must be string"),
        ("[1]", "/: must be object"),
        ('{"decision":"approve","n":1.5}', "/n: must be integer"),
    ],
)
def test_c20_input_validation_messages(lobster: LobsterCli, tmp_path: Path, answer: str, tail: str) -> None:
    wf = write(tmp_path, "review.lobster", C20)
    token = lobster("run", "--mode", "tool", str(wf)).json["requiresInput"]["resumeToken"]
    bad = lobster("resume", "--token", token, "--response-json", answer)
    assert bad.code == 2
    assert bad.json["error"]["message"] == f"Workflow input step review response failed schema validation at {tail}"


def test_c20_input_request_and_answer(lobster: LobsterCli, tmp_path: Path, state_dir: Path) -> None:
    wf = write(tmp_path, "review.lobster", C20)
    request = lobster("run", "--mode", "tool", str(wf)).json["requiresInput"]
    assert list(request) == ["type", "prompt", "responseSchema", "defaults", "subject", "resumeToken"]
    assert request["subject"] == {"text": "hello"} and request["defaults"] == {"decision": "approve"}
    wrong = lobster("resume", "--token", request["resumeToken"], "--approve", "yes")
    assert wrong.code == 2 and wrong.json["error"]["message"] == "Workflow resume requires --response-json for input requests"
    done = lobster("resume", "--token", request["resumeToken"], "--response-json", '{"decision":"reject"}').json
    assert done["status"] == "ok" and done["output"] == ["reject\n"]
    assert files_in(state_dir) == []


def test_c21_human_non_tty_pause_saves_state(lobster: LobsterCli, tmp_path: Path, state_dir: Path) -> None:
    wf = write(tmp_path, "wf1.lobster", WF1)
    result = lobster("run", str(wf))
    assert result.code == 0
    assert list(result.json) == ["status", "output", "requiresApproval", "requiresInput"]
    assert result.json["status"] == "needs_approval"
    assert any(name.startswith("workflow_resume_") for name in files_in(state_dir))


def test_c22_approval_wrong_intent(lobster: LobsterCli, tmp_path: Path) -> None:
    wf = write(tmp_path, "wf1.lobster", WF1)
    token = lobster("run", "--mode", "tool", str(wf)).json["requiresApproval"]["resumeToken"]
    wrong = lobster("resume", "--token", token, "--response-json", "{}")
    assert wrong.code == 2
    assert wrong.json["error"]["message"] == "Workflow resume requires --approve yes|no for approval requests"


GATED = """\
steps:
  - id: gate
    approval: {{prompt: Proceed?, {rule}}}
  - id: finish
    run: echo '{{"done":true}}'
    when: $gate.approved
"""


def test_c23_different_approver(lobster: LobsterCli, tmp_path: Path) -> None:
    wf = write(tmp_path, "gate.lobster", GATED.format(rule="require_different_approver: true"))
    env = lobster("run", "--mode", "tool", str(wf), env={"LOBSTER_APPROVAL_INITIATED_BY": "agent-1"}).json
    request = env["requiresApproval"]
    assert request["initiatedBy"] == "agent-1" and request["requireDifferentApprover"] is True
    same = lobster("resume", "--token", request["resumeToken"], "--approve", "yes", env={"LOBSTER_APPROVAL_APPROVED_BY": "agent-1"})
    assert same.code == 2
    assert same.json["error"]["message"] == "Workflow step gate approval must be granted by someone other than 'agent-1'"
    other = lobster("resume", "--token", request["resumeToken"], "--approve", "yes", env={"LOBSTER_APPROVAL_APPROVED_BY": "human-1"})
    assert other.json["status"] == "ok" and other.json["output"] == [{"done": True}]


def test_c24_required_approver(lobster: LobsterCli, tmp_path: Path) -> None:
    wf = write(tmp_path, "gate.lobster", GATED.format(rule="required_approver: alice"))
    request = lobster("run", "--mode", "tool", str(wf)).json["requiresApproval"]
    assert request["requiredApprover"] == "alice"
    nobody = lobster("resume", "--token", request["resumeToken"], "--approve", "yes")
    assert nobody.json["error"]["message"] == (
        "Workflow step gate approval requires approver identity; set LOBSTER_APPROVAL_APPROVED_BY"
    )
    bob = lobster("resume", "--token", request["resumeToken"], "--approve", "yes", env={"LOBSTER_APPROVAL_APPROVED_BY": "bob"})
    assert bob.json["error"]["message"] == "Workflow step gate approval requires approver 'alice', got 'bob'"
    alice = lobster("resume", "--token", request["resumeToken"], "--approve", "yes", env={"LOBSTER_APPROVAL_APPROVED_BY": "alice"})
    assert alice.json["status"] == "ok"


def test_c25_args_reach_steps_verbatim_through_env(lobster: LobsterCli, tmp_path: Path) -> None:
    wf = write(tmp_path, "env.lobster", """\
        args:
          text: {default: ""}
          __edge__key__: {default: ""}
        steps:
          - id: show
            run: >
              python3 -c 'import json,os; print(json.dumps({"text": os.environ["LOBSTER_ARG_TEXT"], "edge": os.environ["LOBSTER_ARG_EDGE_KEY"]}))'
        """)
    text = 'hello "world" $HOME `backticks` $(whoami)'
    args = json.dumps({"text": text, "__edge__key__": "preserved"})
    env = lobster("run", "--mode", "tool", str(wf), "--args-json", args).json
    assert env["output"] == [{"text": text, "edge": "preserved"}]


def test_c26_file_flag_and_bad_args_json(lobster: LobsterCli, tmp_path: Path) -> None:
    wf = write(tmp_path, "task.lobster", """\
        args: {task: {default: ""}}
        steps:
          - id: show
            run: printf '{"task":"%s","env":"%s"}' '${task}' "$LOBSTER_ARG_TASK"
        """)
    human = lobster("run", "--file", str(wf), "--args-json", '{"task":"test"}')
    assert human.code == 0 and json.loads(human.stdout) == [{"task": "test", "env": "test"}]
    bad = lobster("run", "--file", str(wf), "--args-json", "{x")
    assert bad.code == 2 and bad.stderr == "run --args-json must be valid JSON\n"
    tool = lobster("run", "--mode", "tool", "--file", str(wf), "--args-json", "{x")
    assert tool.code == 2 and tool.json["error"] == {"type": "parse_error", "message": "run --args-json must be valid JSON"}


def test_missing_file_flag_is_a_clean_error(lobster: LobsterCli, tmp_path: Path) -> None:
    tool = lobster("run", "--mode", "tool", "--file", str(tmp_path / "missing.lobster"))
    assert tool.code == 1 and tool.json["ok"] is False and "Traceback" not in tool.stderr
    human = lobster("run", "--file", str(tmp_path / "missing.lobster"))
    assert human.code == 1 and human.stdout == "" and human.stderr.startswith("Error:")


def test_c27_template_edge_cases(lobster: LobsterCli, tmp_path: Path) -> None:
    wf = write(tmp_path, "tpl.lobster", """\
        args:
          obj: {default: {a: 1}}
          list: {default: [1, 2]}
          nul: {default: null}
        steps:
          - id: a
            run: echo '{"x":{"y":[10,20]}}'
          - id: show
            run: printf '%s|' "${obj}" "${list}" "${nul}" "$a.json.x.y.1" "$a.json.nope" "$a.approved"
        """)
    assert lobster("run", "--mode", "tool", str(wf)).json["output"] == ["[object Object]|1,2|null|20||false|"]


def test_c28_conditions(lobster: LobsterCli, tmp_path: Path) -> None:
    wf = write(tmp_path, "cond.lobster", """\
        steps:
          - id: data
            run: echo '{"count":1}'
          - id: check
            run: echo big
            when: $data.json.count > 3
          - id: fallback
            run: echo small
        """)
    assert lobster("run", "--mode", "tool", str(wf)).json["output"] == ["small\n"]
    eq = write(tmp_path, "eq.lobster", """\
        steps:
          - id: left
            run: echo '{"a":1,"b":2}'
          - id: right
            run: echo '{"b":2,"a":1}'
          - id: same
            run: echo same
            when: $left.json == $right.json
        """)
    assert lobster("run", "--mode", "tool", str(eq)).json["output"] == ["same\n"]


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        ("condition: approve", "Unsupported condition: approve"),
        ('condition: "!$aprove.approved"', "Unknown step reference: aprove.approved"),
        ('when: "$a.json.missing == null || $zz.json"', "Unknown step reference: zz.json"),
    ],
)
def test_c29_condition_errors(lobster: LobsterCli, tmp_path: Path, condition: str, message: str) -> None:
    wf = write(tmp_path, "bad.lobster", f"""\
steps:
  - id: a
    run: echo '{{}}'
  - id: b
    run: echo hi
    {condition}
""")
    result = lobster("run", "--mode", "tool", str(wf))
    assert result.code == 1 and result.json["error"] == {"type": "runtime_error", "message": message}


def test_c30_on_error(lobster: LobsterCli, tmp_path: Path) -> None:
    cont = write(tmp_path, "cont.lobster", """\
        steps:
          - id: fail
            run: exit 1
            on_error: continue
          - id: after
            run: echo "ran $SAW"
            env: {SAW: "$fail.error"}
        """)
    assert lobster("run", "--mode", "tool", str(cont)).json["output"] == ["ran true\n"]
    skip = write(tmp_path, "skip.lobster", """\
        steps:
          - id: good
            run: echo '{"kept":true}'
          - id: fail
            run: exit 1
            on_error: skip_rest
          - id: never
            run: echo never
        """)
    assert lobster("run", "--mode", "tool", str(skip)).json["output"] == [{"kept": True}]
    stop = write(tmp_path, "stop.lobster", "steps:\n  - id: fail\n    run: exit 1\n")
    result = lobster("run", "--mode", "tool", str(stop))
    assert result.code == 1 and result.json["error"]["message"].startswith("workflow command failed (1)")
    halt = write(tmp_path, "halt.lobster", """\
        steps:
          - id: p
            pipeline: "approve --prompt 'Proceed?'"
            on_error: continue
        """)
    message = lobster("run", "--mode", "tool", str(halt)).json["error"]["message"]
    assert message == ("Workflow step p halted for approval inside pipeline stage approve. "
                       "Use a separate approval step in the workflow file.")


def test_c31_timeout_kills_the_process(lobster: LobsterCli, tmp_path: Path) -> None:
    marker = f"sleep 7.{os.getpid()}"
    wf = write(tmp_path, "slow.lobster", f"steps:\n  - id: slow\n    run: {marker}\n    timeout_ms: 200\n")
    started = time.monotonic()
    result = lobster("run", "--mode", "tool", str(wf))
    assert result.json["error"]["message"] == "Step 'slow' timed out after 200ms"
    assert time.monotonic() - started < 5
    ps = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    assert ps.stdout.strip() == ""


def test_c31_retry_logs_and_succeeds(lobster: LobsterCli, tmp_path: Path) -> None:
    counter = tmp_path / "n"
    wf = write(tmp_path, "flaky.lobster", f"""\
        steps:
          - id: flaky
            run: n=$(cat {counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {counter}; [ $n -ge 3 ] && echo ok || (echo nope >&2; exit 1)
            retry: {{max: 3, delay_ms: 50}}
        """)
    result = lobster("run", "--mode", "tool", str(wf))
    assert result.json["output"] == ["ok\n"]
    assert result.stderr.count("[RETRY] Step 'flaky' failed (attempt") == 2
    assert "Retrying in 50ms..." in result.stderr


def test_c32_for_each(lobster: LobsterCli, tmp_path: Path) -> None:
    wf = write(tmp_path, "loop.lobster", """\
        steps:
          - id: data
            run: echo '[10,20]'
          - id: loop
            for_each: $data.json
            item_var: num
            index_var: idx
            steps:
              - id: emit
                run: echo '{"num":$num.json,"idx":$idx.json}'
        """)
    assert lobster("run", "--mode", "tool", str(wf)).json["output"] == [
        {"num": 10, "idx": 0, "emit": {"num": 10, "idx": 0}},
        {"num": 20, "idx": 1, "emit": {"num": 20, "idx": 1}},
    ]
    obj = write(tmp_path, "obj.lobster", """\
        steps:
          - id: data
            run: echo '{"x":1}'
          - id: loop
            for_each: $data.json
            steps: [{id: s, run: echo hi}]
        """)
    assert lobster("run", "--mode", "tool", str(obj)).json["error"]["message"] == "Workflow step loop for_each: expected array, got object"


def test_c33_parallel(lobster: LobsterCli, tmp_path: Path) -> None:
    wf = write(tmp_path, "par.lobster", """\
        steps:
          - id: par
            parallel:
              branches:
                - {id: a, run: "echo '{\\"src\\":\\"a\\",\\"val\\":1}'"}
                - {id: b, run: "echo '{\\"src\\":\\"b\\"}'"}
          - id: later
            run: echo "$a.json.val"
        """)
    assert lobster("run", "--mode", "tool", str(wf)).json["output"] == [1]
    fast = write(tmp_path, "any.lobster", """\
        steps:
          - id: par
            parallel:
              wait: any
              branches:
                - {id: fast, run: "echo '{\\"f\\":1}'"}
                - {id: slow, run: "sleep 5; echo '{}'"}
        """)
    started = time.monotonic()
    assert lobster("run", "--mode", "tool", str(fast)).json["output"] == [{"fast": {"f": 1}}]
    assert time.monotonic() - started < 4
    timeout = write(tmp_path, "pt.lobster", """\
        steps:
          - id: p
            parallel:
              timeout_ms: 100
              branches: [{id: s, run: sleep 5}]
        """)
    assert lobster("run", "--mode", "tool", str(timeout)).json["error"]["message"] == "Parallel step p timed out after 100ms"


def test_c34_composition(lobster: LobsterCli, tmp_path: Path) -> None:
    write(tmp_path, "child.lobster", """\
        args: {name: {default: x}}
        steps:
          - id: hello
            run: echo "{\\"msg\\":\\"hi $LOBSTER_ARG_NAME\\"}"
        """)
    parent = write(tmp_path, "parent.lobster", """\
        steps:
          - id: sub
            workflow: child.lobster
            workflow_args: {name: lobster}
          - id: use
            run: echo "$sub.json.msg"
        """)
    assert lobster("run", "--mode", "tool", str(parent)).json["output"] == ["hi lobster\n"]
    selfref = write(tmp_path, "self.lobster", "steps:\n  - id: me\n    workflow: self.lobster\n")
    assert "creates a cycle" in lobster("run", "--mode", "tool", str(selfref)).json["error"]["message"]


def test_c34_child_gate_fails_without_leaking_files(lobster: LobsterCli, tmp_path: Path, state_dir: Path) -> None:
    write(tmp_path, "gated.lobster", "steps:\n  - id: g\n    approval: ok?\n")
    parent = write(tmp_path, "p.lobster", "steps:\n  - id: sub\n    workflow: gated.lobster\n")
    message = lobster("run", "--mode", "tool", str(parent)).json["error"]["message"]
    assert message == ("Workflow step sub sub-workflow halted for approval. "
                       "Sub-workflow approval/input gates are not supported in composition.")
    assert files_in(state_dir) == []  # the reference leaks the child's approval index (L-3)


def test_c35_workflow_dry_run(lobster: LobsterCli, tmp_path: Path, state_dir: Path) -> None:
    wf = write(tmp_path, "dry.lobster", """\
        steps:
          - id: fetch
            run: echo hi
          - id: gate
            approval: ok?
          - id: use
            run: echo approved=$gate.approved $fetch.stdout
            when: $gate.approved
        """)
    for args in (["run", "--dry-run", str(wf)], ["run", str(wf), "--dry-run"]):
        result = lobster(*args)
        assert result.code == 0 and result.stdout == ""
        assert result.stderr.startswith("[DRY RUN] Would execute 3 steps:\n\n")
        assert "skipped" not in result.stderr
        assert "run: echo approved=true $fetch.stdout  [contains step output refs — unknown at plan time]" in result.stderr
    tool = lobster("run", "--mode", "tool", "--dry-run", str(wf))
    assert tool.json["status"] == "ok" and tool.json["output"] == []
    assert files_in(state_dir) == []


def test_c43_unstarted_failure_stays_retryable(lobster: LobsterCli, tmp_path: Path) -> None:
    wf = write(tmp_path, "retry.lobster", """\
        steps:
          - id: approve
            approval: Continue?
          - id: effect
            run: cat
            stdin: $missing.stdout
        """)
    token = lobster("run", "--mode", "tool", str(wf)).json["requiresApproval"]["resumeToken"]
    failed = lobster("resume", "--token", token, "--approve", "yes")
    assert failed.json["error"]["message"] == "Unknown step reference: missing.stdout"
    wf.write_text(wf.read_text().replace("$missing.stdout", "$approve.stdout"))
    assert lobster("resume", "--token", token, "--approve", "yes").json["status"] == "ok"


def test_c42_workflow_failure_after_claim_deletes_state(lobster: LobsterCli, tmp_path: Path, state_dir: Path) -> None:
    wf = write(tmp_path, "fail.lobster", "steps:\n  - id: gate\n    approval: go?\n  - id: boom\n    run: exit 3\n")
    token = lobster("run", "--mode", "tool", str(wf)).json["requiresApproval"]["resumeToken"]
    assert lobster("resume", "--token", token, "--approve", "yes").json["error"]["message"].startswith("workflow command failed (3)")
    again = lobster("resume", "--token", token, "--approve", "yes")
    assert again.json["error"]["message"] == "Workflow resume state not found"
    assert files_in(state_dir) == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("{steps: []}", "Workflow file requires a non-empty steps array"),
        ("{steps: [{id: x, workflow: child.lobster, run: echo hi}]}",
         "Workflow step x can only define one of run, command, pipeline, workflow, parallel, or for_each"),
        ("{steps: [{id: loop, for_each: $x.json, item_var: x, index_var: x, steps: [{id: s, command: echo}]}]}",
         "Workflow step loop item_var and index_var cannot be the same"),
        ("{steps: [{id: a, run: echo}, {id: a, run: echo}]}", "Duplicate workflow step id: a"),
    ],
)
def test_c46_load_validation(lobster: LobsterCli, tmp_path: Path, body: str, message: str) -> None:
    wf = write(tmp_path, "v.lobster", body)
    result = lobster("run", "--mode", "tool", str(wf))
    assert result.code == 1 and result.json["error"] == {"type": "runtime_error", "message": message}


def test_c45_sigint_exits_130_and_kills_the_tree(tmp_path: Path, state_dir: Path) -> None:
    marker = f"sleep 9.{os.getpid()}"
    wf = write(tmp_path, "long.lobster", f"steps:\n  - id: s\n    run: sh -c '{marker}'\n")
    proc = subprocess.Popen([sys.executable, "-m", "lobster_tui.cli", "run", "--file", str(wf)],
                            env=_clean_env(state_dir), cwd=str(REPO), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode != 0:
        assert time.monotonic() < deadline, "child never started"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=5) == 130
    deadline = time.monotonic() + 2
    while subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 0:
        assert time.monotonic() < deadline, "child outlived the run"
        time.sleep(0.05)


def test_examples_halt_and_resume(lobster: LobsterCli, state_dir: Path) -> None:
    cleanup = lobster("run", "--mode", "tool", str(REPO / "examples" / "inbox-cleanup.lobster")).json
    assert cleanup["status"] == "needs_approval" and len(cleanup["requiresApproval"]["items"]) == 3
    done = lobster("resume", "--id", cleanup["requiresApproval"]["approvalId"], "--approve", "yes").json
    assert done["output"] == [{"archived": 3, "mailbox": "personal"}]
    notes = lobster("run", "--mode", "tool", str(REPO / "examples" / "release-notes.lobster")).json
    assert notes["status"] == "needs_input" and notes["requiresInput"]["subject"]["version"] == "2.4.0"
    deploy = lobster("run", "--mode", "tool", str(REPO / "examples" / "deploy.lobster")).json
    assert deploy["requiresApproval"]["prompt"] == "Deploy billing-api 7f3c2e1 to staging?"
