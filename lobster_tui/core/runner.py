"""The one API both shells call: run a pipeline or a workflow file, resume or cancel a checkpoint.

``run_pipeline``, ``run_workflow`` and ``resume`` return an :class:`Outcome`; ``Outcome.envelope()``
is the tool envelope on the wire and ``Outcome.model()`` its pydantic view. This module owns the
checkpoint lifecycle of spec §8.6 and §9: writing resume states and approval indexes at a halt,
claiming a state before the first side effect of a resume (at most once, §9.6), and removing every
file a finished, rejected or cancelled checkpoint leaves (we fix the reference's leaks L-1..L-4).
"""

from __future__ import annotations

import io
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from . import envelope as wire
from .cancel import CancelSignal
from .errors import AbortError, LobsterError, LobsterParseError, LobsterRuntimeError
from .events import RunEvents, Subscriber, runner_process
from .jsvalues import UNDEFINED, dumps_pretty
from .pipeline.base import CommandContext, CommandRegistry, Mode, Stage
from .records import field, record
from .state import StateStore, is_consumed_marker, now_iso
from .tokens import decode_token, encode_token, kind_for_state_key

if TYPE_CHECKING:
    from .models import Envelope

DEFAULT_TIMEOUT_MS = 20000
_NOT_FOUND_MESSAGES = frozenset(
    {"Pipeline resume state not found", "Workflow resume state not found", "Resume state not found"}
)
DEFAULT_MAX_STDOUT_BYTES = 512000


@record
class RunContext:
    """Where and how a run happens. Shells build one; tests swap any part of it."""

    state: StateStore
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    cwd: str = field(default_factory=os.getcwd)
    mode: Mode = "tool"
    stdin: TextIO | None = None
    stdout: TextIO = field(default_factory=io.StringIO)
    stderr: TextIO = field(default_factory=io.StringIO)
    signal: CancelSignal = field(default_factory=CancelSignal)
    subscribers: list[Subscriber] = field(default_factory=list)
    registry: CommandRegistry | None = None
    # Host limits ("Our choices" 4): None disables a limit.
    timeout_ms: int | None = None
    max_stdout_bytes: int | None = None

    def commands(self) -> CommandRegistry:
        if self.registry is None:
            from .pipeline.commands import default_registry

            self.registry = default_registry()
        return self.registry

    def command_context(self, *, env: dict[str, str] | None = None, cwd: str | None = None,
                        stdout: TextIO | None = None, signal: CancelSignal | None = None,
                        on_non_retryable: Callable[[], None] | None = None) -> CommandContext:
        return CommandContext(
            env=self.env if env is None else env,
            cwd=self.cwd if cwd is None else cwd,
            mode=self.mode,
            registry=self.commands(),
            state=self.state,
            signal=self.signal if signal is None else signal,
            stdin=self.stdin,
            stdout=self.stdout if stdout is None else stdout,
            stderr=self.stderr,
            on_non_retryable_side_effect=on_non_retryable,
        )


@record
class Outcome:
    """What a run or resume ended with. ``status`` is an envelope status or ``error``."""

    status: str
    output: list[Any] = field(default_factory=list)
    requires_approval: dict[str, Any] | None = None
    requires_input: dict[str, Any] | None = None
    error_type: str | None = None
    error_message: str | None = None
    rendered: bool = False
    run_id: str | None = None
    state_key: str | None = None

    @classmethod
    def failure(cls, error: LobsterError, run_id: str | None = None) -> Outcome:
        return cls(status="error", error_type=error.error_type, error_message=error.message, run_id=run_id)

    @property
    def ok(self) -> bool:
        return self.status != "error"

    @property
    def not_found(self) -> bool:
        """The checkpoint was already resumed, cancelled or never existed (the envelope says only
        "... not found"), so a shell can tell "someone else was first" from other failures."""
        message = self.error_message or ""
        return self.status == "error" and (
            message in _NOT_FOUND_MESSAGES or (message.startswith('Approval ID "') and message.endswith("not found or expired"))
        )

    def envelope(self) -> dict[str, Any]:
        """The tool envelope of R-ENV-1/2 as a wire dict."""
        if self.status == "error":
            return wire.error(self.error_type or "runtime_error", self.error_message or "")
        return wire.success(self.status, self.output, self.requires_approval, self.requires_input)

    def model(self) -> Envelope:
        """The envelope as a validated pydantic model (imports pydantic on first use)."""
        from .models import Envelope

        return Envelope.from_wire(self.envelope())

    @property
    def exit_code(self) -> int:
        return wire.exit_code(self.envelope())


