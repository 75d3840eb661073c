"""Executing workflow steps (spec §7.5-§7.16): the step loop and every step kind.

The executor runs steps from a start index and stops at the end, at an approval or input gate
(returned as a :class:`Pause` for the caller to persist), or with an error. It never writes resume
state itself: :mod:`lobster_tui.core.workflow.resume` owns the checkpoint lifecycle.
"""

from __future__ import annotations

import io
import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..cancel import CancelSignal
from ..errors import AbortError, LobsterError, LobsterParseError, LobsterRuntimeError
from ..events import RunEvents
from ..jsvalues import UNDEFINED, dumps_compact, js_string, js_typeof, loads
from ..pipeline.base import CommandContext, Mode
from ..process import run_process, shell_argv
from ..records import field, record
from .conditions import evaluate_condition
from .loader import (
    is_approval_step,
    is_input_step,
    load_workflow,
    resolve_args,
    step_kind,
    validate_workflow,
)
from .templates import (
    build_step_env,
    resolve_args_template,
    resolve_template,
    resolve_value,
)

PREVIEW_LIMIT = 2000
_YES = re.compile(r"^y(es)?$", re.IGNORECASE)
_NOT_RETRIED = ("halted for approval inside pipeline", "halted before completion at pipeline")


class _NeverSwallow(LobsterRuntimeError):
    """An error that bypasses ``retry`` and ``on_error`` (R-WF-93, R-WF-95)."""


@record
class Pause:
    """A gate the run stopped at; the caller turns it into a resume state and an envelope."""

    kind: str  # "approval" | "input"
    index: int
    step_id: str
    request: dict[str, Any]
    identity: dict[str, Any] = field(default_factory=dict)
    input_schema: Any = UNDEFINED
    subject: Any = UNDEFINED
    pipeline_input: dict[str, Any] | None = None


@record
class WorkflowRun:
    """Everything one execution of one workflow file needs and accumulates."""

    doc: dict[str, Any]
    file_path: str
    args: dict[str, Any]
    mode: Mode
    base_env: dict[str, str]
    cwd: str
    ctx_factory: Callable[..., CommandContext]
    events: RunEvents
    signal: CancelSignal
    stdin: Any = None
    stderr: Any = None
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    last_step: str | None = None
    before_dispatch: Callable[[], None] = lambda: None
    chain: tuple[str, ...] = ()
    cost: Any = None
    resume_pipeline: dict[str, Any] | None = None
    resume_answer: Any = UNDEFINED
    # Set when an attempt dispatched a side effect that must not be retried (R-WF-93).
    non_retryable_dispatched: bool = False

    def context(self, **kwargs: Any) -> CommandContext:
        """A command context whose non-retryable side effects mark this run's current attempt."""
        return self.ctx_factory(on_non_retryable=self.mark_non_retryable, **kwargs)

    def mark_non_retryable(self) -> None:
        self.non_retryable_dispatched = True

    @property
    def interactive(self) -> bool:
        try:
            return self.mode == "human" and self.stdin is not None and self.stdin.isatty()
        except (ValueError, OSError):
            return False


@record
class WorkflowResult:
    output: list[Any]
    pause: Pause | None = None


def load_and_validate(path: str) -> dict[str, Any]:
    doc = load_workflow(path)
    validate_workflow(doc)
    return doc


def execute(run: WorkflowRun, start_index: int = 0) -> WorkflowResult:
    """Run steps from ``start_index`` to the end or the next gate (R-WF-50)."""
    from .cost import CostTracker

    if run.cost is None:
        run.cost = CostTracker(run.stderr)
    steps: list[dict[str, Any]] = run.doc["steps"]
    for index in range(start_index, len(steps)):
        run.signal.raise_if_aborted()
        step = steps[index]
        step_id = step["id"]
        if not evaluate_condition(step, run.results):
            run.results[step_id] = {"id": step_id, "skipped": True}
            run.events.emit("step_started", stepId=step_id, kind="skipped", command=None)
            run.events.emit("step_finished", stepId=step_id, status="skipped", exitCode=None, durationMs=0, error=None)
            continue
        if is_input_step(step):
            pause = _input_step(run, index, step)
            if pause is not None:
                return WorkflowResult(output=[], pause=pause)
            continue
        if step.get("for_each") is not None:
            _for_each_step(run, step)
            run.last_step = step_id
            run.cost.record(run, step_id)
            continue
        outcome = _attempt_with_policies(run, index, step)
        if isinstance(outcome, Pause):
            return WorkflowResult(output=[], pause=outcome)
        if outcome == "skip_rest":
            break
        if outcome == "stored":
            run.last_step = step_id
        run.cost.record(run, step_id)
        if outcome == "stored" and is_approval_step(step):
            pause = _approval_gate(run, index, step)
            if pause is not None:
                return WorkflowResult(output=[], pause=pause)
    return WorkflowResult(output=output_items(run))


