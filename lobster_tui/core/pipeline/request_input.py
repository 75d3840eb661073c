"""Command-level input requests, ``ctx.request_input`` (spec §6).

A command may ask a structured question mid-run. Without an answer the whole run suspends at that
stage; on resume the stage re-runs from the top with its replayed input, earlier answers are
replayed from ``history`` and the pending one is delivered once.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

from ..errors import LobsterParseError, LobsterRuntimeError
from ..jsvalues import UNDEFINED, dumps_compact, stable_stringify

MAX_HISTORY = 100
MAX_REPLAY_ITEMS = 1000
MAX_REPLAY_BYTES = 1024 * 1024


class InputSuspension(Exception):
    """Raised inside a command to suspend the run until the request is answered."""

    def __init__(self, pending: dict[str, Any], history: list[dict[str, Any]]) -> None:
        super().__init__("input requested")
        self.pending = pending
        self.history = history

    def command_input(self) -> dict[str, Any]:
        return {"pending": self.pending, "history": self.history}


def _check_json(value: Any, field: str) -> None:
    """Plain JSON only: no non-finite numbers, no foreign objects (R-RI-2)."""

    def walk(item: Any) -> None:
        if item is None or isinstance(item, (bool, str)):
            return
        if isinstance(item, (int, float)):
            if isinstance(item, float) and not math.isfinite(item):
                raise ValueError
            return
        if isinstance(item, list):
            for element in item:
                walk(element)
            return
        if isinstance(item, dict):
            for element in item.values():
                walk(element)
            return
        raise ValueError

    try:
        walk(value)
    except (ValueError, RecursionError):
        raise LobsterRuntimeError(f"requestInput {field} must be JSON-serializable") from None


def request_signature(metadata: dict[str, Any]) -> str:
    """``stableStringify({prompt, responseSchema, defaults?, subject?})`` (R-RI-3)."""
    core = {k: metadata[k] for k in ("prompt", "responseSchema", "defaults", "subject") if k in metadata}
    return stable_stringify(core)


def validate_command_input(command_input: Any) -> bool:
    """Shape checks of stored ``commandInput`` (R-RI-8)."""
    if not isinstance(command_input, dict):
        return False
    pending = command_input.get("pending")
    history = command_input.get("history")
    if not isinstance(pending, dict) or not isinstance(history, list):
        return False

    def metadata_ok(metadata: Any) -> bool:
        return (
            isinstance(metadata, dict)
            and isinstance(metadata.get("prompt"), str)
            and metadata["prompt"] != ""
            and "responseSchema" in metadata
            and isinstance(metadata.get("signature"), str)
            and metadata["signature"] != ""
            and metadata["signature"] == request_signature(metadata)
        )

    index = pending.get("requestIndex")
    if not isinstance(index, int) or isinstance(index, bool) or index != len(history):
        return False
    if not metadata_ok(pending.get("metadata")):
        return False
    for position, entry in enumerate(history):
        if not isinstance(entry, dict) or entry.get("requestIndex") != position:
            return False
        if not metadata_ok(entry.get("metadata")) or "response" not in entry:
            return False
    return True


def replay_snapshot(items: list[Any]) -> list[Any]:
    """A deep copy of a stage's input for same-stage replay, within the R-RI-5 limits."""
    if len(items) > MAX_REPLAY_ITEMS:
        raise LobsterRuntimeError("requestInput replay item limit exceeded")
    try:
        size = len(dumps_compact(items).encode("utf-8"))
    except (TypeError, ValueError):
        raise LobsterRuntimeError("requestInput replay input must be JSON-serializable") from None
    if size > MAX_REPLAY_BYTES:
        raise LobsterRuntimeError("requestInput replay byte limit exceeded")
    return copy.deepcopy(items)


