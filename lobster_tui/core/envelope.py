"""Tool envelopes on the wire (spec §2): plain dicts in the reference's exact key order.

These builders are the only place that knows the key order of envelopes and requests. The typed
pydantic view of the same documents is :mod:`lobster_tui.core.models`; keeping the hot path on
plain dicts spares ``lobster run`` the cost of importing pydantic.
"""

from __future__ import annotations

from typing import Any

from .jsvalues import UNDEFINED

PROTOCOL_VERSION = 1

APPROVAL_KEY_ORDER = (
    "type",
    "prompt",
    "items",
    "preview",
    "initiatedBy",
    "requiredApprover",
    "requireDifferentApprover",
    "resumeToken",
    "approvalId",
)
INPUT_KEY_ORDER = ("type", "prompt", "responseSchema", "defaults", "subject", "resumeToken")


def _ordered(source: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    return {key: source[key] for key in order if key in source and source[key] is not UNDEFINED}


def approval_request(fields: dict[str, Any]) -> dict[str, Any]:
    """``requiresApproval`` with optional keys omitted (R-ENV-5)."""
    return _ordered({"type": "approval_request", **fields}, APPROVAL_KEY_ORDER)


def input_request(fields: dict[str, Any]) -> dict[str, Any]:
    """``requiresInput``: no ``items`` and no ``approvalId`` (R-ENV-6)."""
    return _ordered({"type": "input_request", **fields}, INPUT_KEY_ORDER)


def success(
    status: str,
    output: list[Any] | None = None,
    requires_approval: dict[str, Any] | None = None,
    requires_input: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A success envelope with exactly the six keys of R-ENV-1."""
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "ok": True,
        "status": status,
        "output": list(output or []),
        "requiresApproval": requires_approval,
        "requiresInput": requires_input,
    }


def error(error_type: str, message: str) -> dict[str, Any]:
    """An error envelope: ``protocolVersion``, ``ok: false`` and ``error`` only (R-ENV-2)."""
    return {"protocolVersion": PROTOCOL_VERSION, "ok": False, "error": {"type": error_type, "message": message}}


def exit_code(envelope: dict[str, Any]) -> int:
    """R-CLI-22: 0 for success statuses, 2 for parse errors, 1 otherwise."""
    if envelope.get("ok"):
        return 0
    return 2 if envelope.get("error", {}).get("type") == "parse_error" else 1