def output_items(run: WorkflowRun) -> list[Any]:
    """R-WF-51: the output of the last completed step."""
    if run.last_step is None:
        return []
    result = run.results.get(run.last_step, {})
    for key in ("json", "response"):
        if key in result and result[key] is not UNDEFINED:
            value = result[key]
            return list(value) if isinstance(value, list) else [value]
    stdout = result.get("stdout")
    if isinstance(stdout, str):
        return [stdout] if stdout else []
    return []


# -- gates ---------------------------------------------------------------------------------------


def _input_step(run: WorkflowRun, index: int, step: dict[str, Any]) -> Pause | None:
    step_id = step["id"]
    spec = step["input"]
    if "stdin" in step:
        try:
            subject = resolve_value(step["stdin"], run.args, run.results)
        except LobsterRuntimeError as error:
            raise _NeverSwallow(error.message) from None
    else:
        subject = _last_subject(run)
    prompt = spec.get("prompt")
    if not isinstance(prompt, str):
        prompt = f"Input for {step_id}"
    schema = spec.get("responseSchema")
    if run.interactive:
        from ..pipeline.commands.gates import input_timeout_ms
        from ..schema import compile_schema, validation_failure

        run.stderr.write(f"{prompt}\n")
        text = _read_line(run, "Enter JSON response: ", input_timeout_ms(run.base_env))
        try:
            response = loads(text)
        except ValueError:
            raise LobsterRuntimeError("Input response must be valid JSON") from None
        failure = validation_failure(f"Workflow input step {step_id}", compile_schema(schema), response)
        if failure:
            raise LobsterRuntimeError(failure)
        run.results[step_id] = {"id": step_id, "subject": None if subject is UNDEFINED else subject, "response": response}
        run.last_step = step_id
        return None
    request: dict[str, Any] = {"prompt": prompt, "responseSchema": schema}
    if "defaults" in spec:
        request["defaults"] = spec["defaults"]
    request["subject"] = subject
    return Pause(kind="input", index=index, step_id=step_id, request=request, input_schema=schema, subject=subject)


def _last_subject(run: WorkflowRun) -> Any:
    if run.last_step is None:
        return None
    result = run.results.get(run.last_step, {})
    for key in ("json", "response", "stdout"):
        if key in result and result[key] is not UNDEFINED:
            return result[key]
    return None


def _read_line(run: WorkflowRun, prompt: str, timeout_ms: int | None) -> str:
    import select

    out = run.stderr if run.stderr is not None else io.StringIO()
    out.write(prompt)
    out.flush()
    if timeout_ms is not None:
        ready, _, _ = select.select([run.stdin], [], [], timeout_ms / 1000)
        if not ready:
            raise LobsterRuntimeError(f"Timed out waiting for input ({timeout_ms}ms)")
    return run.stdin.readline().rstrip("\n")


def _env_identity(env: dict[str, str]) -> dict[str, Any]:
    identity: dict[str, Any] = {}
    initiator = (env.get("LOBSTER_APPROVAL_INITIATED_BY") or "").strip()
    required = (env.get("LOBSTER_APPROVAL_REQUIRED_APPROVER") or "").strip()
    different = (env.get("LOBSTER_APPROVAL_REQUIRE_DIFFERENT_APPROVER") or "").strip().lower()
    if initiator:
        identity["initiatedBy"] = initiator
    if required:
        identity["requiredApprover"] = required
    if different in ("1", "true", "yes", "y"):
        identity["requireDifferentApprover"] = True
    return identity


def _identity_from(source: dict[str, Any], identity: dict[str, Any]) -> dict[str, Any]:
    """Identity fields of an approval object, camelCase preferred over snake_case."""
    merged = dict(identity)
    for camel, snake in (
        ("initiatedBy", "initiated_by"),
        ("requiredApprover", "required_approver"),
        ("requireDifferentApprover", "require_different_approver"),
    ):
        value = source.get(camel, source.get(snake))
        if value is None:
            continue
        if camel == "requireDifferentApprover":
            if value is True:
                merged[camel] = True
            else:
                merged.pop(camel, None)
        elif isinstance(value, str) and value.strip():
            merged[camel] = value.strip()
    return merged


