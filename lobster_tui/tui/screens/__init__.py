"""Screens of ``lobster-tui``: the inbox, a checkpoint's review and answer screens, modals, help."""

from __future__ import annotations
