"""The core is the runtime; it never imports Textual (DESIGN habit 1)."""

from __future__ import annotations

import ast
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