def build_approval_request(step: dict[str, Any], result: dict[str, Any], env: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """R-WF-61: the approval request and the effective identity for an approval step."""
    approval = step.get("approval")
    configured_prompt: str | None = None
    configured: dict[str, Any] = {}
    identity = _env_identity(env)
    if isinstance(approval, dict):
        configured = approval
        if isinstance(approval.get("prompt"), str):
            configured_prompt = approval["prompt"]
        identity = _identity_from(approval, identity)
    elif isinstance(approval, str) and approval.strip() and approval != "required":
        configured_prompt = approval
    value = result.get("json", UNDEFINED)
    hijack: dict[str, Any] | None = None
    if isinstance(value, dict):
        nested = value.get("requiresApproval")
        if isinstance(nested, dict) and isinstance(nested.get("prompt"), str) and nested["prompt"]:
            hijack = nested
        elif isinstance(value.get("prompt"), str) and value["prompt"]:
            hijack = value
    if hijack is not None:
        # A step whose output carries a prompt defines its own gate (S-8).
        request: dict[str, Any] = {"prompt": hijack["prompt"], "items": hijack.get("items") if isinstance(hijack.get("items"), list) else []}
        if isinstance(hijack.get("preview"), str):
            request["preview"] = hijack["preview"]
        identity = _identity_from(hijack, identity)
    else:
        request = {"prompt": configured_prompt if configured_prompt else f"Approve {step['id']}?"}
        if isinstance(configured.get("items"), list):
            request["items"] = configured["items"]
        elif value is UNDEFINED:
            request["items"] = []
        else:
            request["items"] = value if isinstance(value, list) else [value]
        if isinstance(configured.get("preview"), str):
            request["preview"] = configured["preview"]
        else:
            preview = (result.get("stdout") or "").strip()[:PREVIEW_LIMIT] if isinstance(result.get("stdout"), str) else ""
            if not preview and value is not UNDEFINED:
                preview = dumps_compact(value).strip()[:PREVIEW_LIMIT]
            if preview:
                request["preview"] = preview
    for key in ("initiatedBy", "requiredApprover", "requireDifferentApprover"):
        if key in identity:
            request[key] = identity[key]
    return request, identity


def check_approver(step_id: str, identity: dict[str, Any], approver: str | None) -> None:
    """R-WF-64: raise a parse error when this approver may not approve."""
    required = identity.get("requiredApprover")
    different = identity.get("requireDifferentApprover") is True
    if not required and not different:
        return
    if not approver:
        raise LobsterParseError(f"Workflow step {step_id} approval requires approver identity; set LOBSTER_APPROVAL_APPROVED_BY")
    if required and approver != required:
        raise LobsterParseError(f"Workflow step {step_id} approval requires approver '{required}', got '{approver}'")
    initiator = identity.get("initiatedBy")
    if different and initiator and initiator == approver:
        raise LobsterParseError(f"Workflow step {step_id} approval must be granted by someone other than '{initiator}'")


def _approval_gate(run: WorkflowRun, index: int, step: dict[str, Any]) -> Pause | None:
    step_id = step["id"]
    result = run.results[step_id]
    request, identity = build_approval_request(step, result, run.base_env)
    if "initiatedBy" in identity:
        result["initiatedBy"] = identity["initiatedBy"]
    if run.interactive:
        from ..pipeline.commands.gates import input_timeout_ms

        answer = _read_line(run, f"{request['prompt']} [y/N] ", input_timeout_ms(run.base_env))
        if not _YES.match(answer.strip()):
            raise LobsterRuntimeError("Not approved")
        approver = (run.base_env.get("LOBSTER_APPROVAL_APPROVED_BY") or "").strip() or None
        try:
            check_approver(step_id, identity, approver)
        except LobsterParseError as error:
            raise LobsterRuntimeError(error.message) from None
        result["approved"] = True
        if approver:
            result["approvedBy"] = approver
        return None
    return Pause(kind="approval", index=index, step_id=step_id, request=request, identity=identity)


# -- attempts, retry, on_error --------------------------------------------------------------------


def _retry_policy(step: dict[str, Any]) -> dict[str, Any]:
    retry = step.get("retry") if isinstance(step.get("retry"), dict) else {}
    return {
        "max": retry.get("max", 1),
        "backoff": retry.get("backoff", "fixed"),
        "delay_ms": retry.get("delay_ms", 1000),
        "max_delay_ms": retry.get("max_delay_ms", 30000),
        "jitter": retry.get("jitter", False),
    }


def retry_delay_ms(policy: dict[str, Any], attempt: int) -> int:
    """R-WF-91: the wait after failed attempt ``attempt`` (1-based)."""
    delay = float(policy["delay_ms"])
    if policy["backoff"] == "exponential":
        delay = min(delay * 2 ** (attempt - 1), float(policy["max_delay_ms"]))
    if policy["jitter"]:
        import random  # only here: a 2 ms import every run would otherwise pay

        delay = min(delay * (1 + random.uniform(-0.1, 0.1)), float(policy["max_delay_ms"]))
    return max(0, round(delay))


def _attempt_with_policies(run: WorkflowRun, index: int, step: dict[str, Any]) -> str | Pause:
    """Run a step with timeout, retry and on_error; returns "stored", "skip_rest" or a Pause."""
    step_id = step["id"]
    policy = _retry_policy(step)
    attempts = policy["max"] if isinstance(policy["max"], int) and policy["max"] > 1 else 1
    last_error: LobsterError | None = None
    for attempt in range(1, attempts + 1):
        run.non_retryable_dispatched = False
        try:
            outcome = _one_attempt(run, index, step)
        except (_NeverSwallow, LobsterParseError):
            raise
        except LobsterError as error:
            if run.signal.aborted:
                raise
            last_error = error
            retryable = not run.non_retryable_dispatched and not any(text in error.message for text in _NOT_RETRIED)
            if attempt < attempts and retryable:
                delay = retry_delay_ms(policy, attempt)
                if run.stderr is not None:
                    run.stderr.write(
                        f"[RETRY] Step '{step_id}' failed (attempt {attempt}/{attempts}): {error.message}. "
                        f"Retrying in {delay}ms...\n"
                    )
                    run.stderr.flush()
                if run.signal.wait(delay / 1000):
                    run.signal.raise_if_aborted()
                continue
            break
        return outcome
    assert last_error is not None
    if any(text in last_error.message for text in _NOT_RETRIED):
        raise last_error
    policy_name = step.get("on_error", "stop")
    if policy_name in ("continue", "skip_rest"):
        run.results[step_id] = {"id": step_id, "error": True, "errorMessage": last_error.message}
        return "skip_rest" if policy_name == "skip_rest" else "failed"
    raise last_error


def _step_signal(run: WorkflowRun, step_id: str, timeout_ms: Any) -> tuple[CancelSignal, threading.Timer | None]:
    signal = CancelSignal(parent=run.signal)
    if not isinstance(timeout_ms, int) or isinstance(timeout_ms, bool):
        return signal, None
    reason = f"Step '{step_id}' timed out after {timeout_ms}ms"
    timer = threading.Timer(timeout_ms / 1000, lambda: signal.abort(reason, timeout=True))
    timer.daemon = True
    timer.start()
    return signal, timer


def _one_attempt(run: WorkflowRun, index: int, step: dict[str, Any]) -> str | Pause:
    step_id = step["id"]
    kind = step_kind(step)
    signal, timer = _step_signal(run, step_id, step.get("timeout_ms"))
    started = time.monotonic()
    command_text: str | None = None
    try:
        env = build_step_env(run.base_env, run.args, run.doc.get("env"), step.get("env"), run.args, run.results)
        cwd = _step_cwd(run, step.get("cwd"))
        if kind == "parallel":
            run.before_dispatch()
            run.events.emit("step_started", stepId=step_id, kind="parallel", command=None)
            result = _parallel_step(run, step, env, cwd, signal)
        elif kind == "workflow":
            run.before_dispatch()
            command_text = resolve_template(step["workflow"], run.args, run.results)
            run.events.emit("step_started", stepId=step_id, kind="workflow", command=command_text)
            result = _workflow_step(run, step, command_text, env, cwd, signal)
        elif kind == "pipeline":
            command_text = resolve_template(step["pipeline"], run.args, run.results)
            run.events.emit("step_started", stepId=step_id, kind="pipeline", command=command_text)
            stdin_value = _stdin_value(run, step)
            result_or_pause = _pipeline_step(run, index, step, command_text, stdin_value, env, cwd, signal)
            if isinstance(result_or_pause, Pause):
                _emit_finished(run, step_id, started, "ok", None, None)
                return result_or_pause
            result = result_or_pause
        elif kind == "shell":
            text = step["run"] if isinstance(step.get("run"), str) else step["command"]
            command_text = resolve_template(text, run.args, run.results)
            stdin_value = _stdin_value(run, step)
            run.before_dispatch()
            run.events.emit("step_started", stepId=step_id, kind="shell", command=command_text)
            result = _shell(step_id, command_text, stdin_value, env, cwd, signal, run.events, "workflow")
        else:
            stdin_value = _stdin_value(run, step)
            run.events.emit("step_started", stepId=step_id, kind="approval" if is_approval_step(step) else "none", command=None)
            result = synthetic_result(step_id, stdin_value)
    except AbortError as error:
        status = "timed_out" if signal.timeout and not run.signal.aborted else "failed"
        _emit_finished(run, step_id, started, status, None, error.message)
        if run.signal.aborted:
            raise
        raise LobsterRuntimeError(error.message) from None
    except LobsterError as error:
        _emit_finished(run, step_id, started, "failed", _exit_code_of(error), error.message)
        raise
    finally:
        if timer is not None:
            timer.cancel()
    _emit_finished(run, step_id, started, "ok", 0 if kind == "shell" else None, None)
    if kind == "parallel":
        for branch_id, branch_result in result.pop("__branches__").items():
            run.results[branch_id] = branch_result
    run.results[step_id] = result
    return "stored"


def _exit_code_of(error: LobsterError) -> int | None:
    match = re.match(r"workflow command failed \((\d+)\)", error.message)
    return int(match.group(1)) if match else None


def _emit_finished(run: WorkflowRun, step_id: str, started: float, status: str, code: int | None, error: str | None) -> None:
    run.events.emit(
        "step_finished",
        stepId=step_id,
        status=status,
        exitCode=code,
        durationMs=round((time.monotonic() - started) * 1000),
        error=error,
    )


def _stdin_value(run: WorkflowRun, step: dict[str, Any]) -> Any:
    if "stdin" not in step or step["stdin"] is None:
        return UNDEFINED
    return resolve_value(step["stdin"], run.args, run.results)


def _step_cwd(run: WorkflowRun, *candidates: Any) -> str:
    """R-WF-14: the first configured cwd (args substituted), relative to the run's cwd."""
    for candidate in (*candidates, run.doc.get("cwd")):
        if isinstance(candidate, str) and candidate:
            text = resolve_args_template(candidate, run.args)
            return os.path.join(run.cwd, text) if not os.path.isabs(text) else text
    return run.cwd


def synthetic_result(step_id: str, stdin_value: Any) -> dict[str, Any]:
    """R-WF-34: an approval-only step's result, derived from its stdin."""
    if stdin_value is UNDEFINED:
        return {"id": step_id}
    if isinstance(stdin_value, str):
        result: dict[str, Any] = {"id": step_id, "stdout": stdin_value}
        parsed = _parse_json(stdin_value)
        if parsed is not UNDEFINED:
            result["json"] = parsed
        return result
    return {"id": step_id, "stdout": dumps_compact(stdin_value), "json": stdin_value}


def _parse_json(text: str) -> Any:
    stripped = text.strip()
    if not stripped:
        return UNDEFINED
    try:
        return loads(stripped)
    except ValueError:
        return UNDEFINED


def _stdin_bytes(value: Any) -> bytes | None:
    if value is UNDEFINED:
        return None
    return (value if isinstance(value, str) else dumps_compact(value)).encode("utf-8")


def _shell(
    step_id: str,
    command: str,
    stdin_value: Any,
    env: dict[str, str],
    cwd: str,
    signal: CancelSignal,
    events: RunEvents,
    label: str,
) -> dict[str, Any]:
    """R-WF-32: run a shell step; exit 0 gives ``{id, stdout, json?}``."""
    try:
        result = run_process(
            shell_argv(command, env),
            env=env,
            cwd=cwd,
            stdin_data=_stdin_bytes(stdin_value),
            signal=signal,
            on_output=events.output_sink(step_id),
        )
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        raise LobsterRuntimeError(f"{label} shell not found; check LOBSTER_SHELL or ComSpec") from None
    if result.returncode != 0:
        code = "null" if result.returncode is None else str(result.returncode)
        detail = result.stderr.strip() or result.stdout.strip() or command
        raise LobsterRuntimeError(f"workflow command failed ({code}): {detail}")
    out: dict[str, Any] = {"id": step_id, "stdout": result.stdout}
    parsed = _parse_json(result.stdout)
    if parsed is not UNDEFINED:
        out["json"] = parsed
    return out


# -- pipeline steps -----------------------------------------------------------------------------


def _items_from(value: Any) -> list[Any]:
    """R-WF-25: stdin as pipeline items; an array gives its elements, anything else one item."""
    if value is UNDEFINED:
        return []
    return list(value) if isinstance(value, list) else [value]


def pipeline_step_result(step_id: str, items: list[Any], captured: str) -> dict[str, Any]:
    """R-WF-33: ``stdout`` and ``json`` of a pipeline step from its items and rendered text."""
    if captured:
        stdout = captured
    elif all(isinstance(item, str) for item in items) and items:
        stdout = "\n".join(items)
    elif len(items) == 1:
        stdout = items[0] if isinstance(items[0], str) else dumps_compact(items[0])
    elif len(items) > 1:
        stdout = dumps_compact(items)
    else:
        stdout = ""
    result: dict[str, Any] = {"id": step_id, "stdout": stdout}
    if len(items) == 1:
        result["json"] = items[0]
    elif len(items) > 1:
        result["json"] = items
    else:
        parsed = _parse_json(captured)
        if parsed is not UNDEFINED:
            result["json"] = parsed
    return result


def _pipeline_step(
    run: WorkflowRun,
    index: int,
    step: dict[str, Any],
    text: str,
    stdin_value: Any,
    env: dict[str, str],
    cwd: str,
    signal: CancelSignal,
) -> dict[str, Any] | Pause:
    from ..pipeline.engine import SameStageResume, run_stages
    from ..pipeline.parser import parse_pipeline

    step_id = step["id"]
    try:
        stages = parse_pipeline(text)
    except LobsterParseError as error:
        raise LobsterRuntimeError(f"Workflow step {step_id} pipeline parse failed: {error.message}") from None
    captured = io.StringIO()
    ctx = run.context(env=env, cwd=cwd, stdout=captured, signal=signal)
    items = _items_from(stdin_value)
    same_stage = None
    offset = 0
    if run.resume_pipeline is not None:
        stored = run.resume_pipeline
        run.resume_pipeline = None
        offset = stored["resumeAtIndex"]
        stages = stages[offset:]
        items = list(stored["items"])
        command_input = stored["commandInput"]
        same_stage = SameStageResume(command_input["history"], command_input["pending"], run.resume_answer)
    outcome = run_stages(
        stages,
        items,
        ctx,
        events=run.events,
        before_unsafe=run.before_dispatch,
        same_stage=same_stage,
        step_offset=offset,
    )
    if outcome.halted:
        halted_index = outcome.halted_at
        assert halted_index is not None
        stage_name = stages[halted_index].name
        if outcome.suspension is not None:
            pending = outcome.suspension.pending
            metadata = pending["metadata"]
            replay = outcome.replay_items if halted_index == 0 or "suspendedState" not in pending else []
            from ..pipeline.parser import parse_pipeline as reparse

            full = reparse(text)
            request = {k: metadata[k] for k in ("prompt", "responseSchema", "defaults") if k in metadata}
            subject = metadata.get("subject", UNDEFINED)
            request["subject"] = subject
            return Pause(
                kind="input",
                index=index,
                step_id=step_id,
                request=request,
                input_schema=metadata["responseSchema"],
                subject=subject,
                pipeline_input={
                    "pipeline": [stage.to_json() for stage in full],
                    "resumeAtIndex": offset + halted_index,
                    "items": replay,
                    "commandInput": outcome.suspension.command_input(),
                },
            )
        halt_items = outcome.items
        if len(halt_items) == 1 and isinstance(halt_items[0], dict) and halt_items[0].get("type") == "approval_request":
            raise _NeverSwallow(
                f"Workflow step {step_id} halted for approval inside pipeline stage {stage_name}. "
                "Use a separate approval step in the workflow file."
            )
        raise _NeverSwallow(f"Workflow step {step_id} halted before completion at pipeline stage {stage_name}")
    return pipeline_step_result(step_id, outcome.items, captured.getvalue())


# -- for_each ------------------------------------------------------------------------------------


def _for_each_step(run: WorkflowRun, step: dict[str, Any]) -> None:
    """R-WF-100..102: run the sub-steps once per item; any error fails the run."""
    from ..pipeline.engine import run_stages
    from ..pipeline.parser import parse_pipeline

    step_id = step["id"]
    source = resolve_value(step["for_each"], run.args, run.results)
    if not isinstance(source, list):
        raise _NeverSwallow(f"Workflow step {step_id} for_each: expected array, got {js_typeof(source)}")
    item_var = step.get("item_var", "item")
    index_var = step.get("index_var", "index")
    batch = step.get("batch_size", 1)
    pause_ms = step.get("pause_ms", 0) or 0
    iterations: list[dict[str, Any]] = []
    run.events.emit("step_started", stepId=step_id, kind="for_each", command=None)
    started = time.monotonic()
    try:
        for position, item in enumerate(source):
            run.signal.raise_if_aborted()
            if pause_ms > 0 and position > 0 and position % batch == 0 and run.signal.wait(pause_ms / 1000):
                run.signal.raise_if_aborted()
            scope = dict(run.results)
            scope[item_var] = {"id": item_var, "json": item, "stdout": item if isinstance(item, str) else dumps_compact(item)}
            scope[index_var] = {"id": index_var, "json": position, "stdout": js_string(position)}
            iteration: dict[str, Any] = {item_var: item, index_var: position}
            for sub in step["steps"]:
                sub_id = sub["id"]
                if not evaluate_condition(sub, scope):
                    scope[sub_id] = {"id": sub_id, "skipped": True}
                    continue
                env = build_step_env(run.base_env, run.args, run.doc.get("env"), _merge(step.get("env"), sub.get("env")), run.args, scope)
                cwd = _step_cwd(run, sub.get("cwd"), step.get("cwd"))
                stdin_value = resolve_value(sub["stdin"], run.args, scope) if sub.get("stdin") is not None else UNDEFINED
                kind = step_kind(sub)
                full_id = f"{step_id}.{sub_id}"
                if kind == "shell":
                    run.before_dispatch()
                    text = resolve_template(sub["run"] if isinstance(sub.get("run"), str) else sub["command"], run.args, scope)
                    result = _shell(full_id, text, stdin_value, env, cwd, run.signal, run.events, "workflow")
                    result["id"] = sub_id
                elif kind == "pipeline":
                    run.before_dispatch()
                    text = resolve_template(sub["pipeline"], run.args, scope)
                    try:
                        stages = parse_pipeline(text)
                    except LobsterParseError as error:
                        raise LobsterRuntimeError(f"Workflow step {step_id} pipeline parse failed: {error.message}") from None
                    captured = io.StringIO()
                    ctx = run.context(env=env, cwd=cwd, stdout=captured)
                    outcome = run_stages(stages, _items_from(stdin_value), ctx, events=run.events, allow_request_input=False)
                    if outcome.halted:
                        raise LobsterRuntimeError(
                            f"Workflow step {step_id} halted before completion at pipeline stage {stages[outcome.halted_at or 0].name}"
                        )
                    result = pipeline_step_result(sub_id, outcome.items, captured.getvalue())
                else:
                    result = synthetic_result(sub_id, stdin_value)
                scope[sub_id] = result
                iteration[sub_id] = result["json"] if "json" in result else result.get("stdout")
            iterations.append(iteration)
    except LobsterError as error:
        _emit_finished(run, step_id, started, "failed", None, error.message)
        raise _NeverSwallow(error.message) from None
    _emit_finished(run, step_id, started, "ok", None, None)
    run.results[step_id] = {"id": step_id, "json": iterations, "stdout": dumps_compact(iterations)}


def _merge(first: Any, second: Any) -> dict[str, Any]:
    merged: dict[str, Any] = dict(first) if isinstance(first, dict) else {}
    if isinstance(second, dict):
        merged.update(second)
    return merged


# -- parallel ------------------------------------------------------------------------------------


def _parallel_step(
    run: WorkflowRun, step: dict[str, Any], env: dict[str, str], cwd: str, step_signal: CancelSignal
) -> dict[str, Any]:
    """R-WF-110..114: run every branch at once; ``wait: any`` takes the first to settle."""
    from ..pipeline.engine import run_stages
    from ..pipeline.parser import parse_pipeline

    spec = step["parallel"]
    step_id = step["id"]
    wait_any = spec.get("wait", "all") == "any"
    branches: list[dict[str, Any]] = spec["branches"]
    signal = CancelSignal(parent=step_signal)
    timer = None
    if isinstance(spec.get("timeout_ms"), int):
        reason = f"Parallel step {step_id} timed out after {spec['timeout_ms']}ms"
        timer = threading.Timer(spec["timeout_ms"] / 1000, lambda: signal.abort(reason, timeout=True))
        timer.daemon = True
        timer.start()
    settled: list[tuple[str, dict[str, Any] | None, LobsterError | None]] = []
    done = threading.Condition()

    def run_branch(branch: dict[str, Any]) -> None:
        branch_id = branch["id"]
        try:
            branch_env = build_step_env(
                run.base_env, run.args, run.doc.get("env"), _merge(step.get("env"), branch.get("env")), run.args, run.results
            )
            branch_cwd = _step_cwd(run, branch.get("cwd"), step.get("cwd"))
            stdin_value = resolve_value(branch["stdin"], run.args, run.results) if branch.get("stdin") is not None else UNDEFINED
            if isinstance(branch.get("pipeline"), str) and branch["pipeline"].strip():
                text = resolve_template(branch["pipeline"], run.args, run.results)
                stages = parse_pipeline(text)
                captured = io.StringIO()
                ctx = run.context(env=branch_env, cwd=branch_cwd, stdout=captured, signal=signal)
                outcome = run_stages(stages, _items_from(stdin_value), ctx, events=run.events, allow_request_input=False)
                if outcome.halted:
                    raise LobsterRuntimeError(
                        f"Workflow step {branch_id} halted before completion at pipeline stage {stages[outcome.halted_at or 0].name}"
                    )
                result = pipeline_step_result(branch_id, outcome.items, captured.getvalue())
            elif isinstance(branch.get("run"), str) or isinstance(branch.get("command"), str):
                text = branch["run"] if isinstance(branch.get("run"), str) else branch["command"]
                command = resolve_template(text, run.args, run.results)
                result = _shell(branch_id, command, stdin_value, branch_env, branch_cwd, signal, run.events, "workflow")
            else:
                result = {"id": branch_id}
            outcome_entry: tuple[str, dict[str, Any] | None, LobsterError | None] = (branch_id, result, None)
        except LobsterError as error:
            outcome_entry = (branch_id, None, error)
        except Exception as error:  # a branch thread must always settle
            outcome_entry = (branch_id, None, LobsterRuntimeError(str(error)))
        with done:
            settled.append(outcome_entry)
            done.notify_all()

    threads = [threading.Thread(target=run_branch, args=(branch,), daemon=True) for branch in branches]
    for thread in threads:
        thread.start()
    try:
        with done:
            if wait_any:
                done.wait_for(lambda: bool(settled))
            else:
                done.wait_for(lambda: len(settled) == len(threads))
        if wait_any:
            winner_id, winner, failure = settled[0]
            signal.abort()
            deadline = time.monotonic() + 0.5
            for thread in threads:
                thread.join(max(0.0, deadline - time.monotonic()))
            if any(thread.is_alive() for thread in threads):
                raise LobsterRuntimeError("Parallel branches did not settle after cancellation")
            if failure is not None:
                raise failure
            assert winner is not None
            json_value = {winner_id: winner["json"]} if "json" in winner else {}
            return {"id": step_id, "json": json_value, "stdout": winner.get("stdout", ""), "__branches__": {winner_id: winner}}
        for thread in threads:
            thread.join()
        if signal.aborted and signal.reason and signal.reason.startswith("Parallel step"):
            raise LobsterRuntimeError(signal.reason)
        by_id = {branch_id: (result, error) for branch_id, result, error in settled}
        for branch in branches:
            result, error = by_id[branch["id"]]
            if error is not None:
                if isinstance(error, AbortError):
                    raise error
                raise LobsterRuntimeError(f"Parallel branch failed: {error.message}")
        results = {branch["id"]: by_id[branch["id"]][0] for branch in branches}
        json_value = {bid: res["json"] for bid, res in results.items() if res is not None and "json" in res}
        return {"id": step_id, "json": json_value, "stdout": dumps_compact(json_value), "__branches__": results}
    finally:
        if timer is not None:
            timer.cancel()


# -- composition ---------------------------------------------------------------------------------


def _workflow_step(
    run: WorkflowRun, step: dict[str, Any], path_text: str, env: dict[str, str], cwd: str, signal: CancelSignal
) -> dict[str, Any]:
    """R-WF-120..123: run a child workflow file; its gates are not supported."""
    step_id = step["id"]
    base_dir = Path(run.file_path).parent
    candidate = Path(path_text) if os.path.isabs(path_text) else base_dir / path_text
    try:
        canonical = str(candidate.resolve(strict=True))
    except (OSError, RuntimeError):
        raise LobsterRuntimeError(f"Workflow step {step_id} workflow file not found: {candidate.resolve()}") from None
    if canonical in run.chain:
        raise LobsterRuntimeError(f"Workflow step {step_id} creates a cycle: {canonical} is already being executed")
    doc = load_and_validate(canonical)
    provided: dict[str, Any] = {}
    for key, value in (step.get("workflow_args") or {}).items():
        provided[key] = resolve_template(value, run.args, run.results) if isinstance(value, str) else value
    child = WorkflowRun(
        doc=doc,
        file_path=canonical,
        args=resolve_args(doc, provided),
        mode=run.mode,
        base_env=env,
        cwd=cwd,
        ctx_factory=lambda **kw: run.ctx_factory(**{**kw, "on_non_retryable": run.mark_non_retryable}),
        events=run.events,
        signal=signal,
        stdin=run.stdin,
        stderr=run.stderr,
        chain=(*run.chain, canonical),
    )
    outcome = execute(child, 0)
    if outcome.pause is not None:
        noun = "approval" if outcome.pause.kind == "approval" else "input"
        raise LobsterRuntimeError(
            f"Workflow step {step_id} sub-workflow halted for {noun}. "
            "Sub-workflow approval/input gates are not supported in composition."
        )
    if run.cost is not None and child.cost is not None:
        run.cost.absorb(child.cost, step_id)
    items = outcome.output
    value: Any = items[0] if len(items) == 1 else items
    result: dict[str, Any] = {"id": step_id, "json": value}
    if not items:
        result["stdout"] = ""
    else:
        result["stdout"] = value if isinstance(value, str) else dumps_compact(value)
    return result
