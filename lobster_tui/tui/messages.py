"""Messages that cross screens: posted to the app by workers and screens.

Widget-specific messages live nested in their widget (``CheckpointList.Highlighted``, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from .decisions import Decision, DecisionResult


@dataclass
class DecisionStarted(Message):
    """A confirmed decision is now running in a worker."""

    decision: Decision


@dataclass
class DecisionFinished(Message):
    """The runner returned for a decision; the result says what happened, in words."""

    result: DecisionResult
    quiet: bool = False
    """Part of a bulk decision: the log shows it, one summary toast comes at the end."""
