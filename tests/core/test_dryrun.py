"""Dry-run plans for workflows (spec R-WF-140, C-35) and pipelines (R-CLI-13, C-36)."""

from __future__ import annotations

import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from lobster_tui.core.errors import LobsterRuntimeError
from lobster_tui.core.pipeline.parser import parse_pipeline
from lobster_tui.core.workflow.dryrun import plan_dry_run, plan_pipeline_dry_run
from lobster_tui.core.workflow.loader import load_workflow, resolve_args, validate_workflow

# The command registry at head (R-PIPE-1).
COMMANDS = frozenset(
    "approve ask clawd.invoke commands.list dedupe diff.last email.triage exec gog.gmail.search gog.gmail.send "
    "groupBy head json llm.invoke llm_task.invoke map openclaw.agent openclaw.invoke pick sort state.get "
    "state.set table template where workflows.list workflows.run".split()
)

# (name, workflow file, plan). Each plan is what the official runtime wrote to stderr for the file.
PLANS: list[tuple[str, str, str]] = [
    (
        '01_spec_example',
        """\
name: ex
args:
  city: {default: Phoenix}
steps:
  - id: fetch
    run: weather --json ${city}
    timeout_ms: 5000
    on_error: continue
    retry: {max: 3, backoff: exponential, delay_ms: 500, jitter: true}
  - id: confirm
    stdin: $fetch.json
    approval: required
  - id: review
    input:
      prompt: Review?
      responseSchema: {type: object}
  - id: loop
    for_each: $fetch.json
    batch_size: 2
    pause_ms: 10
    steps:
      - id: each
        run: echo $item.json
  - id: par
    parallel:
      wait: any
      timeout_ms: 100
      branches:
        - id: b1
          run: echo 1
        - id: b2
          pipeline: head --n 1
  - id: advice
    run: echo x
    when: "false"
  - id: sub
    workflow: child.lobster
    workflow_args: {a: 1, b: 2}
""",
        """\
[DRY RUN] Would execute 7 steps:

  1. fetch  [shell]
     run: weather --json Phoenix
     timeout: 5000ms
     on_error: continue
     retry: up to 3 attempts, exponential backoff (base: 500ms, jitter)
  2. confirm  [no-op]
     stdin: $fetch.json  [output unknown at plan time]
     [approval required]
  3. review  [input]
     prompt: Review?
     [input required]
  4. loop  [for_each]
     for_each: $fetch.json  [contains step output refs — unknown at plan time]
     item_var: item, index_var: index
     batch_size: 2
     pause_ms: 10
     sub-steps: 1
       1. each  [shell] run: echo $item.json
  5. par  [parallel]
     wait: any
     timeout: 100ms
     branch b1: [shell] echo 1
     branch b2: [pipeline] head --n 1
  6. advice  [skipped — condition: false]
  7. sub  [workflow]
     workflow: child.lobster
     args: a, b
""",
    ),
    (
        '02_approved_and_deferred',
        """\
args:
  who: {default: world}
  obj: {default: {a: 1}}
steps:
  - id: fetch
    run: echo ${who} ${obj} ${nope} $fetch.stdout
  - id: gate
    approval: yes
    stdin: "x $fetch.stdout y"
  - id: g2
    run: echo approved=$gate.approved skipped=$gate.skipped $fetch.approved $gate.approved.x $unknown.approved $gate.json.x
    when: $gate.approved
  - id: pipe
    pipeline: exec --json --shell 'echo [1]' | where a=1 | $fetch.json.cmd --x | pick a
    stdin: $fetch.json
  - id: pipe2
    pipeline: not_a_real_command | head 1
    when: "!$gate.approved"
  - id: inp
    input: {prompt: "Say ${who}", responseSchema: {type: object}}
  - id: after
    run: echo $inp.response.pending
    when: $inp.response.pending == true && $g2.json == null
  - id: c2
    run: echo hi
    condition: $g2.stdout
  - id: c3
    command: echo c3
    when: false
    condition: true
  - id: c4
    command: echo c4
    when: null
    condition: "true"
""",
        """\
[DRY RUN] Would execute 10 steps:

  1. fetch  [shell]
     run: echo world [object Object] ${nope} $fetch.stdout  [contains step output refs — unknown at plan time]
  2. gate  [no-op]
     stdin: x $fetch.stdout y  [contains step output refs — unknown at plan time]
     [approval required]
  3. g2  [shell]
     run: echo approved=true skipped=$gate.skipped false true.x $unknown.approved $gate.json.x  [contains step output refs — unknown at plan time]
  4. pipe  [pipeline]
     pipeline: exec --json --shell 'echo [1]' | where a=1 | $fetch.json.cmd --x | pick a  [contains step output refs — unknown at plan time]
     [command validation deferred — stage name depends on step output]
     stdin: $fetch.json  [output unknown at plan time]
  5. pipe2  [skipped — condition: false]
  6. inp  [input]
     prompt: Say ${who}
     [input required]
  7. after  [skipped — condition: false]
  8. c2  [skipped — condition: false]
  9. c3  [skipped — condition: false]
  10. c4  [shell]
     run: echo c4
""",
    ),
    (
        '03_stdin_and_skips',
        """\
steps:
  - id: a
    run: echo $a.approved $b.approved $a.approvedX $a.approved_x $a.response.x $a.stdoutx $a.jsonx $a.skipped ${x}
  - id: b
    approval: required
    run: echo b
    when: $a.skipped != true
  - id: s
    run: echo s
    when: "false"
  - id: c
    run: echo c
    when: $s.skipped == true
  - id: d
    run: echo d
    when: $s.skipped
  - id: e
    pipeline: " "
    stdin: $a.stdout
  - id: f
    stdin: " $a.json "
    approval: true
  - id: g
    stdin: {x: $a.json}
    run: cat
  - id: h
    stdin: $a.response
    run: cat
  - id: i
    stdin: $a.json.x.y
    run: cat
  - id: j
    stdin: $a.stdout $a.json
    run: cat
""",
        """\
[DRY RUN] Would execute 11 steps:

  1. a  [shell]
     run: echo $a.approved $b.approved $a.approvedX $a.approved_x $a.response.x $a.stdoutx $a.jsonx $a.skipped ${x}  [contains step output refs — unknown at plan time]
  2. b  [shell]
     run: echo b
     [approval required]
  3. s  [skipped — condition: false]
  4. c  [shell]
     run: echo c
  5. d  [shell]
     run: echo d
  6. e  [no-op]
     stdin: $a.stdout  [output unknown at plan time]
  7. f  [no-op]
     stdin: $a.json  [output unknown at plan time]
     [approval required]
  8. g  [shell]
     run: cat
  9. h  [shell]
     run: cat
  10. i  [shell]
     run: cat
     stdin: $a.json.x.y  [contains step output refs — unknown at plan time]
  11. j  [shell]
     run: cat
     stdin: $a.stdout $a.json  [contains step output refs — unknown at plan time]
""",
    ),
    (
        '04_c35',
        """\
steps:
  - id: fetch
    run: curl -s https://example.com/data
  - id: show
    run: echo "$fetch.stdout"
  - id: gate
    approval: Send it?
  - id: send
    run: echo approved=$gate.approved
    when: $gate.approved
  - id: rejected
    run: echo never
    when: "!$gate.approved"
""",
        """\
[DRY RUN] Would execute 5 steps:

  1. fetch  [shell]
     run: curl -s https://example.com/data
  2. show  [shell]
     run: echo "$fetch.stdout"  [contains step output refs — unknown at plan time]
  3. gate  [no-op]
     [approval required]
  4. send  [shell]
     run: echo approved=true
  5. rejected  [skipped — condition: false]
""",
    ),
    (
        '05_for_each',
        """\
args: {src: {default: "$d.json"}, n: {default: 5}}
steps:
  - id: d
    run: echo
    approval: true
  - id: loop
    for_each: ${src}
    batch_size: 1
    pause_ms: 0
    item_var: it
    index_var: ix
    env: {A: b}
    steps:
      - id: s1
        run: echo $it.json ${n} $ix.json $d.approved $loop.approved $it.approved
      - id: s2
        pipeline: head --n 1 | $it.json
        stdin: $it.json
      - id: s3
        pipeline: "pick a"
        when: $it.json._placeholder == true && $ix.json == 0
      - id: s4
        command: echo s4
        when: $it.json._placeholder != true
      - id: s5
        run: echo $s1.stdout $s4.skipped $s1.approved
        when: $s4.skipped
        stdin: $s3.json
      - id: s6
        run: " "
        command: echo s6
  - id: loop2
    for_each: " $d.json "
    pause_ms: 1.5
    timeout_ms: 10
    on_error: continue
    retry: {max: 2}
    steps: [{id: x, run: echo $d.stdout}]
  - id: after
    run: echo $loop.approved $x.approved
    when: $loop.json == null
""",
        """\
[DRY RUN] Would execute 4 steps:

  1. d  [shell]
     run: echo
     [approval required]
  2. loop  [for_each]
     for_each: ${src}
     item_var: it, index_var: ix
     batch_size: 1
     sub-steps: 6
       1. s1  [shell] run: echo $it.json 5 $ix.json true $loop.approved false
       2. s2  [pipeline] pipeline: head --n 1 | $it.json
       3. s3  [pipeline] pipeline: pick a
       4. s4  [skipped — condition: false]
       5. s5  [shell] run: echo $s1.stdout $s4.skipped false
       6. s6  [no-op]
  3. loop2  [for_each]
     for_each:  $d.json   [contains step output refs — unknown at plan time]
     item_var: item, index_var: index
     pause_ms: 1.5
     sub-steps: 1
       1. x  [shell] run: echo $d.stdout
  4. after  [skipped — condition: false]
""",
    ),
    (
        '06_parallel',
        """\
args: {n: {default: 5}}
steps:
  - id: d
    approval: true
  - id: p
    parallel:
      wait: any
      timeout_ms: 100
      branches:
        - id: b1
          run: echo ${n} $d.approved $d.json $b1.approved $b2.approved
        - id: b2
          pipeline: head --n ${n} | $d.json | pick
          stdin: $zz.json
        - id: b3
          command: " "
        - id: b4
          run: "echo $b1.approved"
          command: echo b4
    timeout_ms: 5
    stdin: $d.stdout
    retry: {max: 2, backoff: exponential, delay_ms: 100}
    when: $d.approved
  - id: q
    run: echo $b1.approved $p.approved
    when: $b1.json == null
  - id: skipped_par
    when: "false"
    parallel: {branches: [{id: hidden, run: x}]}
  - id: r
    run: echo $p.approved
""",
        """\
[DRY RUN] Would execute 5 steps:

  1. d  [no-op]
     [approval required]
  2. p  [parallel]
     wait: any
     timeout: 100ms
     branch b1: [shell] echo 5 true $d.json $b1.approved $b2.approved  [contains step output refs — unknown at plan time]
     branch b2: [pipeline] head --n 5 | $d.json | pick  [contains step output refs — unknown at plan time]
     branch b3: [no-op]
     branch b4: [shell] echo false
     stdin: $d.stdout  [output unknown at plan time]
     timeout: 5ms
     retry: up to 2 attempts, exponential backoff (base: 100ms)
  3. q  [skipped — condition: false]
  4. skipped_par  [skipped — condition: false]
  5. r  [shell]
     run: echo false
""",
    ),
    (
        '07_composition',
        """\
args: {w: {default: child}}
steps:
  - id: s
    workflow: ${w}.lobster $s.json $x.approved
    workflow_args: {b: 1, a: "$x.json", 2: two, 1: one}
  - id: s2
    workflow: "  sub.lobster "
    workflow_args: {}
    stdin: $s.stdout
    approval: {prompt: ok?}
    on_error: skip_rest
  - id: s3
    workflow: sub.lobster
    when: $s2.approved
""",
        """\
[DRY RUN] Would execute 3 steps:

  1. s  [workflow]
     workflow: child.lobster $s.json $x.approved  [contains step output refs — unknown at plan time]
     args: 1, 2, b, a
  2. s2  [workflow]
     workflow:   sub.lobster 
     stdin: $s.stdout  [output unknown at plan time]
     on_error: skip_rest
     [approval required]
  3. s3  [workflow]
     workflow: sub.lobster
""",
    ),
    (
        '08_input_and_noop',
        """\
args: {a: {default: A}}
steps:
  - id: inp
    input: {prompt: "x $p.stdout ${a}", responseSchema: {type: object}}
    stdin: $missing.stdout
    timeout_ms: 10
  - id: noop
    stdin: " x $inp.json "
    approval: true
  - id: blank
    pipeline: "   "
  - id: last
    command: echo $inp.response.pending $inp.approved
    when: $inp.response.pending == true && $noop.json == null || $blank.stdout
""",
        """\
[DRY RUN] Would execute 4 steps:

  1. inp  [input]
     prompt: x $p.stdout ${a}
     [input required]
  2. noop  [no-op]
     stdin: x $inp.json  [contains step output refs — unknown at plan time]
     [approval required]
  3. blank  [no-op]
  4. last  [skipped — condition: false]
""",
    ),
    (
        '09_one_step',
        """\
steps:
  - id: only
    run: "line1\\nline2 $only.json"
    retry: {max: 3, delay_ms: 1.5, jitter: true}
    on_error: stop
""",
        """\
[DRY RUN] Would execute 1 step:

  1. only  [shell]
     run: line1
line2 $only.json  [contains step output refs — unknown at plan time]
     retry: up to 3 attempts, fixed backoff (base: 1.5ms, jitter)
""",
    ),
    (
        '10_pipeline_args',
        """\
{"steps":[{"id":"x","pipeline":"exec --json=true a --shell \\"echo [1]\\" b --x= --y | where a=1 | pick | openclaw.invoke --tool t"}]}
""",
        """\
[DRY RUN] Would execute 1 step:

  1. x  [pipeline]
     pipeline: exec --json=true a --shell "echo [1]" b --x= --y | where a=1 | pick | openclaw.invoke --tool t
""",
    ),
]