# -- limits --------------------------------------------------------------------------------------


class _CappedWriter:
    """Counts what the runtime writes to a stream and fails past the host cap (R-HOST-5)."""

    def __init__(self, target: TextIO, cap: int, name: str) -> None:
        self.target = target
        self.cap = cap
        self.name = name
        self.count = 0

    def write(self, text: str) -> int:
        self.count += len(text.encode("utf-8", "backslashreplace"))  # as the CLI writes lone surrogates
        if self.count > self.cap:
            raise LobsterRuntimeError(f"lobster {self.name} exceeded maxStdoutBytes")
        return self.target.write(text)

    def flush(self) -> None:
        self.target.flush()

    def isatty(self) -> bool:
        try:
            return self.target.isatty()
        except (AttributeError, ValueError):
            return False


def _with_limits(rc: RunContext, body: Callable[[], Outcome]) -> Outcome:
    """Apply the host timeout and output caps around one run or resume."""
    timer: threading.Timer | None = None
    if rc.timeout_ms is not None:
        signal = rc.signal
        timer = threading.Timer(rc.timeout_ms / 1000, lambda: signal.abort("lobster runtime timed out"))
        timer.daemon = True
        timer.start()
    saved = (rc.stdout, rc.stderr)
    if rc.max_stdout_bytes is not None:
        rc.stdout = _CappedWriter(rc.stdout, rc.max_stdout_bytes, "stdout")  # type: ignore[assignment]
        rc.stderr = _CappedWriter(rc.stderr, rc.max_stdout_bytes, "stderr")  # type: ignore[assignment]
    try:
        outcome = body()
    finally:
        if timer is not None:
            timer.cancel()
        rc.stdout, rc.stderr = saved
    if rc.max_stdout_bytes is not None and outcome.ok:
        size = len(dumps_pretty(outcome.envelope()).encode("utf-8", "backslashreplace"))
        if size > rc.max_stdout_bytes:
            return Outcome(
                status="error",
                error_type="runtime_error",
                error_message="lobster runtime result exceeded maxStdoutBytes",
                run_id=outcome.run_id,
            )
    return outcome


def _events_for(rc: RunContext, run_id: str | None = None) -> RunEvents:
    return RunEvents(run_id, list(rc.subscribers))


def _finish(events: RunEvents, started: float, outcome: Outcome, signal: CancelSignal | None = None) -> Outcome:
    """Emit ``run_finished`` for ``outcome``. An error after someone stopped the run (``signal.stopped``)
    is logged as ``cancelled``: the person asked for it. The envelope stays the spec's
    ``runtime_error`` (R-PROC-6; a fresh run's envelope is never ``cancelled``, R-ENV-4)."""
    outcome.run_id = events.run_id
    status = outcome.status
    if status == "error":
        status = "cancelled" if signal is not None and signal.stopped else "failed"
    events.emit(
        "run_finished",
        status=status,
        durationMs=round((time.monotonic() - started) * 1000),
        error=outcome.error_message,
    )
    return outcome


# -- pipelines -------------------------------------------------------------------------------------


def run_pipeline(text: str, rc: RunContext, *, dry_run: bool = False) -> Outcome:
    """Parse and run an inline pipeline (R-CLI-12, §4.4) with an empty input stream."""
    from .pipeline.parser import parse_pipeline

    try:
        stages = parse_pipeline(text)
    except LobsterParseError as error:
        return Outcome.failure(error)
    if dry_run:
        from .workflow.dryrun import plan_pipeline_dry_run

        try:
            rc.stderr.write(plan_pipeline_dry_run(stages, rc.commands()))
        except LobsterError as error:
            return Outcome.failure(error)
        return Outcome(status="ok")
    events = _events_for(rc)
    started = time.monotonic()
    events.emit("run_started", name=None, source="pipeline", target=text, args={}, cwd=rc.cwd, resumed=False,
                **runner_process())

    def body() -> Outcome:
        return _run_stages_and_finalise(rc, stages, [], events)

    return _finish(events, started, _with_limits(rc, lambda: _guard(body)), rc.signal)


