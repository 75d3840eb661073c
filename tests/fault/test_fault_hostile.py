"""Hostile input: tokens, approval ids, answers, args, workflow files, pipelines and state files.

Whatever comes in, the runtime answers with one error envelope (or a legitimate result), never a
traceback, never an "internal error" from the CLI's last guard, and never reads or writes outside
the state directory (audit hook, canary states outside whose resume would leave a mark, and a
before/after listing of the outside tree). ``scan_checkpoints`` turns every bad file into a
``BrokenCheckpoint`` instead of raising. Most inputs go through the CLI in-process (fast); the worst
also through the real ``lobster`` executable, where a traceback would reach stderr.
"""

from __future__ import annotations

import base64
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from lobster_tui.core.checkpoints import BrokenCheckpoint, Checkpoint, scan_checkpoints
from lobster_tui.core.state import StateStore
from lobster_tui.core.tokens import encode_token
from tests.fault.faultlib import BASE_SEED, run_cli, scaled, tally
from tests.fault.hostile import Sandbox, check_envelope, check_human, make_sandbox

_SETTINGS = dict(
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
    derandomize=False,
)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _raw_token(payload: dict[str, Any]) -> str:
    return _b64(json.dumps(payload).encode("utf-8", "surrogatepass"))


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return make_sandbox(tmp_path, monkeypatch)


def _halt(box: Sandbox, pipeline: str) -> dict[str, Any]:
    envelope = check_envelope(box.cli("run", "--mode", "tool", pipeline), pipeline)
    assert envelope["ok"] and envelope["status"] in ("needs_approval", "needs_input"), envelope
    return envelope


def _pending(box: Sandbox) -> set[str]:
    return {c.state_key for c in scan_checkpoints(StateStore(box.state)) if isinstance(c, Checkpoint)}


INTENTS = (("--approve", "yes"), ("--approve", "no"), ("--cancel",), ("--response-json", "{}"))


def test_hostile_tokens_and_approval_ids_decide_nothing(box: Sandbox) -> None:
    with box:
        real = _halt(box, "exec --json --shell 'echo [1]' | approve --prompt real")["requiresApproval"]
        real_key = json.loads(base64.urlsafe_b64decode(real["resumeToken"] + "==="))["stateKey"]
        check_envelope(box.cli("run", "--mode", "tool", "exec --json --shell 'echo [1]' | state.set mykey"), "state.set")
        state_before = sorted(p.name for p in box.state.iterdir() if p.name not in ("runs", "audit"))
        outside = str(box.outside)
        keys = [
            "../outside/canary", "../../outside/canary", "../outside/pipeline_resume_canary", f"{outside}/canary",
            f"{outside}/pipeline_resume_canary.json", "/etc/passwd", "../../../../../../../../etc/passwd",
            "pipeline_resume_../../outside/canary", "workflow_resume_../../outside/canary",
            "workflow-resume_x/../../outside/canary", "pipeline_resume_/../../outside/canary",
            f"approval_{real['approvalId']}", f"approval_{real['approvalId']}.json", "mykey", "MyKey", "state/../mykey",
            "runs", "runs/../mykey", "x" * 100_000, "pipeline_resume_" + "a" * 300, "workflow_resume_" + "b" * 5000,
            "\udcff\udcfe", "é中文🦞", "\x00", "pipeline_resume_\x00", "_", "", " ", ".", "..", "./.", "-",
            real_key + "/..", real_key + "/../x",
        ]
        tokens = [encode_token(kind, key) if "\udcff" not in key else _raw_token(
            {"protocolVersion": 1, "v": 1, "kind": kind, "stateKey": key})
            for key in keys for kind in ("pipeline-resume", "workflow-file")]
        tokens += [
            "", "!!!!", "=", "a" * 200_000, _b64(b"\xff\xfe\xfd"), _b64(b"[" * 100_000 + b"]" * 100_000),
            _b64(b"[]"), _b64(b"null"), _b64(b'"x"'), _b64(json.dumps({"protocolVersion": True, "v": 1}).encode()),
            _raw_token({"protocolVersion": 1, "v": 1, "kind": "workflow-file", "filePath": f"{outside}/canary.lobster",
                        "resumeAtIndex": 0, "steps": {}, "args": {}}),
            _raw_token({"protocolVersion": 1, "v": 1, "kind": "pipeline-resume", "stateKey": ["../x"]}),
            _raw_token({"protocolVersion": 1, "v": 1, "kind": "pipeline-resume", "stateKey": {"a": 1}}),
            "\udcff" * 10, "tok\x00en", "é" * 1000,
        ]
        ids = ["../../outside/cafef00d", "cafef00d", "CAFEF00D", real["approvalId"].upper(), "a" * 10_000, "\x00",
               "approval_", "ÿ", "\udcff", "deadbeef" * 3, "0", "-", "../" * 50, f"{outside}/approval_cafef00d"]
        tried = 0
        for token in tokens:
            for intent in INTENTS:
                envelope = check_envelope(box.cli("resume", "--token", token, *intent), (token[:80], intent))
                tried += 1
                legacy_cancel = intent == ("--cancel",) and envelope.get("status") == "cancelled"
                assert not envelope["ok"] or legacy_cancel, (token[:80], intent, envelope)
        for approval_id in ids:
            for intent in INTENTS:
                envelope = check_envelope(box.cli("resume", "--id", approval_id, *intent), (approval_id[:80], intent))
                tried += 1
                assert not envelope["ok"], (approval_id[:80], intent, envelope)
        tally("hostile inputs tried (tokens, ids)", tried)
        # Nothing was decided or deleted: the real checkpoint, its index and the user key are intact.
        assert sorted(p.name for p in box.state.iterdir() if p.name not in ("runs", "audit")) == state_before
        assert real_key in _pending(box)
        assert json.loads((box.state / "mykey.json").read_text()) == 1
        box.assert_untouched()
        # ... and the real checkpoint still works.
        assert check_envelope(box.cli("resume", "--id", real["approvalId"], "--approve", "yes"), "real")["status"] == "ok"


