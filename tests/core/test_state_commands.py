"""state.get / state.set / diff.last and commands.list (spec §5.14, §5.15, §5.19, C-40)."""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from lobster_tui.core.errors import LobsterRuntimeError
from lobster_tui.core.jsvalues import UNDEFINED, dumps_compact
from lobster_tui.core.pipeline.base import CommandContext, CommandRegistry, CommandSpec, command
from lobster_tui.core.pipeline.commands import data, discovery, render, state_cmds, template
from lobster_tui.core.pipeline.parser import parse_stage
from lobster_tui.core.state import StateStore


@pytest.fixture
def state_root(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def state_ctx(state_root: Path, tmp_path: Path) -> CommandContext:
    return CommandContext(
        env={},
        cwd=str(tmp_path),
        mode="tool",
        registry=CommandRegistry([*state_cmds.COMMANDS, *discovery.COMMANDS]),
        state=StateStore(state_root),
        stdout=io.StringIO(),
    )


def run(ctx: CommandContext, stage_text: str, items: list[Any] | None = None) -> list[Any]:
    stage = parse_stage(stage_text)
    spec = ctx.registry.get(stage.name)
    assert spec is not None
    return spec.run(list(items or []), stage.args, ctx).output


def leftovers(root: Path) -> list[str]:
    """Anything but finished .json files: locks and temp files must never stay behind."""
    return sorted(p.name for p in root.iterdir() if not p.name.endswith(".json") or p.name.startswith("."))


# -- C-40 -----------------------------------------------------------------------------------------


def test_c40_state_set_then_get(state_ctx: CommandContext, state_root: Path) -> None:
    assert run(state_ctx, "state.set 'My Key/x'", [1, 2]) == [[1, 2]]
    path = state_root / "my_key_x.json"
    assert path.read_text(encoding="utf-8") == "[\n  1,\n  2\n]\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert run(state_ctx, "state.get 'My Key/x'") == [[1, 2]]
    assert leftovers(state_root) == []


def test_c40_state_get_missing_key_is_null(state_ctx: CommandContext) -> None:
    assert run(state_ctx, "state.get nothing") == [None]


def test_c40_diff_last_twice(state_ctx: CommandContext, state_root: Path) -> None:
    first = run(state_ctx, "diff.last --key snap", [{"a": 1}])
    second = run(state_ctx, "diff.last --key snap", [{"a": 1}])
    assert first == [{"kind": "diff.last", "key": "snap", "changed": True, "before": None, "after": {"a": 1}}]
    assert second == [{"kind": "diff.last", "key": "snap", "changed": False, "before": {"a": 1}, "after": {"a": 1}}]
    assert list(second[0]) == ["kind", "key", "changed", "before", "after"]
    assert stat.S_IMODE(os.stat(state_root / "snap.json").st_mode) == 0o600
    assert leftovers(state_root) == []


# -- state.get / state.set --------------------------------------------------------------------------


def test_state_set_stores_single_item_as_itself_and_none_as_empty_array(state_ctx: CommandContext) -> None:
    assert run(state_ctx, "state.set one", [{"a": 1}]) == [{"a": 1}]
    assert run(state_ctx, "state.get one", ["ignored input"]) == [{"a": 1}]
    assert run(state_ctx, "state.set none") == [[]]
    assert run(state_ctx, "state.get none") == [[]]


def test_state_set_of_undefined_stores_null(state_ctx: CommandContext, state_root: Path) -> None:
    # The reference would write the text "undefined"; we keep the file valid JSON.
    assert dumps_compact(run(state_ctx, "state.set u", [UNDEFINED])) == "[null]"
    assert (state_root / "u.json").read_text(encoding="utf-8") == "null\n"


def test_state_set_preserves_an_existing_files_mode(state_ctx: CommandContext, state_root: Path) -> None:
    run(state_ctx, "state.set k", [1])
    os.chmod(state_root / "k.json", 0o640)
    run(state_ctx, "state.set k", [2])
    assert stat.S_IMODE(os.stat(state_root / "k.json").st_mode) == 0o640


def test_state_get_rejects_malformed_json(state_ctx: CommandContext, state_root: Path) -> None:
    state_root.mkdir()
    (state_root / "k.json").write_text('{"a":', encoding="utf-8")
    with pytest.raises(LobsterRuntimeError):
        run(state_ctx, "state.get k")
    assert leftovers(state_root) == []


@pytest.mark.parametrize(
    ("stage", "message"),
    [
        ("state.get", "state.get requires a key"),
        ("state.get --key x", "state.get requires a key"),
        ("state.set", "state.set requires a key"),
        ("state.get _", "state key is empty/invalid"),
        ("state.set ___", "state key is empty/invalid"),
        ("diff.last", "diff.last requires --key"),
        ("diff.last --key=", "diff.last requires --key"),
        ("diff.last --key= pos", "diff.last requires --key"),
        ("diff.last --key=_", "state key is empty/invalid"),
    ],
)
def test_state_command_errors(state_ctx: CommandContext, stage: str, message: str) -> None:
    with pytest.raises(LobsterRuntimeError) as caught:
        run(state_ctx, stage, [1])
    assert caught.value.message == message


# -- diff.last ------------------------------------------------------------------------------------------


def test_diff_last_positional_key_and_key_flag_precedence(state_ctx: CommandContext) -> None:
    assert run(state_ctx, "diff.last pos", [1])[0]["key"] == "pos"
    assert run(state_ctx, "diff.last --key=k pos", [1])[0]["key"] == "k"


def test_diff_last_bare_key_flag_is_true(state_ctx: CommandContext, state_root: Path) -> None:
    out = run(state_ctx, "diff.last --key", [1])
    assert out[0]["key"] is True
    assert (state_root / "true.json").exists()


def test_diff_last_compares_with_stable_stringify(state_ctx: CommandContext) -> None:
    run(state_ctx, "diff.last k", [{"a": 1, "b": 2}])
    assert run(state_ctx, "diff.last k", [{"b": 2, "a": 1}])[0]["changed"] is False
    assert run(state_ctx, "diff.last k", [{"b": 2, "a": 2}])[0]["changed"] is True


def test_diff_last_first_null_is_unchanged(state_ctx: CommandContext) -> None:
    assert run(state_ctx, "diff.last k", [None])[0]["changed"] is False


def test_diff_last_of_many_items_stores_the_array(state_ctx: CommandContext, state_root: Path) -> None:
    out = run(state_ctx, "diff.last k", [1, 2])
    assert out[0]["after"] == [1, 2]
    assert json.loads((state_root / "k.json").read_text(encoding="utf-8")) == [1, 2]


def test_diff_last_treats_a_corrupt_snapshot_as_null(state_ctx: CommandContext, state_root: Path) -> None:
    state_root.mkdir()
    (state_root / "k.json").write_text('{"a":', encoding="utf-8")
    out = run(state_ctx, "diff.last k", [{"a": 1}])
    assert out[0]["before"] is None and out[0]["changed"] is True
    assert json.loads((state_root / "k.json").read_text(encoding="utf-8")) == {"a": 1}


def test_state_commands_side_effects() -> None:
    effects = {spec.name: spec.side_effects for spec in state_cmds.COMMANDS}
    assert effects == {"state.get": ["reads_state"], "state.set": ["writes_state"], "diff.last": ["writes_state"]}


# -- commands.list --------------------------------------------------------------------------------


def test_commands_list_describes_every_command_sorted(state_ctx: CommandContext) -> None:
    state_ctx.registry = CommandRegistry(
        [*data.COMMANDS, *render.COMMANDS, *template.COMMANDS, *state_cmds.COMMANDS, *discovery.COMMANDS]
    )
    out = run(state_ctx, "commands.list")
    names = [entry["name"] for entry in out]
    assert names == sorted(names)
    assert names == [
        "commands.list", "dedupe", "diff.last", "groupBy", "head", "json", "map", "pick", "sort",
        "state.get", "state.set", "table", "template", "where",
    ]
    for entry in out:
        assert list(entry) == ["name", "description", "argsSchema", "examples", "sideEffects"]
        assert isinstance(entry["description"], str) and entry["argsSchema"]["type"] == "object"
    by_name = {entry["name"]: entry for entry in out}
    assert by_name["state.get"]["sideEffects"] == ["reads_state"]
    assert by_name["diff.last"]["sideEffects"] == ["writes_state"]
    assert by_name["where"]["sideEffects"] == []


def test_commands_list_reports_missing_metadata_as_null(state_ctx: CommandContext) -> None:
    @command("bare")
    def bare(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> Any:
        raise AssertionError("not run")

    state_ctx.registry = CommandRegistry([bare, *discovery.COMMANDS])
    assert run(state_ctx, "commands.list")[0] == {
        "name": "bare",
        "description": None,
        "argsSchema": None,
        "examples": None,
        "sideEffects": [],
    }


def test_commands_list_entries_are_copies(state_ctx: CommandContext) -> None:
    spec: CommandSpec = state_cmds.COMMANDS[0]
    state_ctx.registry = CommandRegistry([spec, *discovery.COMMANDS])
    entry = run(state_ctx, "commands.list")[1]
    entry["argsSchema"]["properties"].clear()
    assert spec.args_schema is not None and spec.args_schema["properties"]