# (name, workflow file, error). Each message is the official runtime's for the file.
ERRORS: list[tuple[str, str, str]] = [
    (
        'e01_stdin_missing',
        """\
steps:
  - id: fetch
    run: x
  - id: b
    run: cat
    stdin: " $missing.stdout "
""",
        'Workflow step b stdin: Unknown step reference: missing.stdout',
    ),
    (
        'e02_unknown_command',
        """\
steps:
  - id: b
    pipeline: "head 1 | not_a_real_command | $x.json"
""",
        'Workflow step b pipeline references unknown command: not_a_real_command',
    ),
    (
        'e03_for_each_ref',
        """\
steps:
  - id: loop
    for_each: " $zz.json "
    steps: [{id: s1, run: echo}]
""",
        'Workflow step loop for_each: Unknown step reference: zz.json',
    ),
    (
        'e04_sub_stdin',
        """\
steps:
  - id: loop
    for_each: "[1,2]"
    steps: [{id: s1, run: echo, stdin: $zz.stdout}]
""",
        'Workflow step loop for_each sub-step s1 stdin: Unknown step reference: zz.stdout',
    ),
    (
        'e05_sub_pipeline',
        """\
steps:
  - id: d
    run: x
  - id: loop
    for_each: $d.json
    steps: [{id: s1, pipeline: "pick | nope"}]
""",
        'Workflow step loop for_each sub-step s1 pipeline: unknown command: nope',
    ),
    (
        'e06_branch_pipeline',
        """\
steps:
  - id: p
    parallel:
      branches:
        - id: b1
          pipeline: "$d.json | nope | nope2"
""",
        'Parallel branch b1 pipeline references unknown command: nope',
    ),
    (
        'e07_parse_error',
        """\
steps:
  - id: b
    pipeline: "exec \\"x"
""",
        'Unclosed quote',
    ),
    (
        'e08_condition',
        """\
steps:
  - id: b
    pipeline: nope
    stdin: $missing.stdout
    when: $zz.json
""",
        'Unknown step reference: zz.json',
    ),
    (
        'e09_sub_condition',
        """\
steps:
  - id: p
    run: echo
  - id: loop
    for_each: $p.json
    steps:
      - id: y
        run: echo
        when: $loop.json
""",
        'Unknown step reference: loop.json',
    ),
    (
        'e10_stdin_before_pipeline',
        """\
steps:
  - id: b
    pipeline: nope2
    stdin: $missing.response
""",
        'Workflow step b stdin: Unknown step reference: missing.response',
    ),
    (
        'e11_args_in_stage_name',
        """\
args: {cmd: {default: nope3}}
steps:
  - id: b
    pipeline: "${cmd} --x 1 | pick a"
""",
        'Workflow step b pipeline references unknown command: nope3',
    ),
    (
        'e12_empty_stage',
        """\
steps:
  - id: b
    pipeline: "head |  | pick"
""",
        'Empty command stage',
    ),
    (
        'e13_parallel_stdin',
        """\
steps:
  - id: e
    parallel: {branches: [{id: b2, run: x}]}
    stdin: $missing.stdout
""",
        'Workflow step e stdin: Unknown step reference: missing.stdout',
    ),
    (
        'e14_self_ref',
        """\
steps:
  - id: s
    run: cat
    stdin: $s.stdout
""",
        'Workflow step s stdin: Unknown step reference: s.stdout',
    ),
]