def _deep(depth: int, open_: str = "[", close: str = "]") -> str:
    return open_ * depth + close * depth


ANSWERS = [
    _deep(100_000), _deep(60_000), _deep(3000), _deep(990), _deep(500), '{"a":' * 5000 + "1" + "}" * 5000,
    json.dumps({"big": "x" * 20_000_000}), json.dumps(["y"] * 200_000), "NaN", "Infinity", "-Infinity", "1e400",
    "9" * 5000, "-" + "9" * 100_000, '"\\ud800"', '{"a": "\\ud800\\udfff\\udc00"}', '{"\\u0000": "\\u0000"}', "",
    "{", "}", "[1,]", "\x00", "\udcff\udcfe", '{"__proto__": {"polluted": 1}, "constructor": {}}', "null", "true", "0",
    '{"a": 1, "a": 2}', "\ufeff{}", " " * 100_000 + "{}",
]


def test_hostile_answers_are_refused_or_taken_once(box: Sandbox) -> None:
    effects = box.work / "effects.txt"
    schema = json.dumps({"type": "object"})
    sources = {
        "ask": f"ask --prompt q --schema '{schema}' | exec --shell 'echo hit >> {effects}'",
        "approve": f"exec --json --shell 'echo [1]' | approve --prompt p | exec --shell 'echo hit >> {effects}'",
    }
    with box:
        tried = 0
        for name, pipeline in sources.items():
            halted = _halt(box, pipeline)
            for answer in ANSWERS:
                request = halted["requiresApproval"] or halted["requiresInput"]
                result = box.cli("resume", "--token", request["resumeToken"], "--response-json", answer)
                envelope = check_envelope(result, (name, answer[:60]))
                tried += 1
                if envelope["ok"]:
                    assert name == "ask", envelope
                    halted = _halt(box, pipeline)
        tally("hostile inputs tried (answers)", tried)
        box.assert_untouched()


