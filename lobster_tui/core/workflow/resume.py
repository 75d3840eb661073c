"""Workflow runs and their checkpoints: start, pause into a resume state, resume (§7.8, §7.9, §9.4).

The step loop lives in :mod:`.executor`; this module turns its pauses into resume states and
envelopes and continues them, with the lifecycle of R-STATE-31: claim before the first dispatch,
delete the state after a failure past the claim, clean everything up on completion.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..errors import LobsterError, LobsterParseError, LobsterRuntimeError
from ..events import runner_process
from ..jsvalues import UNDEFINED, dumps_compact, stable_stringify
from ..state import is_consumed_marker
from .executor import Pause, WorkflowRun, check_approver, execute, load_and_validate
from .loader import is_input_step, resolve_args, step_kind

if TYPE_CHECKING:
    from ..events import RunEvents
    from ..runner import Outcome, RunContext

_PLACEHOLDER_TOKEN = "x" * 220
_SUBJECT_LIMIT_BYTES = 192000
_SUBJECT_PREVIEW = 2000


def _runner() -> Any:
    from .. import runner

    return runner


def _new_run(rc: RunContext, doc: dict[str, Any], path: str, args: dict[str, Any], events: RunEvents) -> WorkflowRun:
    return WorkflowRun(
        doc=doc,
        file_path=path,
        args=args,
        mode=rc.mode,
        base_env=rc.env,
        cwd=rc.cwd,
        ctx_factory=rc.command_context,
        events=events,
        signal=rc.signal,
        stdin=rc.stdin,
        stderr=rc.stderr,
        chain=(_canonical(path),),
    )


def _canonical(path: str) -> str:
    from pathlib import Path

    try:
        return str(Path(path).resolve(strict=True))
    except OSError:
        return path


def start_workflow(rc: RunContext, path: str, provided: Any, *, dry_run: bool = False) -> Outcome:
    """Run a workflow file from its first step."""
    runner = _runner()
    doc = load_and_validate(path)
    args = resolve_args(doc, provided)
    if dry_run:
        from .dryrun import plan_dry_run

        rc.stderr.write(plan_dry_run(doc, args, rc.commands()))
        return runner.Outcome(status="ok")
    events = runner._events_for(rc)
    started = time.monotonic()
    events.emit("run_started", name=doc.get("name") if isinstance(doc.get("name"), str) else None,
                source="workflow", target=path, args=args, cwd=rc.cwd, resumed=False, **runner_process())
    run = _new_run(rc, doc, path, args, events)
    try:
        result = execute(run, 0)
        outcome = _conclude(rc, run, result, None)
    except LobsterError as error:
        outcome = runner.Outcome.failure(error)
    return runner._finish(events, started, outcome, rc.signal)


def _conclude(rc: RunContext, run: WorkflowRun, result: Any, resume: Any) -> Outcome:
    runner = _runner()
    if result.pause is None:
        if resume is not None:
            resume.complete()
        return runner.Outcome(status="ok", output=result.output)
    return _persist_pause(rc, run, result.pause, resume)


def _persist_pause(rc: RunContext, run: WorkflowRun, pause: Pause, resume: Any) -> Outcome:
    runner = _runner()
    state: dict[str, Any] = {
        "filePath": run.file_path,
        "resumeAtIndex": pause.index if pause.pipeline_input is not None else pause.index + 1,
        "steps": run.results,
        "args": run.args,
    }
    if pause.kind == "approval":
        state["approvalStepId"] = pause.step_id
        state["approvalIdentity"] = pause.identity
    else:
        state["inputStepId"] = pause.step_id
        state["inputSchema"] = pause.input_schema
        if pause.subject is not UNDEFINED:
            state["inputSubject"] = pause.subject
        if pause.pipeline_input is not None:
            state["inputKind"] = "pipeline_command"
            state["pipelineInput"] = pause.pipeline_input
    cost = run.cost.summary() if run.cost is not None else None
    if cost is not None:
        state["cost"] = cost
    request = dict(pause.request)
    if pause.kind == "input":
        request = _fit_subject(rc, pause.step_id, request)
        if request.get("subject", UNDEFINED) is UNDEFINED:
            request.pop("subject", None)
    return runner.persist_checkpoint(rc, "workflow", state, pause.kind, request, run.events, resume)


def _fit_subject(rc: RunContext, step_id: str, request: dict[str, Any]) -> dict[str, Any]:
    """R-WF-72: shrink the envelope's subject to fit ``LOBSTER_MAX_TOOL_ENVELOPE_BYTES``."""
    from .. import envelope as wire

    raw = rc.env.get("LOBSTER_MAX_TOOL_ENVELOPE_BYTES")
    limit = 512000
    if raw and raw.strip().isdigit() and int(raw) >= 1024:
        limit = int(raw)

    def size(candidate: dict[str, Any]) -> int:
        env = wire.success("needs_input", [], None, wire.input_request({**candidate, "resumeToken": _PLACEHOLDER_TOKEN}))
        return len(dumps_compact(env).encode("utf-8"))

    if size(request) <= limit:
        return request
    subject = request.get("subject")
    compact = dumps_compact(subject)
    full = len(compact.encode("utf-8"))
    if full > _SUBJECT_LIMIT_BYTES:
        request = {**request, "subject": {"truncated": True, "bytes": full, "preview": compact[:_SUBJECT_PREVIEW]}}
        if size(request) <= limit:
            return request
    request = {**request, "subject": {"truncated": True, "bytes": full, "preview": "[subject omitted: envelope size limit]"}}
    if size(request) <= limit:
        return request
    raise LobsterRuntimeError(
        f"Workflow input step {step_id} needs_input envelope exceeds {limit} bytes even after subject truncation"
    )


