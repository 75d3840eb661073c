"""Templates, step references and step environments (spec §7.3, §7.4; C-25, C-27)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lobster_tui.core.errors import LobsterRuntimeError
from lobster_tui.core.jsvalues import UNDEFINED
from lobster_tui.core.workflow.templates import (
    build_step_env,
    lookup_ref,
    parse_strict_ref,
    resolve_args_template,
    resolve_step_refs,
    resolve_template,
    resolve_value,
)

A_JSON = {"x": {"y": [10, 20]}, "s": "str", "n": None, "b": True, "f": 1.5, "o": {"k": [1, "2"]}, "e": ""}
A_STDOUT = json.dumps(A_JSON, separators=(",", ":")) + "\n"
RESULTS: dict[str, Any] = {
    "a": {"id": "a", "stdout": A_STDOUT, "json": A_JSON},
    "gate": {"id": "gate", "approved": True},
    "skip": {"id": "skip", "skipped": True},
}
ARGS: dict[str, Any] = {
    "obj": {"a": 1},
    "list": [1, None, [2, 3]],
    "nul": None,
    "t": True,
    "big": 1e21,
    "frac": 1.5,
    "ref": "$a.json.s",
}

# One shell line exercising every rendering rule; the expected text is what the official runtime
# printed for the same workflow (see test_template_rendering_matches_the_official_runtime).
TEMPLATE_LINE = (
    "printf '%s|' '${obj}' '${list}' '${nul}' '${t}' '${big}' '${frac}' '${ref}' '${nope}' '${a.b}' "
    "'$a.json.x.y.1' '$a.json.nope' '$a.approved' '$a.skipped' '$a.json.approved' '$a.json.x' '$a.json.s' "
    "'$a.json.n' '$a.json.b' '$a.json.f' '$a.json.o.k.1' '$a.json.x-y' '$HOME.json' '$a.id' '$a.json.s.length' "
    "'$a.json.x.y.01' '$a.json.e' '$a.stdout'"
)
TEMPLATE_OUTPUT = (
    "[object Object]|1,,2,3|null|true|1e+21|1.5|str|${nope}|${a.b}|20||false|false||"
    '{"y":[10,20]}|str||true|1.5|2|{"y":[10,20]}-y|$HOME.json|a||20||' + A_STDOUT + "|"
)


def _shell(command: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, check=True, env=env).stdout


def test_template_rendering_rules() -> None:
    assert _shell(resolve_template(TEMPLATE_LINE, ARGS, {"a": RESULTS["a"]})) == TEMPLATE_OUTPUT


def test_c27_template_edge_cases() -> None:
    line = "printf '%s|' \"${obj}\" \"${list}\" \"${nul}\" \"$a.json.x.y.1\" \"$a.json.nope\" \"$a.approved\""
    args = {"obj": {"a": 1}, "list": [1, 2], "nul": None}
    results = {"a": {"id": "a", "stdout": '{"x":{"y":[10,20]}}\n', "json": {"x": {"y": [10, 20]}}}}
    assert _shell(resolve_template(line, args, results)) == "[object Object]|1,2|null|20||false|"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("${obj}", "[object Object]"),
        ("${list}", "1,,2,3"),
        ("${nul} ${t} ${big} ${frac}", "null true 1e+21 1.5"),
        ("${nope} ${a.b} ${} $obj {obj}", "${nope} ${a.b} ${} $obj {obj}"),
        ("${ref}", "$a.json.s"),
        ("${t}${t}", "truetrue"),
    ],
)
def test_resolve_args_template(text: str, expected: str) -> None:
    assert resolve_args_template(text, ARGS) == expected


def test_an_arg_holding_a_step_reference_is_expanded_by_the_second_pass() -> None:
    assert resolve_template("${ref}!", ARGS, RESULTS) == "str!"


def test_only_own_args_are_substituted() -> None:
    assert resolve_args_template("${constructor} ${__proto__} ${toString}", {}) == "${constructor} ${__proto__} ${toString}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$gate.approved $skip.skipped", "true true"),
        ("$gate.skipped $skip.approved", "false false"),
        ("$gate.approvedX", ""),
        ("$gate.json.approved", ""),
        ("$missing.json $HOME.stdout", "$missing.json $HOME.stdout"),
        ("$a.json.x.y.2 $a.json.x.y.-1", " [10,20].-1"),
        ("$a.json.s.0 $a.json.f.1", " "),
        ("x$a.json.s.", "xstr."),
        ("$$a.json.s", "$str"),
        ("$a.json.o", '{"k":[1,"2"]}'),
    ],
)
def test_resolve_step_refs(text: str, expected: str) -> None:
    assert resolve_step_refs(text, RESULTS) == expected


@pytest.mark.parametrize(
    ("step_id", "path", "expected"),
    [
        ("a", "json.x.y.1", 20),
        ("a", "json.x.y.01", 20),
        ("a", "json.x.y.0x1", 20),
        ("a", "json.x.y.1e0", 20),
        ("a", "json.x.y.1_0", UNDEFINED),
        ("a", "json.x.y.2", UNDEFINED),
        ("a", "json.x.y.length", UNDEFINED),
        ("a", "json.s.length", UNDEFINED),
        ("a", "json.n", None),
        ("a", "json.n.deeper", UNDEFINED),
        ("a", "json.constructor", UNDEFINED),
        ("a", "id", "a"),
        ("missing", "json", UNDEFINED),
    ],
)
def test_lookup_ref(step_id: str, path: str, expected: Any) -> None:
    value = lookup_ref(RESULTS, step_id, path)
    assert value is UNDEFINED if expected is UNDEFINED else value == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$a.json", ("a", "json")),
        ("  $b-c.json.x.0 \n", ("b-c", "json.x.0")),
        ("$a.json ", ("a", "json")),
        ("$a.json.x-y", None),
        ("$a", None),
        ("$a.", None),
        ("x $a.json", None),
        ("$a.json $b.json", None),
        ("${a}", None),
        ("", None),
    ],
)
def test_parse_strict_ref(text: str, expected: tuple[str, str] | None) -> None:
    assert parse_strict_ref(text) == expected


def test_resolve_value_for_stdin_and_for_each() -> None:
    assert resolve_value(None, ARGS, RESULTS) is None
    assert resolve_value(UNDEFINED, ARGS, RESULTS) is None
    assert resolve_value(" $a.json.x ", ARGS, RESULTS) == {"y": [10, 20]}
    assert resolve_value("$a.json.nope", ARGS, RESULTS) is UNDEFINED
    assert resolve_value("$a.stdout", ARGS, RESULTS) == A_STDOUT
    assert resolve_value("got $a.json.s and ${frac}", ARGS, RESULTS) == "got str and 1.5"
    assert resolve_value("", ARGS, RESULTS) == ""
    # Mappings and lists are passed as they are, without templates resolved inside them (R-WF-24).
    assert resolve_value({"k": "$a.json.s"}, ARGS, RESULTS) == {"k": "$a.json.s"}
    assert resolve_value([1, "${t}"], ARGS, RESULTS) == [1, "${t}"]
    assert resolve_value(5, ARGS, RESULTS) == 5
    assert resolve_value(False, ARGS, RESULTS) is False


@pytest.mark.parametrize("value", ["$missing.stdout", "  $missing.json.x  ", "$HOME.json"])
def test_a_strict_ref_to_an_unknown_step_fails(value: str) -> None:
    with pytest.raises(LobsterRuntimeError) as caught:
        resolve_value(value, ARGS, RESULTS)
    assert caught.value.message == f"Unknown step reference: {value.strip()[1:]}"


def test_c25_args_reach_the_environment_verbatim() -> None:
    text = 'hello "world" $HOME `backticks` $(whoami)'
    args = {"text": text, "__edge__key__": "preserved"}
    env = build_step_env({"PATH": os.environ["PATH"]}, args, None, None, args, {})
    printed = _shell('printf \'%s|%s\' "$LOBSTER_ARG_TEXT" "$LOBSTER_ARG_EDGE_KEY"', env)
    assert printed == f"{text}|preserved"
    assert json.loads(env["LOBSTER_ARGS_JSON"]) == args


def test_step_environment_layers() -> None:
    base = {"PATH": "/bin", "KEEP": "base", "LOBSTER_ARG_X": "from base"}
    args = {"x": {"k": 1}, "list": [1, None, [2, 3]], "nul": None, "flag": True, "user-id": "u1", "USER_ID": "u2", "---": "gone"}
    workflow_env = {"KEEP": "workflow", "W": "${x}", "NUM": 5, "BOOL": True, "FROM_A": "$a.json.s"}
    step_env = {"W": "step $gate.approved", "NULL": None}
    env = build_step_env(base, args, workflow_env, step_env, {"x": "templated"}, RESULTS)
    assert env == {
        "PATH": "/bin",
        "KEEP": "workflow",
        "LOBSTER_ARG_X": "[object Object]",
        "LOBSTER_ARGS_JSON": '{"x":{"k":1},"list":[1,null,[2,3]],"nul":null,"flag":true,"user-id":"u1","USER_ID":"u2","---":"gone"}',
        "LOBSTER_ARG_LIST": "1,,2,3",
        "LOBSTER_ARG_NUL": "null",
        "LOBSTER_ARG_FLAG": "true",
        # Names collide after normalisation; the later arg wins (R-WF-13).
        "LOBSTER_ARG_USER_ID": "u2",
        "W": "step true",
        "FROM_A": "str",
    }
    assert base == {"PATH": "/bin", "KEEP": "base", "LOBSTER_ARG_X": "from base"}


def test_env_maps_that_are_not_mappings_add_nothing() -> None:
    env = build_step_env({}, {}, ["A=1"], "B=2", {}, {})
    assert env == {"LOBSTER_ARGS_JSON": "{}"}


def _official_bin() -> str | None:
    for candidate in (os.environ.get("LOBSTER_OFFICIAL_BIN", ""), "/work/official-lobster/node_modules/.bin/lobster"):
        if candidate and Path(candidate).exists() and shutil.which("node"):
            return candidate
    return None


@pytest.mark.official
def test_template_rendering_matches_the_official_runtime(tmp_path: Path) -> None:
    official = _official_bin()
    if official is None:
        pytest.skip("the official Lobster runtime (Node + @clawdbot/lobster) is not installed")
    workflow = {
        "args": {name: {"default": value} for name, value in ARGS.items()},
        "steps": [{"id": "a", "run": f"printf '%s\\n' '{json.dumps(A_JSON, separators=(',', ':'))}'"}, {"id": "b", "run": TEMPLATE_LINE}],
    }
    path = tmp_path / "wf.json"
    path.write_text(json.dumps(workflow))
    proc = subprocess.run(
        [official, "run", "--mode", "tool", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "LOBSTER_STATE_DIR": str(tmp_path / "state")},
    )
    assert json.loads(proc.stdout)["output"] == [TEMPLATE_OUTPUT]
