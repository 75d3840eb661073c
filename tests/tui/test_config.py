"""The config file: where it is, what it may say, what happens when it says something wrong."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from lobster_tui.tui.config import Config, config_path, load_config, parse_duration
from lobster_tui.tui.screens.confirm import ConfirmScreen
from tests.tui.helpers import Lobster, MakeApp, settle
from tests.tui.test_triage import GATE

VALID = """\
theme = "gruvbox"
approver = "  alice  "
stale_after = "36h"
notifications = false
bell = false

[keymap]
"list.approve" = "v"
"app.history" = "h, 3"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_xdg_location_and_its_fallbacks() -> None:
    assert config_path({"XDG_CONFIG_HOME": "/x/conf", "HOME": "/home/a"}) == Path("/x/conf/lobster-tui/config.toml")
    # A relative XDG_CONFIG_HOME is invalid by the spec and ignored.
    assert config_path({"XDG_CONFIG_HOME": "conf", "HOME": "/home/a"}) == Path("/home/a/.config/lobster-tui/config.toml")
    assert config_path({"HOME": "/home/a"}) == Path("/home/a/.config/lobster-tui/config.toml")


def test_a_valid_file(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, VALID))
    assert config.problems == ()
    assert config.theme == "gruvbox"
    assert config.approver == "alice"
    assert config.stale_after == timedelta(hours=36)
    assert (config.notifications, config.bell) == (False, False)
    assert dict(config.keymap) == {"list.approve": "v", "app.history": "h,3"}


def test_no_file_means_defaults_and_found_through_the_environment(tmp_path: Path) -> None:
    assert load_config(env={"HOME": str(tmp_path)}) == Config()
    folder = tmp_path / "xdg" / "lobster-tui"
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text('bell = false\n', encoding="utf-8")
    found = load_config(env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert found.bell is False and found.path == folder / "config.toml"


def test_invalid_values_name_their_key_and_the_rest_still_applies(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, """\
theme = "no-such-theme"
approver = ""
stale_after = "soon"
notifications = "yes"
bell = false
colour = "red"

[keymap]
"list.approve" = 3
"list.reject" = "r"
"""))
    problems = "\n".join(config.problems)
    for key in ("'theme'", "'approver'", "'stale_after'", "'notifications'", "'colour'", "'keymap.list.approve'"):
        assert key in problems, key
    assert all(problem.startswith(str(tmp_path / "config.toml")) for problem in config.problems)
    assert "is not a Textual theme" in problems
    assert 'must be a duration such as "90m", "24h" or "2d"' in problems
    assert "must be true or false" in problems
    assert "unknown key 'colour'" in problems
    # Defaults for the bad keys, the good ones applied.
    assert config.theme is None and config.approver is None
    assert config.stale_after == timedelta(hours=24) and config.notifications is True
    assert config.bell is False
    assert dict(config.keymap) == {"list.reject": "r"}


def test_a_typo_gets_a_suggestion(tmp_path: Path) -> None:
    [problem] = load_config(write(tmp_path, "stale_afer = '2h'\n")).problems
    assert "unknown key 'stale_afer'" in problem and "did you mean 'stale_after'?" in problem


def test_broken_toml_and_a_missing_explicit_file_never_crash(tmp_path: Path) -> None:
    [problem] = load_config(write(tmp_path, "theme = \n")).problems
    assert "not valid TOML" in problem and "using the defaults" in problem
    [problem] = load_config(tmp_path / "absent.toml").problems
    assert "no such config file" in problem
    (tmp_path / "binary.toml").write_bytes(b"\xff\xfe")
    [problem] = load_config(tmp_path / "binary.toml").problems
    assert "not UTF-8" in problem


@pytest.mark.parametrize(
    ("value", "expected"),
    [("90m", timedelta(minutes=90)), ("2d", timedelta(days=2)), (" 12 H ", timedelta(hours=12)),
     (6, timedelta(hours=6)), (False, None), ("45s", timedelta(seconds=45))],
)
def test_durations(value: object, expected: timedelta | None) -> None:
    assert parse_duration(value) == expected


@pytest.mark.parametrize("value", ["0h", "-1h", 0, True, "1w", "", None])
def test_bad_durations(value: object) -> None:
    with pytest.raises(ValueError):
        parse_duration(value)


async def test_the_app_applies_theme_keymap_and_approver_and_says_what_it_could_not(
    tmp_path: Path, lobster: Lobster, make_app: MakeApp
) -> None:
    lobster.workflow("gate-1", text=GATE.format(n=1))
    config = load_config(write(tmp_path, VALID + '"list.aprove" = "z"\n'))
    app = make_app(lobster.root, config=config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        assert app.theme == "gruvbox"
        assert app.approver == "alice" and app.approver_source.startswith("config")
        # Said once at start, naming the key; the rest of the keymap works.
        [(title, message)] = [(n.title, n.message) for n in app._notifications]
        assert title == "Config" and "'keymap.list.aprove' names no key binding" in message
        assert "did you mean 'list.approve'?" in message
        await pilot.press("a")  # remapped away
        await pilot.pause()
        assert app.screen is app.inbox
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "Recorded approver: alice" in str(app.screen.query_one("#confirm-summary").render())
        await pilot.press("n", "h")
        await pilot.pause()
        assert type(app.screen).__name__ == "HistoryScreen"


async def test_the_command_line_approver_wins_over_the_config(lobster: Lobster, make_app: MakeApp) -> None:
    app = make_app(lobster.root, approver="bob", config=Config(approver="alice"))
    assert (app.approver, app.approver_source) == ("bob", "--approver")
    env_app = make_app(lobster.root, env={"LOBSTER_APPROVAL_APPROVED_BY": "erin"}, config=Config(approver="alice"))
    assert env_app.approver == "erin"


def test_the_command_line_prints_config_problems_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lobster_tui.tui import __main__ as cli
    from lobster_tui.tui.app import LobsterApp

    started: list[LobsterApp] = []
    monkeypatch.setattr(LobsterApp, "run", lambda self: started.append(self))
    bad = write(tmp_path, 'bell = "loud"\n[keymap]\n"no.such" = "z"\n')
    assert cli.main(["--state-dir", str(tmp_path / "state"), "--config", str(bad)]) == 0
    err = capsys.readouterr().err
    assert f"lobster-tui: config: {bad}: 'bell' must be true or false" in err
    assert "'keymap.no.such' names no key binding" in err
    [app] = started
    assert app.config.bell is True and app.config.path == bad
    assert cli.main(["--state-dir", str(tmp_path / "state"), "--config", str(tmp_path / "absent.toml")]) == 0
    assert "no such config file" in capsys.readouterr().err


def test_keymap_ids_of_screens_imported_on_first_use_are_known(lobster: Lobster, make_app: MakeApp) -> None:
    # The Runs screen's module is imported only when 2 is pressed; its ids are still valid.
    app = make_app(lobster.root, config=Config(keymap={"runs.refresh": "R", "list.sort": "O"}))
    assert app.config_problems == []
    assert app._keymap == {"runs.refresh": "R", "list.sort": "O"}