ARGS_JSON = ANSWERS + [
    json.dumps({"x": "a\u0000b"}), json.dumps({"x=y": 1, "": 2, "LOBSTER_STATE_DIR": "/tmp"}),
    json.dumps({"x": "$(touch pwned) ${x} `id`"}), json.dumps({"é": "\udcff"}, ensure_ascii=False),
    json.dumps({str(i): i for i in range(2000)}), json.dumps([1, 2, 3]), json.dumps({"x": {"y": [{"z": None}]}}),
]

ARGS_WORKFLOW = """\
args:
  x: {default: a}
steps:
  - id: s
    run: echo "${x}" "$LOBSTER_ARG_X" "$LOBSTER_ARGS_JSON"
    env: {FROM_ARG: "${x}"}
  - id: t
    pipeline: "exec --json --shell 'echo [1]' | where x==${x}"
"""


def test_hostile_args_json(box: Sandbox) -> None:
    workflow = box.work / "args.lobster"
    workflow.write_text(ARGS_WORKFLOW)
    with box:
        for text in ARGS_JSON:
            check_envelope(box.cli("run", "--mode", "tool", str(workflow), "--args-json", text), text[:60])
            check_human(box.cli("graph", str(workflow), "--args-json", text), text[:60])
            check_human(box.cli("run", "--dry-run", str(workflow), "--args-json", text), text[:60])
        tally("hostile inputs tried (args-json)", 3 * len(ARGS_JSON))
        box.assert_untouched()


# -- hostile state files ---------------------------------------------------------------------------

_VALID_PIPELINE = {"pipeline": [{"name": "approve", "args": {"_": []}, "raw": "approve"}], "resumeAtIndex": 1,
                   "items": [], "haltType": "approval_request", "prompt": "p"}