class _WorkflowResumeMixin:
    """Workflow-specific failure handling: a failure past the claim deletes the state."""

    rc: Any
    key: str
    claimed: bool

    def failed(self, error: LobsterError) -> None:
        from ..errors import AbortError

        if not self.claimed:
            return
        self.rc.state.delete_resume_state(self.key, bounded=isinstance(error, AbortError))
        self.rc.state.remove_approval_indexes_for_key(self.key)


def _resume_class() -> type:
    runner = _runner()

    class WorkflowResume(_WorkflowResumeMixin, runner._Resume):
        not_found_message = "Workflow resume state not found"

    return WorkflowResume


def load_workflow_state(rc: RunContext, key: str) -> dict[str, Any]:
    """Load and shape-check a workflow resume state (R-STATE-20 validation)."""
    try:
        snapshot = rc.state.read_value(key)
    except ValueError:
        raise LobsterRuntimeError("Invalid workflow resume state") from None
    if snapshot is UNDEFINED or is_consumed_marker(snapshot):
        raise LobsterRuntimeError("Workflow resume state not found")
    if not _workflow_state_valid(snapshot):
        raise LobsterRuntimeError("Invalid workflow resume state")
    return snapshot


def _workflow_state_valid(s: Any) -> bool:
    from ..pipeline.request_input import validate_command_input

    if not isinstance(s, dict):
        return False
    if not isinstance(s.get("filePath"), str) or not s["filePath"]:
        return False
    index = s.get("resumeAtIndex")
    if not isinstance(index, (int, float)) or isinstance(index, bool):
        return False
    if not isinstance(s.get("steps"), dict) or not isinstance(s.get("args"), dict):
        return False
    superseded = s.get("supersededResumeStateKeys")
    if superseded is not None and not (isinstance(superseded, list) and all(isinstance(k, str) for k in superseded)):
        return False
    kind = s.get("inputKind")
    if kind not in (None, "workflow_step", "pipeline_command"):
        return False
    if "approvalStepId" in s and "inputStepId" in s:
        return False
    if kind == "pipeline_command":
        pipeline_input = s.get("pipelineInput")
        if not isinstance(s.get("inputStepId"), str) or "inputSchema" not in s or not isinstance(pipeline_input, dict):
            return False
        stages = pipeline_input.get("pipeline")
        at = pipeline_input.get("resumeAtIndex")
        return (
            isinstance(stages, list)
            and all(isinstance(st, dict) and isinstance(st.get("name"), str) and isinstance(st.get("args"), dict)
                    and isinstance(st.get("raw"), str) for st in stages)
            and isinstance(at, int)
            and 0 <= at < len(stages)
            and isinstance(pipeline_input.get("items"), list)
            and validate_command_input(pipeline_input.get("commandInput"))
        )
    return "pipelineInput" not in s


