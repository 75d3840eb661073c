"""The wheel ships every package, the styles and the examples (pyproject lists packages by hand)."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_every_package_is_listed_in_pyproject() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {
        ".".join(init.parent.relative_to(REPO).parts)
        for init in (REPO / "lobster_tui").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found - listed == set()
    assert config["package-dir"] == {"lobster_tui.tcss": "tcss", "lobster_tui.examples": "examples"}
    assert list((REPO / "tcss").glob("*.tcss")) and list((REPO / "examples").glob("*.lobster"))


def test_an_installed_wheel_finds_its_styles_and_examples(tmp_path: Path) -> None:
    """Build the wheel, install it apart from the checkout, and look the data folders up from there.

    The checkout's own folders are the fallback of :mod:`lobster_tui.tui.resources`, so a test run
    from the checkout cannot tell a wheel that lacks them; this one imports the installed copy.
    """
    import subprocess
    import sys

    import shutil

    # A copy without build/ and *.egg-info: setuptools would ship stale files left there by an
    # earlier build, hiding a mapping that no longer ships anything.
    source = tmp_path / "source"
    skipped = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*cache", ".hypothesis")
    shutil.copytree(REPO, source, ignore=skipped)
    wheels = tmp_path / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(source)],
        capture_output=True, text=True, check=False,
    )
    assert built.returncode == 0, built.stderr
    [wheel] = wheels.glob("lobster_tui-*.whl")
    target = tmp_path / "installed"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        capture_output=True, text=True, check=False,
    )
    assert installed.returncode == 0, installed.stderr
    probe = (
        "import json, lobster_tui; from lobster_tui.tui import resources as r;"
        "print(json.dumps([lobster_tui.__file__, str(r.stylesheet()),"
        " sorted(p.name for p in r.examples_dir().glob('*.lobster'))]))"
    )
    # PYTHONPATH puts the installed copy ahead of the checkout's (editable) install.
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(target), "HOME": str(tmp_path)}
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, env=env, check=False)
    assert shown.returncode == 0, shown.stderr
    import json

    module, stylesheet, examples = json.loads(shown.stdout)
    assert Path(module).is_relative_to(target)
    assert Path(stylesheet).is_relative_to(target) and Path(stylesheet).is_file()
    assert examples == sorted(p.name for p in (REPO / "examples").glob("*.lobster"))