def _guard(body: Callable[[], Outcome]) -> Outcome:
    """Turn any escaping failure into an error outcome: the user never sees a traceback."""
    try:
        return body()
    except LobsterError as error:
        return Outcome.failure(error)
    except RecursionError:
        return Outcome(status="error", error_type="runtime_error", error_message="Input is nested too deeply")
    except OSError as error:
        return Outcome(status="error", error_type="runtime_error", error_message=str(error))


def _run_stages_and_finalise(
    rc: RunContext,
    stages: list[Stage],
    items: list[Any],
    events: RunEvents,
    *,
    resume: _PipelineResume | None = None,
) -> Outcome:
    from .pipeline.engine import run_stages

    # In tool mode stdout carries only the envelope ("Our choices" 3, fixing S-3): renderers
    # write into a buffer that is dropped, and the envelope's output carries their items instead.
    ctx = rc.command_context(stdout=io.StringIO()) if rc.mode == "tool" else rc.command_context()
    outcome = run_stages(
        stages,
        items,
        ctx,
        events=events,
        before_unsafe=resume.claim if resume else None,
        same_stage=resume.same_stage if resume else None,
    )
    if not outcome.halted:
        if rc.mode == "tool" and outcome.rendered and not outcome.items:
            return Outcome(status="ok", output=outcome.rendered_items)
        return Outcome(status="ok", output=outcome.items, rendered=outcome.rendered)
    index = outcome.halted_at
    assert index is not None
    if outcome.suspension is not None:
        if rc.mode != "tool":
            raise LobsterRuntimeError("requestInput requires --mode tool when stdin is not interactive")
        pending = outcome.suspension.pending
        replay = outcome.replay_items if index == 0 or "suspendedState" not in pending else []
        metadata = pending["metadata"]
        state = {
            "pipeline": [stage.to_json() for stage in stages],
            "resumeAtIndex": index,
            "items": replay,
            "haltType": "input_request",
            "resumeMode": "same_stage",
            "inputSchema": metadata["responseSchema"],
            "prompt": metadata["prompt"],
            "commandInput": outcome.suspension.command_input(),
        }
        request = {k: metadata[k] for k in ("prompt", "responseSchema", "defaults", "subject") if k in metadata}
        return persist_checkpoint(rc, "pipeline", state, "input", request, events, resume)
    halt_items = outcome.items
    halt = halt_items[0] if len(halt_items) == 1 and isinstance(halt_items[0], dict) else None
    kind = halt.get("type") if halt else None
    if rc.mode != "tool" or kind not in ("approval_request", "input_request"):
        # Human mode prints the request as a plain result and saves nothing (R-PIPE-22).
        return Outcome(status="ok", output=halt_items, rendered=outcome.rendered)
    assert halt is not None
    if kind == "approval_request":
        state = {
            "pipeline": [stage.to_json() for stage in stages],
            "resumeAtIndex": index + 1,
            "items": halt.get("items", []),
            "haltType": "approval_request",
            "prompt": halt.get("prompt"),
        }
        request = {k: halt[k] for k in ("prompt", "items", "preview") if k in halt}
        return persist_checkpoint(rc, "pipeline", state, "approval", request, events, resume)
    state = {
        "pipeline": [stage.to_json() for stage in stages],
        "resumeAtIndex": index + 1,
        "items": [],
        "haltType": "input_request",
        "resumeMode": "next_stage",
        "inputSchema": halt.get("responseSchema"),
        "prompt": halt.get("prompt"),
    }
    request = {k: halt[k] for k in ("prompt", "responseSchema", "subject") if k in halt}
    request.setdefault("responseSchema", halt.get("responseSchema"))
    return persist_checkpoint(rc, "pipeline", state, "input", request, events, resume)


def persist_checkpoint(
    rc: RunContext,
    source: str,
    state: dict[str, Any],
    kind: str,
    request: dict[str, Any],
    events: RunEvents,
    resume: _Resume | None,
) -> Outcome:
    """Save a new gate of a ``pipeline`` or ``workflow`` run as a resume state (§8.6).

    A resumed run that halts again first consumes the checkpoint it came from and chains its key
    into ``supersededResumeStateKeys``, so completing the run later reclaims every marker.
    """
    superseded: list[str] = []
    if resume is not None:
        resume.claim()
        superseded = _dedupe([*resume.superseded, resume.key])
    state["supersededResumeStateKeys"] = superseded
    state["createdAt"] = now_iso()
    state["runId"] = events.run_id
    key = rc.state.new_resume_key(source)
    return _publish_checkpoint(rc, key, state, kind, request, events, resume)