def resume_workflow(rc: RunContext, key: str, approved: bool | None, response: Any) -> Outcome:
    """Continue a workflow checkpoint with a decision or an answer (§9.4)."""
    runner = _runner()
    snapshot = load_workflow_state(rc, key)
    resume = _resume_class()(rc, key, snapshot)
    _refuse_special_file(snapshot["filePath"])
    doc = load_and_validate(snapshot["filePath"])
    steps = doc["steps"]
    start = int(snapshot["resumeAtIndex"])
    results: dict[str, Any] = {k: dict(v) if isinstance(v, dict) else v for k, v in snapshot["steps"].items()}
    approval_step = snapshot.get("approvalStepId")
    run_id = snapshot.get("runId") if isinstance(snapshot.get("runId"), str) else None
    events = runner._events_for(rc, run_id)
    pipeline_resume: dict[str, Any] | None = None
    last_step: str | None
    if approval_step is not None or "inputStepId" not in snapshot:
        step_id = approval_step if isinstance(approval_step, str) else ""
        if response is not UNDEFINED or approved is None:
            raise LobsterParseError("Workflow resume requires --approve yes|no for approval requests")
        if approved is not True:
            return runner._reject(rc, key, snapshot, "Workflow resume state not found")
        approver = runner.approver_identity(rc.env)
        identity = snapshot.get("approvalIdentity") if isinstance(snapshot.get("approvalIdentity"), dict) else {}
        check_approver(step_id, identity, approver)
        gate = results.setdefault(step_id, {"id": step_id})
        gate["approved"] = True
        if approver:
            gate["approvedBy"] = approver
        last_step = _last_completed(steps, results, start)
        decision = "approve"
    else:
        step_id = snapshot["inputStepId"]
        if approved is not None or response is UNDEFINED:
            raise LobsterParseError("Workflow resume requires --response-json for input requests")
        step = next((s for s in steps if s.get("id") == step_id), None)
        schema = snapshot.get("inputSchema")
        if snapshot.get("inputKind") == "pipeline_command":
            pipeline_resume = _check_pipeline_invariants(doc, snapshot, results)
        else:
            if step is None or not is_input_step(step):
                raise LobsterRuntimeError(f"Invalid input step in resume state: {step_id}")
            if schema is None:
                schema = step["input"].get("responseSchema")
        runner._check_answer(rc, schema, response, f"Workflow input step {step_id}", f"Workflow input step {step_id} response schema is invalid")
        if pipeline_resume is None:
            subject = snapshot.get("inputSubject", None)
            results[step_id] = {"id": step_id, "subject": subject, "response": response}
            last_step = step_id
        else:
            last_step = _last_completed(steps, results, start)
        decision = "answer"
    rc.signal.raise_if_aborted()
    started = time.monotonic()
    events.emit("resumed", stateKey=key, decision=decision, approver=runner.approver_identity(rc.env))
    events.emit("run_started", name=doc.get("name") if isinstance(doc.get("name"), str) else None,
                source="workflow", target=snapshot["filePath"], args=snapshot["args"], cwd=rc.cwd, resumed=True,
                **runner_process())
    run = _new_run(rc, doc, snapshot["filePath"], dict(snapshot["args"]), events)
    run.results = results
    run.last_step = last_step
    run.before_dispatch = _unswallowable(resume.claim)
    if pipeline_resume is not None:
        run.resume_pipeline = pipeline_resume
        run.resume_answer = response
    from .cost import CostTracker

    run.cost = CostTracker(rc.stderr)
    run.cost.restore(snapshot.get("cost"))
    try:
        result = execute(run, start)
        outcome = _conclude(rc, run, result, resume)
    except LobsterParseError:
        raise
    except LobsterError as error:
        resume.failed(error)
        outcome = runner.Outcome.failure(error)
    return runner._finish(events, started, outcome, rc.signal)


def _refuse_special_file(path: str) -> None:
    """A state's ``filePath`` naming a FIFO or a device would block the resume (or read forever)."""
    import os
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # missing: the loader reports it in its own words
    if not stat.S_ISREG(mode):
        raise LobsterRuntimeError("Workflow path is not a file")


def _unswallowable(claim: Any) -> Any:
    """A lost claim ends the run: ``retry`` and ``on_error`` must not turn it into a second success."""
    from .executor import _NeverSwallow

    def claim_or_stop() -> None:
        try:
            claim()
        except LobsterRuntimeError as error:
            if type(error) is not LobsterRuntimeError:
                raise  # aborts keep their type
            raise _NeverSwallow(error.message) from None

    return claim_or_stop


def _last_completed(steps: list[dict[str, Any]], results: dict[str, Any], start: int) -> str | None:
    """R-WF-51 on an approval resume: the last step in file order that already has a result."""
    for step in reversed(steps[:start]):
        result = results.get(step.get("id"))
        if isinstance(result, dict) and not result.get("skipped") and not result.get("error"):
            return step["id"]
    return None


def _check_pipeline_invariants(doc: dict[str, Any], snapshot: dict[str, Any], results: dict[str, Any]) -> dict[str, Any]:
    """R-WF-75: the step must be unchanged since the request, else resuming is refused."""
    from ..pipeline.parser import parse_pipeline
    from .conditions import evaluate_condition
    from .templates import resolve_template

    index = int(snapshot["resumeAtIndex"])
    steps = doc["steps"]
    step_id = snapshot["inputStepId"]
    if index >= len(steps) or steps[index].get("id") != step_id:
        raise LobsterRuntimeError("workflow input step changed since input request")
    step = steps[index]
    if step_kind(step) != "pipeline":
        raise LobsterRuntimeError(f"Invalid pipeline input step in resume state: {step_id}")
    if not evaluate_condition(step, results):
        raise LobsterRuntimeError("workflow input step condition changed since input request")
    stored = snapshot["pipelineInput"]
    text = resolve_template(step["pipeline"], snapshot["args"], results)
    current = [stage.to_json() for stage in parse_pipeline(text)]
    if stable_stringify(current) != stable_stringify(stored["pipeline"]):
        raise LobsterRuntimeError("workflow pipeline changed since input request")
    return stored
