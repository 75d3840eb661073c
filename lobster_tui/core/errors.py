"""Errors that become error envelopes (spec R-ENV-2, R-ENV-3).

Every failure the runtime reports to a user is one of these; anything else escaping the core is a
bug, and the CLI turns it into a ``runtime_error`` envelope rather than a traceback.
"""

from __future__ import annotations

from typing import Literal

ErrorType = Literal["parse_error", "runtime_error", "doctor_error"]


class LobsterError(Exception):
    """A failure reported as an error envelope; ``error_type`` picks its type and exit code."""

    error_type: ErrorType = "runtime_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class LobsterParseError(LobsterError):
    """The request could not be understood (exit code 2)."""

    error_type: ErrorType = "parse_error"


class LobsterRuntimeError(LobsterError):
    """Execution failed (exit code 1)."""

    error_type: ErrorType = "runtime_error"


class AbortError(LobsterRuntimeError):
    """The run was cancelled or timed out; the message is the abort reason (R-PROC-6)."""