def _publish_checkpoint(
    rc: RunContext,
    key: str,
    state: dict[str, Any],
    kind: str,
    request: dict[str, Any],
    events: RunEvents,
    resume: _Resume | None,
) -> Outcome:
    """Write a new resume state (and index) and retire the predecessor's index."""
    with rc.state.locked(key, rc.signal):
        rc.state.write_value(key, state)
    token = encode_token(kind_for_state_key(key), key)
    if resume is not None:
        rc.state.remove_approval_indexes_for_key(resume.key)
    if kind == "approval":
        approval_id = rc.state.create_approval_index(key)
        fields = {**request, "resumeToken": token}
        if approval_id is not None:
            fields["approvalId"] = approval_id
        events.emit("checkpoint", kind="approval", stateKey=key, approvalId=approval_id, prompt=request.get("prompt"))
        return Outcome(status="needs_approval", requires_approval=wire.approval_request(fields), state_key=key)
    events.emit("checkpoint", kind="input", stateKey=key, approvalId=None, prompt=request.get("prompt"))
    return Outcome(status="needs_input", requires_input=wire.input_request({**request, "resumeToken": token}), state_key=key)


def _dedupe(keys: list[str]) -> list[str]:
    seen: dict[str, None] = {}
    for key in keys:
        seen.setdefault(key, None)
    return list(seen)


# -- resume ----------------------------------------------------------------------------------------


class _Resume:
    """One resume of one checkpoint: the snapshot it started from and its claim."""

    not_found_message = "Resume state not found"

    def __init__(self, rc: RunContext, key: str, snapshot: dict[str, Any]) -> None:
        self.rc = rc
        self.key = key
        self.snapshot = snapshot
        self.claimed = False
        superseded = snapshot.get("supersededResumeStateKeys")
        self.superseded: list[str] = list(superseded) if isinstance(superseded, list) else []

    def claim(self) -> None:
        """Consume the checkpoint right before the first side effect (§9.6)."""
        if self.claimed:
            return
        if not self.rc.state.claim(self.key, self.snapshot, self.rc.signal):
            raise LobsterRuntimeError(self.not_found_message)
        self.claimed = True

    def complete(self) -> None:
        """The resumed run finished: remove its state, superseded markers and indexes."""
        # A remainder with no unsafe stage never claimed: claim now, so that of several racing
        # resumes of such a checkpoint exactly one reports success (the others: not found).
        self.claim()
        self.rc.state.delete_resume_state(self.key)
        for old in self.superseded:
            self._delete_if_marker(old)
        self.rc.state.remove_approval_indexes_for_key(self.key)

    def _delete_if_marker(self, key: str) -> None:
        try:
            with self.rc.state.locked(key, max_wait=1.0):
                if is_consumed_marker(self.rc.state.read_value(key)):
                    self.rc.state.delete_key(key)
        except (ValueError, LobsterError):
            pass

    def failed(self, error: LobsterError) -> None:
        """After a failure past the claim the token is dead; its index goes with it."""
        if not self.claimed:
            return
        self.rc.state.remove_approval_indexes_for_key(self.key)
        if isinstance(error, AbortError):
            self.rc.state.delete_resume_state(self.key, bounded=True)


class _PipelineResume(_Resume):
    not_found_message = "Pipeline resume state not found"

    def __init__(self, rc: RunContext, key: str, snapshot: dict[str, Any]) -> None:
        super().__init__(rc, key, snapshot)
        self.same_stage: Any = None


