"""Resume tokens (spec §9.1): unsigned base64url pointers to a resume-state key."""

from __future__ import annotations

import binascii
import json
import re
from typing import Any, Literal

from .errors import LobsterParseError
from .jsvalues import dumps_compact
from .records import record

TokenKind = Literal["pipeline-resume", "workflow-file"]

_B64_CHARS = re.compile(r"[A-Za-z0-9_\-+/]*")
_TO_URLSAFE = str.maketrans("+/", "-_")
_TO_STANDARD = str.maketrans("-_", "+/")


@record(frozen=True)
class DecodedToken:
    """A decoded token. ``legacy_inline`` holds the state of an old inline workflow token."""

    kind: TokenKind
    state_key: str | None
    legacy_inline: dict[str, Any] | None = None


def encode_token(kind: TokenKind, state_key: str) -> str:
    """base64url (no padding) of ``{"protocolVersion":1,"v":1,"kind":K,"stateKey":S}`` (R-TOKEN-1)."""
    payload = dumps_compact({"protocolVersion": 1, "v": 1, "kind": kind, "stateKey": state_key})
    # binascii directly: the base64 module would add ~2 ms of imports (struct) to every resume.
    standard = binascii.b2a_base64(payload.encode("utf-8"), newline=False).decode("ascii")
    return standard.translate(_TO_URLSAFE).rstrip("=")


def kind_for_state_key(state_key: str) -> TokenKind:
    """R-TOKEN-3: the kind of a token minted from an approval ID."""
    return "pipeline-resume" if state_key.startswith("pipeline_resume_") else "workflow-file"


def _lenient_b64decode(token: str) -> bytes:
    # Like the reference: whitespace ignored, both alphabets, padding optional, and decoding
    # stops at the first character outside the alphabet (trailing garbage is ignored).
    compact = "".join(str(token).split())
    compact = compact.split("=", 1)[0]
    match = _B64_CHARS.match(compact)
    body = (match.group(0) if match else "").translate(_TO_STANDARD)
    usable = len(body) - (len(body) % 4 == 1)
    body = body[:usable]
    return binascii.a2b_base64(body + "=" * (-len(body) % 4))


def decode_token(token: str) -> DecodedToken:
    """Decode and check a token (R-TOKEN-2); every failure is a ``parse_error``."""
    try:
        payload = json.loads(_lenient_b64decode(token).decode("utf-8"))
    except (ValueError, UnicodeDecodeError, binascii.Error, RecursionError):
        raise LobsterParseError("Invalid token") from None
    if payload is None or isinstance(payload, (str, int, float, bool)):
        raise LobsterParseError("Invalid token")
    if not isinstance(payload, dict) or payload.get("protocolVersion") != 1 or isinstance(
        payload.get("protocolVersion"), bool
    ):
        raise LobsterParseError("Unsupported protocol version")
    if payload.get("v") != 1 or isinstance(payload.get("v"), bool):
        raise LobsterParseError("Unsupported token version")
    kind = payload.get("kind")
    state_key = payload.get("stateKey")
    has_key = isinstance(state_key, str) and state_key != ""
    if kind == "workflow-file":
        if has_key:
            return DecodedToken("workflow-file", state_key)
        legacy_ok = (
            isinstance(payload.get("filePath"), str)
            and isinstance(payload.get("resumeAtIndex"), (int, float))
            and not isinstance(payload.get("resumeAtIndex"), bool)
            and isinstance(payload.get("steps"), dict)
            and isinstance(payload.get("args"), dict)
        )
        if not legacy_ok:
            raise LobsterParseError("Invalid workflow token")
        return DecodedToken("workflow-file", None, legacy_inline=payload)
    if kind == "pipeline-resume" and has_key:
        return DecodedToken("pipeline-resume", state_key)
    raise LobsterParseError("Invalid token")