class StageInputRequester:
    """``ctx.request_input`` for one command run.

    ``answer`` is the pending answer of a resume (already validated against the stored schema by the
    runner); ``on_answer`` runs when it is consumed (the runner claims the checkpoint there unless
    the command is resume-safe after input). ``prompt_line`` reads an answer interactively, or is
    None where nobody can be asked (tool mode, non-TTY).
    """

    def __init__(
        self,
        *,
        history: list[dict[str, Any]] | None = None,
        pending: dict[str, Any] | None = None,
        answer: Any = UNDEFINED,
        on_answer: Callable[[], None] | None = None,
        prompt_line: Callable[[str], str] | None = None,
        wrote_output: Callable[[], bool] = lambda: False,
    ) -> None:
        self.history = copy.deepcopy(history or [])
        self.pending = pending
        self.answer = answer
        self.answer_consumed = pending is None
        self.on_answer = on_answer
        self.prompt_line = prompt_line
        self.wrote_output = wrote_output
        self.next_index = 0

    def get_suspended_state(self) -> Any:
        k = self.next_index
        if k < len(self.history):
            return copy.deepcopy(self.history[k].get("suspendedState", UNDEFINED))
        if self.pending is not None and not self.answer_consumed and self.pending.get("requestIndex") == k:
            return copy.deepcopy(self.pending.get("suspendedState", UNDEFINED))
        return UNDEFINED

    def __call__(
        self,
        *,
        prompt: Any,
        response_schema: Any,
        defaults: Any = UNDEFINED,
        subject: Any = UNDEFINED,
        suspended_state: Any = UNDEFINED,
    ) -> Any:
        from ..schema import SchemaCompileError, compile_schema, validation_failure

        if not isinstance(prompt, str) or prompt == "":
            raise LobsterRuntimeError("requestInput prompt is required")
        if response_schema is UNDEFINED or response_schema is None:
            raise LobsterRuntimeError("requestInput responseSchema is required")
        _check_json(response_schema, "responseSchema")
        for value, field in ((defaults, "defaults"), (subject, "subject"), (suspended_state, "suspendedState")):
            if value is not UNDEFINED:
                _check_json(value, field)
        try:
            compiled = compile_schema(response_schema)
        except SchemaCompileError:
            raise LobsterRuntimeError("requestInput response schema is invalid") from None

        metadata: dict[str, Any] = {"prompt": prompt, "responseSchema": response_schema}
        if defaults is not UNDEFINED:
            metadata["defaults"] = defaults
        if subject is not UNDEFINED:
            metadata["subject"] = subject
        metadata["signature"] = request_signature(metadata)
        k = self.next_index
        self.next_index += 1

        if k < len(self.history):
            entry = self.history[k]
            self._check_matches(entry, metadata, suspended_state)
            response = copy.deepcopy(entry["response"])
            failure = validation_failure("requestInput", compiled, response)
            if failure:
                raise LobsterParseError(failure)
            return response
        if self.pending is not None and not self.answer_consumed and self.pending.get("requestIndex") == k:
            self._check_matches(self.pending, metadata, suspended_state)
            failure = validation_failure("requestInput", compiled, self.answer)
            if failure:
                raise LobsterParseError(failure)
            entry = {**copy.deepcopy(self.pending), "response": copy.deepcopy(self.answer)}
            self.history.append(entry)
            self.answer_consumed = True
            if self.on_answer is not None:
                self.on_answer()
            return copy.deepcopy(self.answer)
        if self.prompt_line is not None:
            return self._ask_interactively(prompt, compiled)
        return self._suspend(k, metadata, suspended_state)

    def _check_matches(self, request: dict[str, Any], metadata: dict[str, Any], suspended_state: Any) -> None:
        stored = request.get("metadata", {})
        if stored.get("prompt") != metadata["prompt"] or stored.get("signature") != metadata["signature"]:
            raise LobsterRuntimeError("requestInput resume request does not match suspended request")
        stored_state = request.get("suspendedState", UNDEFINED)
        same = (stored_state is UNDEFINED and suspended_state is UNDEFINED) or (
            stored_state is not UNDEFINED
            and suspended_state is not UNDEFINED
            and stable_stringify(stored_state) == stable_stringify(suspended_state)
        )
        if not same:
            raise LobsterRuntimeError("requestInput resume state does not match suspended request")

    def _ask_interactively(self, prompt: str, compiled: Any) -> Any:
        from ..jsvalues import loads
        from ..schema import validation_failure

        assert self.prompt_line is not None
        text = self.prompt_line(f"{prompt}\n> ")
        try:
            response = loads(text)
        except ValueError:
            raise LobsterRuntimeError("requestInput response must be valid JSON") from None
        failure = validation_failure("requestInput", compiled, response)
        if failure:
            raise LobsterRuntimeError(failure)
        return response

    def _suspend(self, k: int, metadata: dict[str, Any], suspended_state: Any) -> Any:
        if self.wrote_output():
            raise LobsterRuntimeError("requestInput cannot suspend after this command has produced output")
        if len(self.history) >= MAX_HISTORY:
            raise LobsterRuntimeError("requestInput replay history limit exceeded")
        pending: dict[str, Any] = {"requestIndex": k, "metadata": metadata}
        if suspended_state is not UNDEFINED:
            pending["suspendedState"] = copy.deepcopy(suspended_state)
        raise InputSuspension(pending, copy.deepcopy(self.history))