def _doc(tmp_path: Path, text: str) -> dict[str, Any]:
    path = tmp_path / "wf.lobster"
    path.write_text(text)
    doc = load_workflow(str(path))
    validate_workflow(doc)
    assert isinstance(doc, dict)
    return doc


@pytest.mark.parametrize(("name", "workflow", "plan"), PLANS, ids=[case[0] for case in PLANS])
def test_workflow_plans(tmp_path: Path, name: str, workflow: str, plan: str) -> None:
    doc = _doc(tmp_path, workflow)
    assert plan_dry_run(doc, resolve_args(doc, {}), COMMANDS) == plan


@pytest.mark.parametrize(("name", "workflow", "message"), ERRORS, ids=[case[0] for case in ERRORS])
def test_plans_fail_where_runs_would(tmp_path: Path, name: str, workflow: str, message: str) -> None:
    with pytest.raises(LobsterRuntimeError) as caught:
        plan_dry_run(_doc(tmp_path, workflow), {}, COMMANDS)
    assert caught.value.message == message


def _plan(name: str) -> str:
    return next(plan for case, _, plan in PLANS if case == name)


def test_the_spec_example() -> None:
    plan = _plan("01_spec_example")
    spec_lines = """\
[DRY RUN] Would execute 7 steps:

  1. fetch  [shell]
     run: weather --json Phoenix
     timeout: 5000ms
     on_error: continue
     retry: up to 3 attempts, exponential backoff (base: 500ms, jitter)
  2. confirm  [no-op]
     stdin: $fetch.json  [output unknown at plan time]
     [approval required]
  3. review  [input]
     prompt: Review?
     [input required]
  4. loop  [for_each]
     for_each: $fetch.json  [contains step output refs — unknown at plan time]
     item_var: item, index_var: index
     batch_size: 2
     pause_ms: 10
     sub-steps: 1
       1. each  [shell] run: echo $item.json
  5. par  [parallel]
     wait: any
     timeout: 100ms
     branch b1: [shell] echo 1
     branch b2: [pipeline] head --n 1
  6. advice  [skipped — condition: false]
"""
    assert plan.startswith(spec_lines)
    assert plan.endswith("  7. sub  [workflow]\n     workflow: child.lobster\n     args: a, b\n")