def _plant(box: Sandbox) -> list[str]:
    """Write every kind of bad entry into the state directory; returns the keys to resume."""
    root = box.state
    root.mkdir(exist_ok=True)
    out = box.outside
    keys: list[str] = []

    def put(name: str, data: bytes | str) -> None:
        path = root / name
        path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
        keys.append(name[:-5])

    valid = json.dumps(_VALID_PIPELINE)
    put("pipeline_resume_truncated.json", valid[: len(valid) // 2])
    put("pipeline_resume_empty.json", b"")
    put("pipeline_resume_binary.json", bytes(range(256)) * 4)
    put("pipeline_resume_bom.json", "\ufeff" + valid)
    put("pipeline_resume_nul.json", valid.replace('"p"', '"p\\u0000"') + "\x00")
    put("pipeline_resume_latin1.json", valid.replace('"p"', '"caf\xe9"').encode("latin-1"))
    put("pipeline_resume_deep.json", _deep(100_000))
    put("pipeline_resume_deepitems.json", valid.replace('"items": []', '"items": [' + _deep(900) + "]"))
    put("workflow_resume_deep.json", '{"filePath": "/x.lobster", "resumeAtIndex": 0, "steps": {"a": ' + '{"b":' * 5000 + "1" + "}" * 5001 + ', "args": {}}')
    put("pipeline_resume_huge.json", valid[:-1] + ', "pad": "' + "z" * (33 * 1024 * 1024) + '"}')
    put("pipeline_resume_naive_time.json", valid[:-1] + ', "createdAt": "2020-01-01T00:00:00"}')
    put("pipeline_resume_bad_time.json", valid[:-1] + ', "createdAt": "9999-99-99T99:99:99.999Z"}')
    put("pipeline_resume_surrogate.json", valid.replace('"p"', '"\\ud800"'))
    for index, wrong in enumerate([
        {"pipeline": "x"}, {"pipeline": [], "resumeAtIndex": -1, "items": []}, {**_VALID_PIPELINE, "resumeAtIndex": 1e309},
        {**_VALID_PIPELINE, "resumeAtIndex": True}, {**_VALID_PIPELINE, "items": {}}, {**_VALID_PIPELINE, "haltType": 5},
        {**_VALID_PIPELINE, "haltType": "input_request"}, {**_VALID_PIPELINE, "pipeline": [{"name": "", "args": [], "raw": 1}]},
        {**_VALID_PIPELINE, "supersededResumeStateKeys": ["../outside/mykey", "approval_cafef00d", 5]},
        {**_VALID_PIPELINE, "resumeMode": "same_stage", "commandInput": {"pending": "x"}},
        [1, 2], "string", 42, None, {"type": "lobster.consumed-resume-state.v1"},
    ]):
        put(f"pipeline_resume_wrong{index}.json", json.dumps(wrong))
    for index, wrong in enumerate([
        {"filePath": 5}, {"filePath": "", "resumeAtIndex": 0, "steps": {}, "args": {}},
        {"filePath": str(out / "canary.lobster"), "resumeAtIndex": "0", "steps": [], "args": {}},
        {"filePath": "/dev/zero", "resumeAtIndex": 0, "steps": {}, "args": {}, "approvalStepId": "a"},
        {"filePath": str(box.state), "resumeAtIndex": 0, "steps": {}, "args": {}, "approvalStepId": "a"},
        {"filePath": str(box.state / "fifo.lobster"), "resumeAtIndex": 0, "steps": {}, "args": {}, "approvalStepId": "a"},
        {"filePath": "/x.lobster", "resumeAtIndex": 0, "steps": {"a": 1}, "args": {}, "approvalStepId": "a", "inputStepId": "b"},
        {"filePath": "/x.lobster", "resumeAtIndex": 0, "steps": {}, "args": {}, "inputKind": "pipeline_command"},
        {"filePath": "/x.lobster", "resumeAtIndex": 1e300, "steps": {"__proto__": {}}, "args": {"x": "\udcff"}},
    ]):
        put(f"workflow_resume_wrong{index}.json", json.dumps(wrong))
    os.mkfifo(root / "fifo.lobster")
    # Entries that are not regular files.
    for name in ("pipeline_resume_fifo.json", "workflow_resume_fifo.json", "workflow-resume_fifo.json", "approval_0badf00d.json"):
        os.mkfifo(root / name)
    keys += ["pipeline_resume_fifo", "workflow_resume_fifo", "workflow-resume_fifo"]
    for name in ("pipeline_resume_dir.json", "workflow_resume_dir.json", "approval_d1d1d1d1.json", "mykey2.json"):
        (root / name).mkdir()
        (root / name / "inner.json").write_text(valid)
    keys += ["pipeline_resume_dir", "workflow_resume_dir"]
    # Symlinks out of the directory, to attractive canaries.
    for name, target in (
        ("pipeline_resume_link.json", out / "canary.json"),
        ("workflow_resume_link.json", out / "canary.json"),
        ("pipeline_resume_dirlink.json", out),
        ("pipeline_resume_dangling.json", out / "nothing.json"),
        ("approval_cafef00d.json", out / "approval_cafef00d.json"),
        ("approval_abcdef01.json", root / "approval_abcdef01.json"),  # a loop
        ("mykey.json", out / "mykey.json"),
    ):
        os.symlink(target, root / name)
    keys += ["pipeline_resume_link", "workflow_resume_link", "pipeline_resume_dirlink", "pipeline_resume_dangling"]
    (root / "approval_12345678.json").write_text(json.dumps({"stateKey": "../outside/pipeline_resume_canary"}))
    (root / "approval_87654321.json").write_text(json.dumps({"stateKey": str(out / "pipeline_resume_canary")}))
    (root / "approval_aaaaaaaa.json").write_text(json.dumps({"stateKey": "pipeline_resume_link"}))
    (root / "approval_bbbbbbbb.json").write_text(_deep(100_000))
    (root / "approval_cccccccc.json").write_text(json.dumps({"stateKey": ["x"]}))
    # Locks that are not locks: a file, a symlink out, an ownerless old directory, a FIFO owner.
    (root / "pipeline_resume_wrong0.json.lock").write_text("not a directory")
    os.symlink(out, root / "pipeline_resume_wrong1.json.lock")
    (root / "pipeline_resume_wrong2.json.lock").mkdir()
    (root / "pipeline_resume_wrong3.json.lock").mkdir()
    os.mkfifo(root / "pipeline_resume_wrong3.json.lock" / "owner")
    (root / "pipeline_resume_wrong4.json.lock").mkdir()
    os.symlink(out / "mykey.json", root / "pipeline_resume_wrong4.json.lock" / "owner")
    past = time.time() - 60
    for name in ("pipeline_resume_wrong2.json.lock", "pipeline_resume_wrong3.json.lock", "pipeline_resume_wrong4.json.lock"):
        os.utime(root / name, (past, past))
    # Temp and release leftovers named like the runtime's own.
    (root / ".pipeline_resume_x.json.0123456789ab.tmp").write_text(valid[:10])
    (root / "pipeline_resume_x.json.lock.release-1-0123456789ab").mkdir()
    return keys


def test_hostile_state_files_are_broken_checkpoints_not_crashes(box: Sandbox) -> None:
    keys = _plant(box)
    with box:
        store = StateStore(box.state)
        found = scan_checkpoints(store)
        listed = {c.state_key: c for c in found}
        for c in found:
            if isinstance(c, Checkpoint):
                assert c.prompt != "CANARY-PROMPT"
        for name in ("pipeline_resume_truncated", "pipeline_resume_deep", "pipeline_resume_huge", "pipeline_resume_fifo",
                     "pipeline_resume_dir", "pipeline_resume_link", "workflow_resume_link", "pipeline_resume_binary"):
            assert isinstance(listed.get(name), BrokenCheckpoint), (name, listed.get(name))
        tried = 0
        for key in keys:
            kind = "pipeline-resume" if key.startswith("pipeline_") else "workflow-file"
            token = encode_token(kind, key)
            for intent in INTENTS:
                check_envelope(box.cli("resume", "--token", token, *intent), (key, intent))
                tried += 1
        for approval_id in ("0badf00d", "d1d1d1d1", "cafef00d", "abcdef01", "12345678", "87654321", "aaaaaaaa",
                            "bbbbbbbb", "cccccccc"):
            for intent in INTENTS:
                check_envelope(box.cli("resume", "--id", approval_id, *intent), (approval_id, intent))
                tried += 1
        check_human(box.cli("runs"), "runs")
        check_envelope(box.cli("run", "--mode", "tool", "exec --json --shell 'echo [1]' | state.get mykey"), "state.get link")
        check_envelope(box.cli("run", "--mode", "tool", "exec --json --shell 'echo [1]' | state.set mykey2"), "state.set dir")
        check_envelope(box.cli("doctor"), "doctor")
        tally("hostile inputs tried (state files)", tried + len(keys))
        # Listing still works after all that, and the directory still works for real checkpoints.
        scan_checkpoints(store)
        real = _halt(box, "exec --json --shell 'echo [1]' | approve --prompt real")["requiresApproval"]
        assert check_envelope(box.cli("resume", "--id", real["approvalId"], "--approve", "yes"), "real")["status"] == "ok"
        box.assert_untouched()


def test_symlinked_runs_and_audit_folders_do_not_lead_writes_outside(box: Sandbox) -> None:
    box.state.mkdir()
    os.symlink(box.outside, box.state / "runs")
    os.symlink(box.outside, box.state / "audit")
    with box:
        halted = _halt(box, "exec --json --shell 'echo [1]' | approve --prompt p")["requiresApproval"]
        check_envelope(box.cli("resume", "--id", halted["approvalId"], "--approve", "yes"), "resume")
        box.assert_untouched()


# -- fuzzed documents, pipelines and bytes -------------------------------------------------------------

_WORDS = ["$s.json", "$s.stdout", "$a.approved", "${x}", "${missing}", "true", "yes", "on", "null", "1e999", "../..",
          "/etc/passwd", "$LOBSTER_STATE_DIR", "__proto__", "constructor", "x\x00y", "é", "\udcff", "-", "a b"]
_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 40), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(_WORDS), st.text(max_size=12),
)
_json = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.one_of(st.sampled_from(_WORDS), st.text(max_size=6)), inner, max_size=4)),
    max_leaves=12)
