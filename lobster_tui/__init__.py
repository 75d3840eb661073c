"""lobster-tui: a Lobster workflow runtime and a terminal inbox for its checkpoints."""

from __future__ import annotations

__version__ = "0.1.0"
