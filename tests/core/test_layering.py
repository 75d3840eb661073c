"""The core is the runtime; it never imports Textual (DESIGN habit 1)."""

from __future__ import annotations

import ast
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
    """Start-up is a feature (docs/ARCHITECTURE.md): ``dataclasses`` (with ``inspect``), ``random``
    and ``hashlib`` cost milliseconds each; a run to an input gate and its resume need none of them."""
    (tmp_path / "flow.lobster").write_text(
        "steps:\n  - id: ask\n    input:\n      prompt: Go?\n      responseSchema: {type: object}\n"
        "  - id: after\n    run: echo done\n"
    )
    code = (
        "import io, json, sys\n"
        "from lobster_tui.cli import run_cli\n"
        "slow = ('dataclasses', 'inspect', 'random', 'hashlib')\n"
        "out = io.StringIO()\n"
        "run_cli(['run', '--mode', 'tool', sys.argv[1]], stdout=out, stderr=io.StringIO())\n"
        "print(','.join(m for m in slow if m in sys.modules))\n"
        "token = json.loads(out.getvalue())['requiresInput']['resumeToken']\n"
        "out = io.StringIO()\n"
        "run_cli(['resume', '--token', token, '--response-json', '{}'], stdout=out, stderr=io.StringIO())\n"
        "assert json.loads(out.getvalue())['status'] == 'ok', out.getvalue()\n"
        "print(','.join(m for m in slow if m in sys.modules))\n"
    )
    env = {**os.environ, "LOBSTER_STATE_DIR": str(tmp_path / "state")}
    result = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "flow.lobster")],
        capture_output=True, text=True, check=True, env=env, cwd=tmp_path,
    )
    assert result.stdout.splitlines() == ["", ""], result.stdout