def test_c35_workflow_dry_run() -> None:
    plan = _plan("04_c35")
    assert plan.startswith("[DRY RUN] Would execute 5 steps:\n\n")
    assert "  4. send  [shell]\n     run: echo approved=true\n" in plan
    assert '     run: echo "$fetch.stdout"  [contains step output refs — unknown at plan time]\n' in plan
    assert "  5. rejected  [skipped — condition: false]\n" in plan


def test_provided_args_override_defaults(tmp_path: Path) -> None:
    doc = _doc(tmp_path, "args: {city: {default: Phoenix}}\nsteps:\n  - id: a\n    run: weather ${city}\n")
    assert "     run: weather Seattle\n" in plan_dry_run(doc, {"city": "Seattle"}, COMMANDS)
    assert "     run: weather Phoenix\n" in plan_dry_run(doc, [], COMMANDS)


def test_start_index_counts_and_numbers_from_there(tmp_path: Path) -> None:
    doc = _doc(tmp_path, "steps:\n  - id: a\n    run: x\n  - id: b\n    run: y\n  - id: c\n    run: z\n")
    assert plan_dry_run(doc, {}, COMMANDS, start_index=1) == (
        "[DRY RUN] Would execute 2 steps:\n\n  1. b  [shell]\n     run: y\n  2. c  [shell]\n     run: z\n"
    )


