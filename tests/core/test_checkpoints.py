"""The inbox's scan (R-STATE-34): rows read once, details on first use, rescans read only changes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from lobster_tui.core import checkpoints
from lobster_tui.core.checkpoints import (
    BrokenCheckpoint,
    Checkpoint,
    CheckpointScanner,
    _approval_prompt,
    load_checkpoint,
    scan_checkpoints,
)
from lobster_tui.core.runner import RunContext, run_pipeline, run_workflow
from lobster_tui.core.state import StateStore
from lobster_tui.core.tokens import decode_token
from lobster_tui.core.workflow.executor import build_approval_request

ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/nonexistent"}
GATE = """\
name: {name}
steps:
  - id: build
    run: echo built
  - id: gate
    approval:
      prompt: Ship {name}?
      items: [1, 2]
"""
ASK = """\
name: asker
steps:
  - id: ask
    input:
      prompt: Which one?
      responseSchema: {type: object, properties: {pick: {type: string}}}
      defaults: {pick: a}
"""
PREVIEW_PIPELINE = "exec --json --shell 'echo [{\\\"a\\\":1}]' | approve --preview-from-stdin --prompt 'Go on?'"


def _context(state: StateStore, cwd: Path) -> RunContext:
    return RunContext(state=state, env=ENV, cwd=str(cwd), mode="tool", timeout_ms=None, max_stdout_bytes=None)


@pytest.fixture
def store(tmp_path: Path) -> StateStore:
    return StateStore(tmp_path / "state")


def _workflow(store: StateStore, tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.lobster"
    path.write_text(text, encoding="utf-8")
    outcome = run_workflow(str(path), _context(store, tmp_path))
    assert outcome.status in ("needs_approval", "needs_input"), outcome.envelope()
    return path


def _by_workflow(entries: list[Any]) -> dict[str, Checkpoint]:
    return {e.workflow: e for e in entries if isinstance(e, Checkpoint)}


def test_rows_and_details(store: StateStore, tmp_path: Path) -> None:
    _workflow(store, tmp_path, "alpha", GATE.format(name="alpha"))
    _workflow(store, tmp_path, "asker", ASK)
    assert run_pipeline(PREVIEW_PIPELINE, _context(store, tmp_path)).status == "needs_approval"
    found = scan_checkpoints(store)
    assert len(found) == 3 and all(isinstance(e, Checkpoint) for e in found)
    rows = _by_workflow(found)

    gate = rows["alpha"]
    assert (gate.kind, gate.source, gate.step, gate.prompt) == ("approval", "workflow", "gate", "Ship alpha?")
    assert gate.approval_id and gate.short_id == gate.approval_id
    assert gate.path == store.root / f"{gate.state_key}.json"
    # Details, computed on first use from the bytes the scan read.
    assert decode_token(gate.token).state_key == gate.state_key
    assert gate.items == [1, 2]
    assert [(r.step_id, r.stdout) for r in gate.steps_before] == [("build", "built\n"), ("gate", None)]
    assert (gate.initiated_by, gate.required_approver, gate.require_different_approver) == (None, None, False)

    ask = rows["asker"]
    assert (ask.kind, ask.prompt, ask.has_defaults, ask.defaults) == ("input", "Which one?", True, {"pick": "a"})
    assert ask.response_schema["properties"] == {"pick": {"type": "string"}}

    [pipe] = [e for e in found if isinstance(e, Checkpoint) and e.source == "pipeline"]
    assert (pipe.kind, pipe.step, pipe.prompt) == ("approval", "approve", "Go on?")
    assert pipe.workflow.startswith("exec --json") and pipe.workflow.endswith("--prompt 'Go on?'")
    assert pipe.items == [{"a": 1}] and pipe.preview and '"a": 1' in pipe.preview
    assert [r.step_id for r in pipe.steps_before] == ["1:exec"]
    # Newest first.
    assert [e.created_at for e in found] == sorted((e.created_at for e in found), reverse=True)


def test_details_come_from_the_bytes_scanned(store: StateStore, tmp_path: Path) -> None:
    _workflow(store, tmp_path, "alpha", GATE.format(name="alpha"))
    [gate] = scan_checkpoints(store)
    data = json.loads(gate.path.read_text())
    data["steps"]["build"]["stdout"] = "changed after the scan\n"
    gate.path.write_text(json.dumps(data))
    # A reviewer looking at a checkpoint sees what was listed, not a file changing under them.
    assert [r.stdout for r in gate.steps_before] == ["built\n", None]


def test_copy_with_and_equality(store: StateStore, tmp_path: Path) -> None:
    _workflow(store, tmp_path, "alpha", GATE.format(name="alpha"))
    [gate] = scan_checkpoints(store)
    [again] = scan_checkpoints(store)
    assert gate == again and gate is not again
    bare = gate.copy_with(approval_id=None, items=["x"])
    assert bare.approval_id is None and bare.items == ["x"] and gate.items == [1, 2]
    assert bare.token == gate.token and bare != gate
    with pytest.raises(TypeError):
        gate.copy_with(nonsense=1)
    made = Checkpoint(state_key="workflow_resume_x", path="/tmp/x.json", kind="input", source="workflow",
                      workflow="w", step="s", prompt="p", created_at=gate.created_at, defaults={"a": 1})
    assert made.defaults == {"a": 1} and made.items == [] and made.token == ""


class _CountingReads:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.names: list[str] = []
        real = checkpoints._read_bytes

        def counting(path: str, dir_fd: int | None = None) -> Any:
            self.names.append(os.path.basename(path))
            return real(path, dir_fd)

        monkeypatch.setattr(checkpoints, "_read_bytes", counting)

    def take(self) -> list[str]:
        names, self.names = self.names, []
        return sorted(names)


def test_rescan_reads_only_what_changed(store: StateStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alpha_file = _workflow(store, tmp_path, "alpha", GATE.format(name="alpha"))
    _workflow(store, tmp_path, "beta", GATE.format(name="beta"))
    reads = _CountingReads(monkeypatch)
    scanner = CheckpointScanner(store)
    first = scanner.scan()
    assert len(reads.take()) == 4  # two states, two approval indexes
    second = scanner.scan()
    assert reads.take() == [] and all(a is b for a, b in zip(first, second, strict=True))

    # A state rewritten (atomically, as the runtimes do): only that file is read again.
    beta = _by_workflow(second)["beta"]
    data = json.loads(beta.path.read_text())
    data["createdAt"] = "2001-01-01T00:00:00.000Z"
    temp = beta.path.with_suffix(".tmp")
    temp.write_text(json.dumps(data))
    os.replace(temp, beta.path)
    third = scanner.scan()
    assert reads.take() == [beta.path.name]
    assert _by_workflow(third)["beta"].created_at.year == 2001
    assert _by_workflow(third)["alpha"] is _by_workflow(second)["alpha"]

    # A new approval index for a state: its row gets the new id (the state is read again).
    alpha = _by_workflow(third)["alpha"]
    (store.root / f"approval_{alpha.approval_id}.json").unlink()
    (store.root / "approval_0000beef.json").write_text(json.dumps({"stateKey": alpha.state_key}))
    fourth = scanner.scan()
    assert reads.take() == ["approval_0000beef.json", alpha.path.name]
    assert _by_workflow(fourth)["alpha"].approval_id == "0000beef"

    # The workflow file changed: its checkpoints are rebuilt (new name), the others kept.
    alpha_file.write_text(GATE.format(name="alpha").replace("name: alpha", "name: alpha-2"), encoding="utf-8")
    os.utime(alpha_file, ns=(1, 1))  # a different mtime even on a coarse clock
    fifth = scanner.scan()
    assert reads.take() == [alpha.path.name]
    assert set(_by_workflow(fifth)) == {"alpha-2", "beta"}

    # A decided checkpoint disappears; a broken file is listed as broken.
    _by_workflow(fifth)["beta"].path.unlink()
    (store.root / "workflow_resume_broken.json").write_text("{not json")
    sixth = scanner.scan()
    assert reads.take() == ["workflow_resume_broken.json"]
    assert sorted(type(e).__name__ for e in sixth) == ["BrokenCheckpoint", "Checkpoint"]
    [broken] = [e for e in sixth if isinstance(e, BrokenCheckpoint)]
    assert broken.reason.startswith("not valid JSON")


def test_load_checkpoint(store: StateStore, tmp_path: Path) -> None:
    _workflow(store, tmp_path, "alpha", GATE.format(name="alpha"))
    [gate] = scan_checkpoints(store)
    loaded = load_checkpoint(gate.path)
    assert isinstance(loaded, Checkpoint) and loaded.prompt == gate.prompt and loaded.token == gate.token
    assert load_checkpoint(store.root / "workflow_resume_gone.json") is None


@pytest.mark.parametrize(
    ("step", "result"),
    [
        ({"id": "g", "approval": True}, {}),
        ({"id": "g", "approval": "required"}, {}),
        ({"id": "g", "approval": "Ship?"}, {}),
        ({"id": "g", "approval": "  "}, {}),
        ({"id": "g", "approval": {"prompt": "Configured?"}}, {"json": [1]}),
        ({"id": "g", "approval": {"prompt": ""}}, {}),
        ({"id": "g", "approval": {"prompt": "Configured?"}}, {"json": {"prompt": "From output?"}}),
        ({"id": "g", "approval": True}, {"json": {"requiresApproval": {"prompt": "Nested?"}, "prompt": "Outer?"}}),
        ({"id": "g", "approval": True}, {"json": {"requiresApproval": {"prompt": ""}, "prompt": "Outer?"}}),
        ({"id": "g", "approval": True}, {"json": {"prompt": 5}}),
    ],
)
def test_row_prompt_is_the_approval_requests(step: dict[str, Any], result: dict[str, Any]) -> None:
    request, _ = build_approval_request(step, result, {})
    assert (_approval_prompt(step, result) or f"Approve {step['id']}?") == request["prompt"]