def resume(
    rc: RunContext,
    *,
    token: str | None = None,
    approval_id: str | None = None,
    approved: bool | None = None,
    response: Any = UNDEFINED,
    cancel: bool = False,
) -> Outcome:
    """Resume a checkpoint by token or approval ID (§9). Exactly one intent is expected.

    ``approved`` decides an approval, ``response`` answers an input request, ``cancel`` drops the
    checkpoint. Bad requests leave the checkpoint untouched and return a ``parse_error``.
    """
    try:
        key, via_id = _resolve_key(rc, token, approval_id)
    except LobsterError as error:
        return Outcome.failure(error)
    if key is None:
        return Outcome.failure(LobsterParseError("resume requires token or approvalId"))
    snapshot = _peek(rc, key)
    known_id = via_id or next(iter(rc.state.approval_ids_for_key(key)), None)
    if cancel:
        outcome = _guard(lambda: _cancel(rc, key, via_id))
        decision = "cancel"
    else:
        outcome = _with_limits(rc, lambda: _guard(lambda: _resume_key(rc, key, approved, response)))
        decision = "answer" if response is not UNDEFINED else "approve" if approved else "reject" if approved is False else "none"
    _journal(rc, key, known_id, snapshot, decision, response, outcome)
    return outcome


def _peek(rc: RunContext, key: str) -> Any:
    """The checkpoint as it was before the decision, for the audit journal."""
    try:
        return rc.state.read_value(key)
    except (ValueError, OSError, LobsterError, RecursionError):
        return None


def _journal(rc: RunContext, key: str, approval_id: str | None, snapshot: Any, decision: str, response: Any,
             outcome: Outcome) -> None:
    from . import audit

    request = outcome.requires_approval or outcome.requires_input or {}
    result = {"status": outcome.status, "error": outcome.error_message, "next": request.get("approvalId") or outcome.state_key}
    try:
        audit.record(rc.state, key=key, approval_id=approval_id, snapshot=snapshot, decision=decision,
                     approver=approver_identity(rc.env), response=response, outcome=result)
    except Exception as error:  # noqa: BLE001
        # The decision is already taken: a hostile snapshot, an answer too deep to hash or text that
        # cannot be encoded must not turn its envelope into a crash.
        rc.stderr.write(f"[WARN] could not write the audit journal: {type(error).__name__}: {error}\n")


def _resolve_key(rc: RunContext, token: str | None, approval_id: str | None) -> tuple[str | None, str | None]:
    from .state import normalise_key

    if approval_id is not None:
        state_key = rc.state.find_state_key_by_approval_id(approval_id)
        if state_key is None:
            raise LobsterParseError(f'Approval ID "{approval_id}" not found or expired')
        token = encode_token(kind_for_state_key(state_key), state_key)
    if token is None:
        return None, None
    decoded = decode_token(token)
    if decoded.legacy_inline is not None:
        # Legacy inline workflow tokens are never executed (our fix for S-22); cancel is allowed.
        return "legacy-inline", approval_id
    assert decoded.state_key is not None
    normalise_key(decoded.state_key)
    key = decoded.state_key
    if decoded.kind == "workflow-file":
        key = _existing_workflow_spelling(rc, key)
    return key, approval_id


def _existing_workflow_spelling(rc: RunContext, key: str) -> str:
    """R-TOKEN-7: fall back to the other spelling when only it exists."""
    try:
        if rc.state.key_path(key).exists():
            return key
    except OSError:
        return key
    if key.startswith("workflow_resume_"):
        other = "workflow-resume_" + key[len("workflow_resume_") :]
    elif key.startswith("workflow-resume_"):
        other = "workflow_resume_" + key[len("workflow-resume_") :]
    else:
        return key
    try:
        return other if rc.state.key_path(other).exists() else key
    except OSError:  # e.g. a name too long for the file system: no such state either way
        return key


