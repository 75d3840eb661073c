"""The core is the runtime; it never imports Textual (DESIGN habit 1)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "lobster_tui" / "core"


def test_no_core_module_imports_textual() -> None:
    offenders = []
    for path in sorted(CORE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {name}" for name in names if name.split(".")[0] in ("textual", "rich")]
    assert offenders == []


def test_cli_run_path_does_not_load_textual_pydantic_or_jsonschema() -> None:
    code = (
        "import sys, io\n"
        "from lobster_tui.cli import run_cli\n"
        "out = io.StringIO()\n"
        "run_cli(['run', '--mode', 'tool', \"exec --json --shell 'echo [1]'\"], stdout=out, stderr=io.StringIO())\n"
        "heavy = [m for m in ('textual', 'pydantic', 'jsonschema') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


def test_cli_workflow_run_and_resume_skip_slow_stdlib_imports(tmp_path: Path) -> None:
    """Start-up is a feature (docs/ARCHITECTURE.md): ``dataclasses`` (with ``inspect``), ``random``,
    ``hashlib`` and ``base64`` cost milliseconds each; a run to an input gate and its resume need
    none of them (a first parse of a workflow file imports PyYAML, which loads base64)."""
    (tmp_path / "flow.lobster").write_text(
        "steps:\n  - id: ask\n    input:\n      prompt: Go?\n      responseSchema: {type: object}\n"
        "  - id: after\n    run: echo done\n"
    )
    code = (
        "import io, json, sys\n"
        "from lobster_tui.cli import run_cli\n"
        "out = io.StringIO()\n"
        "run_cli(sys.argv[1:], stdout=out, stderr=io.StringIO())\n"
        "print(out.getvalue())\n"
        "print('loaded:' + ','.join(m for m in ('dataclasses', 'inspect', 'random', 'hashlib', 'base64') if m in sys.modules))\n"
    )
    env = {**os.environ, "LOBSTER_STATE_DIR": str(tmp_path / "state")}

    def cli(*args: str) -> tuple[dict, list[str]]:
        result = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True, env=env, cwd=tmp_path
        )
        envelope, loaded = result.stdout.rsplit("loaded:", 1)
        return json.loads(envelope), [name for name in loaded.strip().split(",") if name]

    halted, loaded = cli("run", "--mode", "tool", str(tmp_path / "flow.lobster"))
    assert [name for name in loaded if name != "base64"] == []
    done, loaded = cli("resume", "--token", halted["requiresInput"]["resumeToken"], "--response-json", "{}")
    assert done["status"] == "ok", done
    assert loaded == []