def test_unknown_commands_are_reported_against_the_given_registry(tmp_path: Path) -> None:
    doc = _doc(tmp_path, "steps:\n  - id: a\n    pipeline: exec --shell x | mine\n")
    assert "     pipeline: exec --shell x | mine\n" in plan_dry_run(doc, {}, {"exec", "mine"})
    with pytest.raises(LobsterRuntimeError, match="^Workflow step a pipeline references unknown command: mine$"):
        plan_dry_run(doc, {}, COMMANDS)


# --- pipelines -------------------------------------------------------------------------------------


def test_pipeline_plan_lists_positionals_then_flags() -> None:
    stages = parse_pipeline("exec --json=true a --shell 'echo [1]' b --x= --y | where a=1 | pick")
    assert plan_pipeline_dry_run(stages, COMMANDS) == (
        "[DRY RUN] Pipeline (3 stages):\n"
        "  1. exec  args: a, b, json=true, shell=echo [1], x=, y=true\n"
        "  2. where  args: a=1\n"
        "  3. pick\n"
    )


def test_c36_pipeline_plan() -> None:
    stages = parse_pipeline('exec --json "echo [1,2,3]" | where active=true | table')
    assert plan_pipeline_dry_run(stages, COMMANDS) == (
        "[DRY RUN] Pipeline (3 stages):\n  1. exec  args: json=echo [1,2,3]\n  2. where  args: active=true\n  3. table\n"
    )