def _cancel(rc: RunContext, key: str, via_id: str | None) -> Outcome:
    """R-RESUME-10: delete a live state; a marker or nothing at all is ``Resume state not found``."""
    if key == "legacy-inline":
        return Outcome(status="cancelled")
    keys = [key]
    if "resume_" in key and key.startswith(("workflow_resume_", "workflow-resume_")):
        tail = key.split("resume_", 1)[1]
        keys = _dedupe([key, f"workflow_resume_{tail}", f"workflow-resume_{tail}"])
    found_live = False
    found_marker = False
    superseded: list[str] = []
    run_id: str | None = None
    for candidate in keys:
        if not _names_resume_state(candidate):
            continue  # a token naming an index or a user key cancels nothing
        # Always the normalised name: a raw key like "../x" must not reach outside the directory.
        path = rc.state.key_path(candidate)
        with rc.state.locked(candidate, rc.signal):
            try:
                current = rc.state._read_path(path)
            except ValueError:
                current = {}  # corrupt: deleted like a live state
            if current is UNDEFINED:
                continue
            if is_consumed_marker(current):
                found_marker = True
                continue
            if isinstance(current, dict) and isinstance(current.get("supersededResumeStateKeys"), list):
                superseded.extend(k for k in current["supersededResumeStateKeys"] if isinstance(k, str))
            if isinstance(current, dict) and isinstance(current.get("runId"), str):
                run_id = current["runId"]
            path.unlink(missing_ok=True)
            found_live = True
    if found_marker or not found_live:
        return Outcome.failure(LobsterRuntimeError("Resume state not found"))
    for candidate in keys:
        rc.state.remove_approval_indexes_for_key(candidate)
    if via_id is not None:
        rc.state.remove_approval_index(via_id)
    cleaner = _Resume(rc, key, {"supersededResumeStateKeys": superseded})
    for old in superseded:
        cleaner._delete_if_marker(old)
    # The cancel ends the run it belongs to, in that run's own log.
    events = _events_for(rc, run_id)
    events.emit("resumed", stateKey=key, decision="cancel", approver=approver_identity(rc.env))
    events.emit("run_finished", status="cancelled", durationMs=0, error=None)
    return Outcome(status="cancelled", run_id=events.run_id)


def approver_identity(env: dict[str, str]) -> str | None:
    """``LOBSTER_APPROVAL_APPROVED_BY`` of the deciding process, trimmed (R-WF-64)."""
    value = (env.get("LOBSTER_APPROVAL_APPROVED_BY") or "").strip()
    return value or None


def _names_resume_state(key: str) -> bool:
    """True when ``key`` is stored as a resume-state file (not an approval index or a user key)."""
    from .state import RESUME_PREFIXES, normalise_key

    return normalise_key(key).startswith(RESUME_PREFIXES)


def _resume_key(rc: RunContext, key: str, approved: bool | None, response: Any) -> Outcome:
    if key == "legacy-inline":
        raise LobsterParseError("Invalid workflow token")
    if not _names_resume_state(key):
        raise LobsterRuntimeError("Resume state not found")
    if key.startswith("pipeline_resume_"):
        return _resume_pipeline(rc, key, approved, response)
    from .workflow.resume import resume_workflow

    return resume_workflow(rc, key, approved, response)


def load_pipeline_state(state: StateStore, key: str) -> dict[str, Any]:
    """Load and shape-check a pipeline resume state (R-STATE-21 validation)."""
    try:
        snapshot = state.read_value(key)
    except ValueError:
        raise LobsterRuntimeError("Invalid pipeline resume state") from None
    if not isinstance(snapshot, dict) or is_consumed_marker(snapshot):
        raise LobsterRuntimeError("Pipeline resume state not found")
    if not _pipeline_state_valid(snapshot):
        raise LobsterRuntimeError("Invalid pipeline resume state")
    return snapshot


def _pipeline_state_valid(s: dict[str, Any]) -> bool:
    from .pipeline.request_input import validate_command_input

    pipeline = s.get("pipeline")
    if not isinstance(pipeline, list):
        return False
    for stage in pipeline:
        if not (
            isinstance(stage, dict)
            and isinstance(stage.get("name"), str)
            and stage["name"]
            and isinstance(stage.get("args"), dict)
            and isinstance(stage.get("raw"), str)
        ):
            return False
    index = s.get("resumeAtIndex")
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index <= len(pipeline):
        return False
    if not isinstance(s.get("items"), list):
        return False
    superseded = s.get("supersededResumeStateKeys")
    if superseded is not None and not (isinstance(superseded, list) and all(isinstance(k, str) for k in superseded)):
        return False
    halt = s.get("haltType", "approval_request")
    mode = s.get("resumeMode")
    if halt not in ("approval_request", "input_request") or mode not in (None, "next_stage", "same_stage"):
        return False
    if halt == "approval_request":
        return mode != "same_stage" and "commandInput" not in s
    if "inputSchema" not in s or not isinstance(s.get("prompt"), str):
        return False
    if mode == "same_stage":
        return index < len(pipeline) and validate_command_input(s.get("commandInput"))
    return "commandInput" not in s


