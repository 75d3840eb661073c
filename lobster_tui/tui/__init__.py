"""The Textual shell of Lobster: an inbox of pending checkpoints, decided through the core runner.

Nothing here is imported by ``lobster`` (the CLI), so Textual never slows a plain run down.
"""

from __future__ import annotations