def test_a_single_stage_is_a_stage() -> None:
    assert plan_pipeline_dry_run(parse_pipeline("pick"), COMMANDS) == "[DRY RUN] Pipeline (1 stage):\n  1. pick\n"


def test_pipeline_plans_check_every_name_first() -> None:
    with pytest.raises(LobsterRuntimeError, match="^Unknown command: nope$"):
        plan_pipeline_dry_run(parse_pipeline("pick | nope | nope2"), COMMANDS)


# --- against the official runtime ------------------------------------------------------------------


def _official_bin() -> str | None:
    for candidate in (os.environ.get("LOBSTER_OFFICIAL_BIN", ""), "/work/official-lobster/node_modules/.bin/lobster"):
        if candidate and Path(candidate).exists() and shutil.which("node"):
            return candidate
    return None


@pytest.mark.official
def test_plans_match_the_official_runtime(tmp_path: Path) -> None:
    official = _official_bin()
    if official is None:
        pytest.skip("the official Lobster runtime (Node + @clawdbot/lobster) is not installed")
    # Every other case keeps this fast (Node starts slowly); all of them were produced this way.
    cases = [*PLANS, *((name, workflow, f"Error: {message}\n") for name, workflow, message in ERRORS)][::2]

    def official_stderr(case: tuple[str, str, str]) -> str:
        folder = tmp_path / case[0]
        folder.mkdir()
        (folder / "wf.lobster").write_text(case[1])
        proc = subprocess.run(
            [official, "run", "--dry-run", str(folder / "wf.lobster")],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "LOBSTER_STATE_DIR": str(folder / "state")},
        )
        assert proc.stdout == ""
        assert not (folder / "state").exists()
        return proc.stderr

    with ThreadPoolExecutor(4) as pool:
        theirs = list(pool.map(official_stderr, cases))
    assert theirs == [expected for _, _, expected in cases]


@pytest.mark.official
def test_pipeline_plans_match_the_official_runtime() -> None:
    official = _official_bin()
    if official is None:
        pytest.skip("the official Lobster runtime (Node + @clawdbot/lobster) is not installed")
    text = "exec --json=true a --shell 'echo [1]' b --x= --y | where a=1 | pick"
    proc = subprocess.run([official, "run", "--dry-run", text], capture_output=True, text=True, timeout=60)
    assert proc.stderr == plan_pipeline_dry_run(parse_pipeline(text), COMMANDS)
