"""Pydantic models of the tool envelope (spec §2), the typed view of :mod:`.envelope`'s wire dicts.

``Envelope.from_wire(d)`` validates a wire envelope (ours, or one printed by the official runtime);
``Envelope.to_wire()`` gives back the dict with the reference's key order and optional keys omitted.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from . import envelope as wire

Status = Literal["ok", "needs_approval", "needs_input", "cancelled"]


class ApprovalRequest(BaseModel):
    """``requiresApproval`` (R-ENV-5)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    type: Literal["approval_request"] = "approval_request"
    prompt: str
    items: list[Any] = Field(default_factory=list)
    preview: str | None = None
    initiated_by: str | None = Field(default=None, alias="initiatedBy")
    required_approver: str | None = Field(default=None, alias="requiredApprover")
    require_different_approver: bool | None = Field(default=None, alias="requireDifferentApprover")
    resume_token: str = Field(alias="resumeToken")
    approval_id: str | None = Field(default=None, alias="approvalId")

    def to_wire(self) -> dict[str, Any]:
        data = self.model_dump(by_alias=True, exclude_none=True)
        return wire.approval_request(data)


class InputRequest(BaseModel):
    """``requiresInput`` (R-ENV-6). ``subject`` may be JSON null, so presence is tracked apart."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    type: Literal["input_request"] = "input_request"
    prompt: str
    response_schema: Any = Field(alias="responseSchema")
    defaults: Any = None
    subject: Any = None
    resume_token: str = Field(alias="resumeToken")

    def to_wire(self) -> dict[str, Any]:
        data = self.model_dump(by_alias=True, exclude_unset=True)
        data["resumeToken"] = self.resume_token
        data["responseSchema"] = self.response_schema
        return wire.input_request(data)


class ErrorInfo(BaseModel):
    """``error`` of an error envelope (R-ENV-2)."""

    type: Literal["parse_error", "runtime_error", "doctor_error"]
    message: str


class Envelope(BaseModel):
    """A whole tool envelope: success (``status``...) or error (``error``)."""

    model_config = ConfigDict(populate_by_name=True)

    protocol_version: Literal[1] = Field(default=1, alias="protocolVersion")
    ok: bool
    status: Status | None = None
    output: list[Any] = Field(default_factory=list)
    requires_approval: ApprovalRequest | None = Field(default=None, alias="requiresApproval")
    requires_input: InputRequest | None = Field(default=None, alias="requiresInput")
    error: ErrorInfo | None = None

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Envelope:
        return cls.model_validate(data)

    def to_wire(self) -> dict[str, Any]:
        if not self.ok:
            assert self.error is not None
            return wire.error(self.error.type, self.error.message)
        return wire.success(
            self.status or "ok",
            self.output,
            self.requires_approval.to_wire() if self.requires_approval else None,
            self.requires_input.to_wire() if self.requires_input else None,
        )
