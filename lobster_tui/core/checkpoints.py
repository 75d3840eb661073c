"""Pending checkpoints in a state directory (spec R-STATE-34): what the inbox lists.

A pending checkpoint is a ``pipeline_resume_*``/``workflow_resume_*`` file holding a live resume
state, written by our runner or the official one. Consumed markers, approval indexes, locks and temp
files are never pending; a file that cannot be read or does not have a resume state's shape is
returned as a :class:`BrokenCheckpoint` with the reason, so a reviewer sees it instead of a crash.
"""

from __future__ import annotations

import json
import os
import stat
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from .jsvalues import UNDEFINED
from .state import APPROVAL_PREFIX, StateStore, is_consumed_marker
from .tokens import encode_token, kind_for_state_key

CheckpointKind = Literal["approval", "input"]
_MAX_STATE_BYTES = 32 * 1024 * 1024


class StepRecord(BaseModel):
    """A step (or pipeline stage) that ran before the gate, with what it produced."""

    model_config = ConfigDict(frozen=True)

    step_id: str
    kind: str = "step"
    command: str | None = None
    stdout: str | None = None
    json_value: Any = None
    has_json: bool = False
    status: str = "ok"


class Checkpoint(BaseModel):
    """One pending approval or input request, with everything a reviewer needs to decide."""

    model_config = ConfigDict(frozen=True)

    state_key: str
    path: Path
    kind: CheckpointKind
    source: Literal["pipeline", "workflow"]
    workflow: str
    step: str
    prompt: str
    created_at: datetime
    approval_id: str | None = None
    token: str
    items: list[Any] = []
    preview: str | None = None
    has_subject: bool = False
    subject: Any = None
    response_schema: Any = None
    has_defaults: bool = False
    defaults: Any = None
    initiated_by: str | None = None
    required_approver: str | None = None
    require_different_approver: bool = False
    steps_before: list[StepRecord] = []
    run_id: str | None = None
    file_path: str | None = None
    note: str | None = None

    @property
    def short_id(self) -> str:
        """The approval id, else the first 8 characters of the state key's uuid."""
        if self.approval_id:
            return self.approval_id
        return self.state_key.rsplit("_", 1)[-1][:8]


class BrokenCheckpoint(BaseModel):
    """A resume-state file that cannot be listed as a checkpoint, and why."""

    model_config = ConfigDict(frozen=True)

    state_key: str
    path: Path
    reason: str
    created_at: datetime


def _mtime(path: Path) -> datetime:
    try:
        return datetime.fromtimestamp(os.lstat(path).st_mtime, tz=timezone.utc)
    except OSError:
        return datetime.now(timezone.utc)


def _parse_time(value: Any, path: Path) -> datetime:
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            # A stamp without an offset is UTC; a naive datetime could not be sorted with the rest.
            return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=timezone.utc)
    return _mtime(path)


def approval_ids_by_key(state: StateStore) -> dict[str, str]:
    """stateKey → approval id for every readable index (one scan, not one per checkpoint)."""
    found: dict[str, str] = {}
    for path in state.iter_approval_index_files():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):  # corrupt, even absurdly nested: skipped
            continue
        if isinstance(data, dict) and isinstance(data.get("stateKey"), str):
            found.setdefault(data["stateKey"], path.stem[len(APPROVAL_PREFIX) :])
    return found