def _resume_pipeline(rc: RunContext, key: str, approved: bool | None, response: Any) -> Outcome:
    from .pipeline.engine import SameStageResume

    snapshot = load_pipeline_state(rc.state, key)
    rc.signal.raise_if_aborted()
    resume_state = _PipelineResume(rc, key, snapshot)
    stages = [Stage.from_json(stage) for stage in snapshot["pipeline"]][snapshot["resumeAtIndex"] :]
    items: list[Any] = list(snapshot["items"])
    is_input = snapshot.get("haltType") == "input_request"
    if not is_input:
        if response is not UNDEFINED:
            raise LobsterParseError("approval resumes require approved=true|false, not response")
        if approved is not True:
            return _reject(rc, key, snapshot, "Pipeline resume state not found")
        decision = "approve"
    else:
        if approved is not None or response is UNDEFINED:
            raise LobsterParseError("pipeline input resumes require response")
        _check_answer(rc, snapshot.get("inputSchema"), response, "pipeline input", "pipeline input response schema is invalid")
        decision = "answer"
        if snapshot.get("resumeMode") == "same_stage":
            command_input = snapshot["commandInput"]
            resume_state.same_stage = SameStageResume(
                history=command_input["history"], pending=command_input["pending"], answer=response
            )
        else:
            items = [response]
    events = _events_for(rc, snapshot.get("runId") if isinstance(snapshot.get("runId"), str) else None)
    started = time.monotonic()
    events.emit("resumed", stateKey=key, decision=decision, approver=approver_identity(rc.env))
    events.emit("run_started", name=None, source="pipeline", target=" | ".join(s.raw for s in stages),
                args={}, cwd=rc.cwd, resumed=True, **runner_process())
    try:
        outcome = _run_stages_and_finalise(rc, stages, items, events, resume=resume_state)
        if outcome.status == "ok":
            resume_state.complete()
    except LobsterError as error:
        resume_state.failed(error)
        return _finish(events, started, Outcome.failure(error), rc.signal)
    return _finish(events, started, outcome, rc.signal)


def _check_answer(rc: RunContext, schema: Any, response: Any, label: str, invalid_message: str) -> None:
    from .schema import SchemaCompileError, compile_schema, validation_failure

    try:
        # Ajv prints unknown-format warnings on stderr when it compiles (R-GEN-12).
        compiled = compile_schema(schema, warn=lambda line: rc.stderr.write(line + "\n"))
    except SchemaCompileError:
        raise LobsterParseError(invalid_message) from None
    failure = validation_failure(label, compiled, response)
    if failure:
        raise LobsterParseError(failure)


def _reject(rc: RunContext, key: str, snapshot: dict[str, Any], not_found: str) -> Outcome:
    """Delete an unconsumed state after ``--approve no`` and report ``cancelled``."""
    from .jsvalues import stable_stringify

    with rc.state.locked(key, rc.signal):
        try:
            current = rc.state.read_value(key)
        except ValueError:
            current = UNDEFINED
        if current is UNDEFINED or is_consumed_marker(current) or stable_stringify(current) != stable_stringify(snapshot):
            raise LobsterRuntimeError(not_found)
        rc.state.delete_key(key)
    cleaner = _Resume(rc, key, snapshot)
    for old in cleaner.superseded:
        cleaner._delete_if_marker(old)
    rc.state.remove_approval_indexes_for_key(key)
    events = _events_for(rc, snapshot.get("runId") if isinstance(snapshot.get("runId"), str) else None)
    events.emit("resumed", stateKey=key, decision="reject", approver=approver_identity(rc.env))
    events.emit("run_finished", status="cancelled", durationMs=0, error=None)
    return Outcome(status="cancelled", run_id=events.run_id)


# -- workflows ---------------------------------------------------------------------------------------


def run_workflow(path: str, rc: RunContext, *, args: Any = None, dry_run: bool = False) -> Outcome:
    """Load, validate and run a workflow file from its first step (§7)."""
    from .workflow.resume import start_workflow

    return _with_limits(rc, lambda: _guard(lambda: start_workflow(rc, path, args, dry_run=dry_run)))


def state_store_for(path: str | Path | None, env: dict[str, str] | None = None) -> StateStore:
    """The state directory a shell should use: an explicit path, else ``LOBSTER_STATE_DIR``."""
    return StateStore(path) if path else StateStore.from_env(env)
