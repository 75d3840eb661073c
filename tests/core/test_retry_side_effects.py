"""A workflow `retry` never repeats an attempt that already sent mail (R-WF-93, R-SAFE-4)."""

from __future__ import annotations

import os
import stat
import textwrap
from pathlib import Path

from tests.conftest import LobsterCli


def test_retry_stops_after_a_send_was_dispatched(lobster: LobsterCli, tmp_path: Path) -> None:
    sends = tmp_path / "sends"
    gog = tmp_path / "gog"
    gog.write_text(f"#!/bin/sh\necho sent >> {sends}\necho 'smtp hiccup' >&2\nexit 1\n")
    gog.chmod(gog.stat().st_mode | stat.S_IEXEC)
    wf = tmp_path / "mail.lobster"
    wf.write_text(textwrap.dedent("""\
        steps:
          - id: send
            pipeline: "gog.gmail.send"
            stdin: [{to: a@example.com, subject: hi, body: hello}]
            retry: {max: 3, delay_ms: 10}
        """))
    result = lobster("run", "--mode", "tool", str(wf), env={"GOG_BIN": str(gog)})
    assert result.json["ok"] is False
    assert sends.read_text().count("sent") == 1
    assert "[RETRY]" not in result.stderr


def test_retry_still_retries_plain_failures(lobster: LobsterCli, tmp_path: Path) -> None:
    attempts = tmp_path / "attempts"
    wf = tmp_path / "flaky.lobster"
    wf.write_text(f"steps:\n  - id: s\n    run: echo x >> {attempts}; exit 1\n    retry: {{max: 2, delay_ms: 10}}\n")
    result = lobster("run", "--mode", "tool", str(wf))
    assert result.json["ok"] is False and attempts.read_text().count("x") == 2
    assert os.path.exists(attempts)
