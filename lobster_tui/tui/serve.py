"""``lobster-tui --serve``: the same app in a browser, through textual-serve.

textual-serve runs one ``lobster-tui`` process per browser tab and relays its terminal over a web
socket. It is an optional extra (``pip install 'lobster-tui[serve]'``); without it ``--serve``
says how to get it. Bind to loopback unless you mean to: whoever reaches the port can decide.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from typing import TextIO

MISSING = (
    "lobster-tui --serve needs textual-serve, which is not installed.\n"
    "Install it with:  pip install 'lobster-tui[serve]'   (or: pip install textual-serve)"
)


def app_command(forward: Sequence[str]) -> str:
    """The shell command textual-serve runs for each browser session (this Python, this package)."""
    return " ".join(shlex.quote(part) for part in (sys.executable, "-m", "lobster_tui.tui", *forward))


def serve(host: str, port: int, forward: Sequence[str], *, stderr: TextIO | None = None) -> int:
    """Serve the app on ``http://host:port`` until interrupted; 1 when textual-serve is missing."""
    err = stderr or sys.stderr
    try:
        from textual_serve.server import Server
    except ImportError:
        err.write(MISSING + "\n")
        return 1
    if host not in ("127.0.0.1", "localhost", "::1"):
        err.write(f"warning: serving on {host}: anyone who can reach port {port} can approve checkpoints\n")
    Server(app_command(forward), host=host, port=port, title="lobster-tui").serve()
    return 0