_STEP_KEYS = ["id", "run", "command", "pipeline", "approval", "input", "when", "condition", "stdin", "env", "cwd",
              "timeout_ms", "retry", "on_error", "for_each", "steps", "parallel", "workflow", "workflow_args",
              "item_var", "index_var", "batch_size", "pause_ms", "branches", "wait", "prompt", "responseSchema"]
_step = st.dictionaries(st.sampled_from(_STEP_KEYS), st.one_of(_json, st.sampled_from(["s", "a", "b", "echo hi", "stop"])),
                        max_size=6)
_doc = st.fixed_dictionaries(
    {"steps": st.lists(st.one_of(_step, _json), max_size=5)},
    optional={"name": _json, "args": st.one_of(_json, st.dictionaries(st.sampled_from(["x", "y"]), _json)),
              "env": _json, "cwd": _json, "description": _json},
)


def _dump(doc: Any, style: str) -> bytes:
    if style == "json":
        return json.dumps(doc, ensure_ascii=False, allow_nan=True).encode("utf-8", "surrogatepass")
    try:
        return yaml.safe_dump(doc, allow_unicode=True).encode("utf-8", "surrogatepass")
    except yaml.YAMLError:
        return b"steps: []"


@seed(BASE_SEED)
@settings(max_examples=scaled(40), **_SETTINGS)
@given(doc=_doc, style=st.sampled_from(["json", "yaml", "lobster"]))
def test_fuzzed_workflow_documents(doc: Any, style: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    _run_document(tmp_path_factory, _dump(doc, "json" if style == "json" else "yaml"), style)


@seed(BASE_SEED + 1)
@settings(max_examples=scaled(25), **_SETTINGS)
@given(data=st.one_of(st.binary(max_size=300), st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass"))),
       style=st.sampled_from(["json", "yaml", "lobster"]))
def test_random_bytes_as_workflow_files(data: bytes, style: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    _run_document(tmp_path_factory, data, style)


_SANDBOXES: dict[str, Sandbox] = {}


def _shared_box(tmp_path_factory: pytest.TempPathFactory, name: str) -> Sandbox:
    """One sandbox per fuzz test (hypothesis examples share it; hostile state accumulates)."""
    if name not in _SANDBOXES:
        mp = pytest.MonkeyPatch()
        _SANDBOXES[name] = make_sandbox(tmp_path_factory.mktemp(name), mp, echo_shell=True)
        _SANDBOXES[name]._monkeypatch = mp  # type: ignore[attr-defined]
    return _SANDBOXES[name]


@pytest.fixture(autouse=True)
def _release_shared_boxes() -> Any:
    yield
    for name, sandbox in list(_SANDBOXES.items()):
        try:
            if hasattr(sandbox, "before"):
                sandbox.__exit__(None, None, None)
                sandbox.assert_untouched()
        finally:
            sandbox._monkeypatch.undo()  # type: ignore[attr-defined]
            del _SANDBOXES[name]


def _run_document(tmp_path_factory: pytest.TempPathFactory, data: bytes, style: str) -> None:
    box = _shared_box(tmp_path_factory, "docs")
    if not hasattr(box, "before"):
        box.__enter__()
    path = box.work / f"wf.{style}"
    path.write_bytes(data)
    try:
        check_envelope(box.cli("run", "--mode", "tool", str(path)), data[:200])
        check_human(box.cli("run", str(path)), data[:200])
        check_human(box.cli("graph", str(path), "--format", "ascii"), data[:200])
        check_human(box.cli("run", "--dry-run", str(path)), data[:200])
        check_envelope(box.cli("run", "--mode", "tool", "--dry-run", str(path)), data[:200])
    finally:
        tally("hostile inputs tried (workflow files)", 1)
    assert box.violations == [], box.violations


# The renderers json and table are left out: in tool mode they still print before the envelope
# (see test_tool_mode_renderers_print_only_the_envelope below).
_COMMANDS = ["exec", "head", "pick", "where", "approve", "ask", "state.get", "state.set", "diff.last",
             "map", "sort", "dedupe", "groupBy", "template", "commands.list", "workflows.list", "nosuch"]
_FLAGS = ["--json", "--shell", "--prompt", "--schema", "--emit", "--preview-from-stdin", "--limit", "--stdin", "--key",
          "--by", "--text", "--file", "--subject-from-stdin", "--", "-n", "--=", "--x=y"]
_ARG_WORDS = ["'echo [1,2]'", "'echo {\"a\":1}'", "\"[1]\"", "a==1", "a>0", "name", "'{\"type\":\"object\"}'",
              "../../outside/x", "'unterminated", "\"also", "\\", "''", "$x", "1", "-1", "99999999999999999999"]
_token = st.one_of(st.sampled_from(_COMMANDS), st.sampled_from(_FLAGS), st.sampled_from(_ARG_WORDS), st.text(max_size=8))
_stage = st.lists(_token, min_size=1, max_size=5).map(" ".join)
_pipeline = st.lists(_stage, min_size=1, max_size=4).map(lambda stages: " | ".join(stages))


@seed(BASE_SEED + 2)
@settings(max_examples=scaled(80), **_SETTINGS)
@given(text=st.one_of(_pipeline, st.text(max_size=60)))
def test_fuzzed_inline_pipelines(text: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    box = _shared_box(tmp_path_factory, "pipelines")
    if not hasattr(box, "before"):
        box.__enter__()
    envelope = check_envelope(box.cli("run", "--mode", "tool", text), text)
    check_human(box.cli("run", text), text)
    tally("hostile inputs tried (pipelines)", 1)
    if envelope["ok"] and envelope["status"] in ("needs_approval", "needs_input"):
        request = envelope["requiresApproval"] or envelope["requiresInput"]
        check_envelope(box.cli("resume", "--token", request["resumeToken"], "--cancel"), text)
    assert box.violations == [], box.violations


def test_tool_mode_renderers_print_only_the_envelope(box: Sandbox) -> None:
    for pipeline in ("json", "exec --json --shell 'echo [1]' | table"):
        check_envelope(box.cli("run", "--mode", "tool", pipeline), pipeline)


def test_worst_inputs_through_the_real_executable(tmp_path: Path) -> None:
    """The interpreter itself must not print a traceback: bytes argv, deep JSON, lone surrogates."""
    import subprocess
    import sys

    state, work = tmp_path / "state", tmp_path / "work"
    work.mkdir()
    ask = run_cli(state, "run", "--mode", "tool", "ask --prompt q --schema '{\"type\":\"object\"}'", cwd=work)
    token = json.loads(ask.stdout)["requiresInput"]["resumeToken"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOBSTER_")}
    env.update(LOBSTER_STATE_DIR=str(state), PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    cases: list[list[bytes]] = [
        [b"resume", b"--token", token.encode(), b"--response-json", b"[" * 60_000 + b"]" * 60_000],
        [b"resume", b"--token", b"\xff\xfe" * 100, b"--approve", b"yes"],
        [b"resume", b"--token", token.encode(), b"--response-json", b'{"a":"\xff\xfe"}'],
        [b"run", b"--mode", b"tool", b"exec --json --shell 'echo [1]' | state.set k\xff"],
        [b"run", b"--mode", b"tool", b"--args-json", b"{" * 60_000, b"x.lobster"],
        [b"run", b"--mode", b"tool", b"exec --json --shell \"printf '[\\\"\\\\\\\\ud800\\\"]'\""],
        [b"resume", b"--id", b"\xff" * 50, b"--cancel"],
        [b"resume", b"--token", b"a" * 120_000, b"--approve", b"no"],
    ]
    for argv in cases:
        proc = subprocess.run([os.fsencode(sys.executable), b"-m", b"lobster_tui.cli", *argv], capture_output=True,
                              env=env, cwd=work, timeout=60)
        stderr = proc.stderr.decode("utf-8", "replace")
        assert "Traceback" not in stderr, (argv[:3], stderr[-1500:])
        envelope = json.loads(proc.stdout)
        assert envelope["protocolVersion"] == 1, envelope
        if not envelope["ok"]:
            assert not envelope["error"]["message"].startswith("internal error"), (argv[:3], envelope)
    tally("hostile inputs tried (real executable)", len(cases))