def _read_state(path: Path) -> Any:
    """Read a state file without following symlinks; raises ValueError with a reason."""
    try:
        # Non-blocking, so a FIFO named like a state file is refused instead of hanging the scan.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        if error.errno == 40:  # ELOOP: a symlink, possibly out of the directory
            raise ValueError("is a symbolic link (not followed)") from None
        raise ValueError(error.strerror or str(error)) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ValueError("is not a regular file")
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(_MAX_STATE_BYTES + 1)
    if len(data) > _MAX_STATE_BYTES:
        raise ValueError(f"larger than {_MAX_STATE_BYTES // (1024 * 1024)} MiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except ValueError as error:
        raise ValueError(f"not valid JSON ({error})") from None


class _WorkflowFiles:
    """Workflow documents by path, each loaded once per scan."""

    def __init__(self) -> None:
        self._docs: dict[str, dict[str, Any] | str] = {}

    def get(self, path: str) -> tuple[dict[str, Any] | None, str | None]:
        if path not in self._docs:
            from .errors import LobsterError
            from .workflow.loader import load_workflow

            try:
                if not stat.S_ISREG(os.stat(path).st_mode):
                    raise ValueError("Workflow path is not a file")  # a FIFO or device would block
                doc = load_workflow(path)
                self._docs[path] = doc if isinstance(doc, dict) else "workflow file is not an object"
            except (LobsterError, OSError, ValueError, RecursionError) as error:
                self._docs[path] = getattr(error, "message", None) or str(error)
        value = self._docs[path]
        return (value, None) if isinstance(value, dict) else (None, value)


def scan_checkpoints(state: StateStore) -> list[Checkpoint | BrokenCheckpoint]:
    """Every pending checkpoint (and broken state file) in the directory, newest first."""
    ids = approval_ids_by_key(state)
    files = _WorkflowFiles()
    found: list[Checkpoint | BrokenCheckpoint] = []
    for path in state.iter_resume_state_files():
        entry = load_checkpoint(path, ids, files)
        if entry is not None:
            found.append(entry)
    found.sort(key=lambda c: c.created_at, reverse=True)
    return found


def load_checkpoint(
    path: Path, ids: dict[str, str] | None = None, files: _WorkflowFiles | None = None
) -> Checkpoint | BrokenCheckpoint | None:
    """One state file as a checkpoint; None for consumed markers and vanished files."""
    key = path.stem
    try:
        data = _read_state(path)
    except ValueError as error:
        if not path.exists() and not path.is_symlink():
            return None
        return BrokenCheckpoint(state_key=key, path=path, reason=str(error), created_at=_mtime(path))
    if is_consumed_marker(data):
        return None
    ids = ids if ids is not None else {}
    files = files or _WorkflowFiles()
    try:
        if key.startswith("pipeline_resume_"):
            return _pipeline_checkpoint(key, path, data, ids)
        return _workflow_checkpoint(key, path, data, ids, files)
    except _Broken as broken:
        return BrokenCheckpoint(state_key=key, path=path, reason=str(broken), created_at=_mtime(path))


class _Broken(Exception):
    pass


def _pipeline_checkpoint(key: str, path: Path, data: Any, ids: dict[str, str]) -> Checkpoint:
    from .runner import _pipeline_state_valid

    if not isinstance(data, dict) or not _pipeline_state_valid(data):
        raise _Broken("not a valid pipeline resume state")
    stages = data["pipeline"]
    at = data["resumeAtIndex"]
    is_input = data.get("haltType") == "input_request"
    same_stage = data.get("resumeMode") == "same_stage"
    gate_index = at if same_stage else at - 1
    gate = stages[gate_index] if 0 <= gate_index < len(stages) else None
    before = [
        StepRecord(step_id=f"{i + 1}:{stage['name']}", kind="stage", command=stage["raw"])
        for i, stage in enumerate(stages[: max(gate_index, 0)])
    ]
    fields: dict[str, Any] = {
        "state_key": key,
        "path": path,
        "kind": "input" if is_input else "approval",
        "source": "pipeline",
        "workflow": " | ".join(stage["raw"] for stage in stages),
        "step": gate["name"] if gate else "?",
        "prompt": data.get("prompt") if isinstance(data.get("prompt"), str) else "Approve?",
        "created_at": _parse_time(data.get("createdAt"), path),
        "approval_id": ids.get(key),
        "token": encode_token("pipeline-resume", key),
        "steps_before": before,
        "run_id": data.get("runId") if isinstance(data.get("runId"), str) else None,
    }
    if is_input:
        fields["response_schema"] = data.get("inputSchema")
        metadata = data.get("commandInput", {}).get("pending", {}).get("metadata", {}) if same_stage else {}
        if "subject" in metadata:
            fields.update(has_subject=True, subject=metadata["subject"])
        if "defaults" in metadata:
            fields.update(has_defaults=True, defaults=metadata["defaults"])
    else:
        fields["items"] = list(data["items"])
        if gate is not None and gate["name"] == "approve":
            fields["preview"] = _approve_preview(data["items"], gate["args"])
    return Checkpoint(**fields)


def _approve_preview(items: list[Any], args: dict[str, Any]) -> str | None:
    """Rebuild ``approve --preview-from-stdin`` text: pipeline states do not store it."""
    from .jsvalues import js_truthy
    from .pipeline.commands.gates import approve_preview

    if not js_truthy(args.get("preview-from-stdin", args.get("previewFromStdin"))):
        return None
    limit = args.get("limit", args.get("previewLimit", args.get("preview-limit")))
    return approve_preview(items, limit) or None


def _workflow_checkpoint(key: str, path: Path, data: Any, ids: dict[str, str], files: _WorkflowFiles) -> Checkpoint:
    from .workflow.resume import _workflow_state_valid

    if not _workflow_state_valid(data):
        raise _Broken("not a valid workflow resume state")
    file_path = data["filePath"]
    doc, load_error = files.get(file_path)
    results: dict[str, Any] = data["steps"]
    is_input = "inputStepId" in data
    step_id = data["inputStepId"] if is_input else str(data.get("approvalStepId", ""))
    steps = doc.get("steps") if doc and isinstance(doc.get("steps"), list) else []
    step = next((s for s in steps if isinstance(s, dict) and s.get("id") == step_id), None)
    name = doc.get("name") if doc and isinstance(doc.get("name"), str) else Path(file_path).stem
    fields: dict[str, Any] = {
        "state_key": key,
        "path": path,
        "kind": "input" if is_input else "approval",
        "source": "workflow",
        "workflow": name,
        "step": step_id,
        "created_at": _parse_time(data.get("createdAt"), path),
        "approval_id": ids.get(key),
        "token": encode_token(kind_for_state_key(key), key),
        "steps_before": _records(results, steps),
        "run_id": data.get("runId") if isinstance(data.get("runId"), str) else None,
        "file_path": file_path,
        "note": f"workflow file unavailable: {load_error}" if load_error else None,
    }
    if is_input:
        _input_fields(fields, data, step)
    else:
        _approval_fields(fields, data, step, results.get(step_id, {}))
    return Checkpoint(**fields)


def _records(results: dict[str, Any], steps: list[Any]) -> list[StepRecord]:
    order = [s.get("id") for s in steps if isinstance(s, dict)]
    ordered = [sid for sid in order if sid in results] + [sid for sid in results if sid not in order]
    records = []
    for sid in ordered:
        result = results[sid]
        if not isinstance(result, dict):
            continue
        status = "skipped" if result.get("skipped") else "failed" if result.get("error") else "ok"
        step = next((s for s in steps if isinstance(s, dict) and s.get("id") == sid), {})
        command = step.get("run") or step.get("command") or step.get("pipeline") or step.get("workflow")
        records.append(
            StepRecord(
                step_id=str(sid),
                kind="step",
                command=command if isinstance(command, str) else None,
                stdout=result.get("stdout") if isinstance(result.get("stdout"), str) else None,
                json_value=result.get("json"),
                has_json="json" in result,
                status=status,
            )
        )
    return records


def _input_fields(fields: dict[str, Any], data: dict[str, Any], step: dict[str, Any] | None) -> None:
    spec = step.get("input") if step and isinstance(step.get("input"), dict) else {}
    metadata: dict[str, Any] = {}
    if data.get("inputKind") == "pipeline_command":
        metadata = data["pipelineInput"]["commandInput"]["pending"]["metadata"]
    prompt = metadata.get("prompt") or spec.get("prompt")
    fields["prompt"] = prompt if isinstance(prompt, str) else f"Input for {fields['step']}"
    fields["response_schema"] = data.get("inputSchema")
    if "inputSubject" in data:
        fields.update(has_subject=True, subject=data["inputSubject"])
    defaults = metadata.get("defaults", spec.get("defaults", UNDEFINED))
    if defaults is not UNDEFINED:
        fields.update(has_defaults=True, defaults=defaults)


def _approval_fields(fields: dict[str, Any], data: dict[str, Any], step: dict[str, Any] | None, result: Any) -> None:
    from .workflow.executor import build_approval_request

    identity = data.get("approvalIdentity") if isinstance(data.get("approvalIdentity"), dict) else {}
    if step is not None and isinstance(result, dict):
        request, _ = build_approval_request(step, result, {})
    else:
        request = {"prompt": f"Approve {fields['step']}?", "items": []}
    fields["prompt"] = request["prompt"]
    fields["items"] = list(request.get("items", []))
    fields["preview"] = request.get("preview")
    fields["initiated_by"] = identity.get("initiatedBy") if isinstance(identity.get("initiatedBy"), str) else None
    fields["required_approver"] = (
        identity.get("requiredApprover") if isinstance(identity.get("requiredApprover"), str) else None
    )
    fields["require_different_approver"] = identity.get("requireDifferentApprover") is True


def identity_problem(checkpoint: Checkpoint, approver: str | None) -> str | None:
    """Why ``approver`` may not approve this checkpoint (R-WF-64), or None when allowed."""
    from .errors import LobsterParseError
    from .workflow.executor import check_approver

    identity: dict[str, Any] = {}
    if checkpoint.initiated_by:
        identity["initiatedBy"] = checkpoint.initiated_by
    if checkpoint.required_approver:
        identity["requiredApprover"] = checkpoint.required_approver
    if checkpoint.require_different_approver:
        identity["requireDifferentApprover"] = True
    try:
        check_approver(checkpoint.step, identity, approver)
    except LobsterParseError as error:
        return error.message
    return None
