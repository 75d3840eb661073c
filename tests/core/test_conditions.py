"""``when`` / ``condition`` expressions (spec §7.6; C-28, C-29)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lobster_tui.core.errors import LobsterRuntimeError
from lobster_tui.core.jsvalues import dumps_compact
from lobster_tui.core.workflow.conditions import evaluate_condition, referenced_step_ids

DATA: dict[str, Any] = {
    "a": {
        "n": 1,
        "s": "2",
        "z": 0,
        "t": True,
        "f": False,
        "nul": None,
        "str": "abc",
        "arr": [1, 2],
        "obj": {"x": 1, "y": [1]},
        "obj2": {"y": [1], "x": 1},
        "neg": 0,
        "e": "",
        "sp": " 12 ",
        "hex": "0x10",
    },
    "b-c": {"k": "v"},
}
# Results as shell steps printing DATA produce them.
RESULTS = {key: {"id": key, "stdout": dumps_compact(value) + "\n", "json": value} for key, value in DATA.items()}

# Expression → result (True/False) or the error message. Every row is what the official runtime did
# with a workflow whose steps print DATA and whose last step has `when: <expression>`.
CASES: list[tuple[str, bool | str]] = [
    ('$a.json.n == 1', True),
    ('$a.json.s == 2', False),
    ("$a.json.s == '2'", True),
    ('$a.json.neg == 0', True),
    ('$a.json.z == -0', False),
    ('$a.json.z == 0', True),
    ('$a.json.obj == $a.json.obj2', True),
    ('$a.json.arr == $a.json.arr', True),
    ('$a.json.missing == null', False),
    ('$a.json.nul == null', True),
    ('$a.json.missing', False),
    ('!$a.json.missing', True),
    ('$a.json.sp > 11', True),
    ('$a.json.hex > 15', True),
    ('$a.json.t > 0', False),
    ('$a.json.e >= 0', False),
    ('$a.json.nul >= 0', False),
    ('$a.json.str == abc', True),
    ("$a.json.str == 'abc'", True),
    ('$a.json.str == "abc"', True),
    ('abc == $a.json.str', 'Unsupported condition: abc == $a.json.str'),
    ('$a.json.n == 1 == true', 'Unsupported condition: $a.json.n == 1 == true'),
    ('($a.json.n == 1) == true', True),
    ('1e3 > 5', 'Unsupported condition: 1e3 > 5'),
    ('1. > 0', 'Unsupported condition: 1. > 0'),
    ('.5 > 0', 'Unsupported condition: .5 > 0'),
    ('-.5 < 0', 'Unsupported condition: -.5 < 0'),
    ('- 1 < 0', 'Unsupported condition: - 1 < 0'),
    ('-1 < 0', True),
    ('0x10 > 1', 'Unsupported condition: 0x10 > 1'),
    ('$b-c.json.k == v', True),
    ('$b-c.json.k == v-w', False),
    ('$a.json.obj.x == 1', True),
    ('$a.json.obj.y.0 == 1', True),
    ('$a.json.arr.1 == 2', True),
    ('$a.json.arr.5 == null', False),
    ('$a.json.str.length == 3', False),
    ('$a.json.arr.length == 2', False),
    ('', 'Unsupported condition: '),
    ('  ', 'Unsupported condition: '),
    ('true', True),
    (' TRUE ', 'Unsupported condition: TRUE'),
    ("'false'", True),
    ('0', False),
    ('1', True),
    ('\'a\\\'b\' == "a\'b"', True),
    ("'a\\nb' == 'anb'", True),
    ("'unterminated", "Unsupported condition: 'unterminated"),
    ('$a', 'Unsupported condition: $a'),
    ('$a.', 'Unsupported condition: $a.'),
    ('$a.json.', 'Unsupported condition: $a.json.'),
    ('$ a.json', 'Unsupported condition: $ a.json'),
    ('$a.json.x-y', 'Unsupported condition: $a.json.x-y'),
    ('a = b', 'Unsupported condition: a = b'),
    ('!!$a.json.t', True),
    ('!$a.json.t == false', True),
    ('1 == !abc', False),
    ('1 == !$a.json.z', False),
    ('$a.json.t && $a.json.f || $a.json.t', True),
    ('$a.json.n == (1)', True),
    ('($a.json.n == 1', 'Unsupported condition: ($a.json.n == 1'),
    ('$a.json.n == 1)', 'Unsupported condition: $a.json.n == 1)'),
    ('()', 'Unsupported condition: ()'),
    ('$a.json.n ===', 'Unsupported condition: $a.json.n ==='),
    ('$a.json.n == 1 &&', 'Unsupported condition: $a.json.n == 1 &&'),
    ('&& 1', 'Unsupported condition: && 1'),
    ('abc', 'Unsupported condition: abc'),
    ('true == true', True),
    ('null == null', True),
    ('True == true', 'Unsupported condition: True == true'),
    ('1 == True', False),
    ('1 != abc', True),
    ('$a.json.n <= 1 && $a.json.n >= 1 && $a.json.n < 2 && $a.json.n > 0', True),
    ("'1' < '2'", True),
    ("'' < 1", False),
    ("' ' < 1", False),
    ("'Infinity' > 1", True),
    ("'-Infinity' < 1", True),
    ('$a.json.arr > 0', False),
    ('1\t==\n1', True),
    ('1 == 1.0', True),
    ('01 == 1', True),
    ('1.50 == 1.5', True),
    ('@', 'Unsupported condition: @'),
    ('$a.json.n == 1 # x', 'Unsupported condition: $a.json.n == 1 # x'),
    ('!', 'Unsupported condition: !'),
    ('-', 'Unsupported condition: -'),
    ('-a', 'Unsupported condition: -a'),
    ('1 - 1', 'Unsupported condition: 1 - 1'),
    ('$a.json.n==1', True),
    ('$a.json.n==-1', False),
    ("'x'=='x'", True),
    ('a_b-c == a_b-c', 'Unsupported condition: a_b-c == a_b-c'),
    ('1 == a_b-c', False),
    ('1 == _x', False),
    ('1 == 9x', 'Unsupported condition: 1 == 9x'),
    ('1 == x9', False),
    ('1 == (abc)', 'Unsupported condition: 1 == (abc)'),
    ('(1 && 2) == true', True),
    ('(1 || 0) == 1', False),
    ('!0 == true', True),
    ('1 == x.y', 'Unsupported condition: 1 == x.y'),
    ('1.5.3 == 1', 'Unsupported condition: 1.5.3 == 1'),
    ('--1 == 1', 'Unsupported condition: --1 == 1'),
    ("'abc\\", "Unsupported condition: 'abc\\"),
    ('$zz.json || true', 'Unknown step reference: zz.json'),
    ('true || $zz.json', 'Unknown step reference: zz.json'),
    ('!$zz.approved', 'Unknown step reference: zz.approved'),
    ('$a.json.n == $zz.json.deep.path', 'Unknown step reference: zz.json.deep.path'),
    ('(1 == 1) == (2 == 2)', True),
    ('1 == 1 && 2 == 2 == true', 'Unsupported condition: 1 == 1 && 2 == 2 == true'),
    ('$a.json == $a.json', True),
    ('$a.stdout == $a.stdout', True),
    ('$a.id == a', True),
    ("$a.json.arr == '1,2'", False),
    ('$a.json.obj != $a.json.obj2', False),
    ('$a.json.arr.0 == 1.0', True),
    ('\'\' == ""', True),
    ("$a.json.e == ''", True),
    ('$a.json.e', False),
    ('$a.json.arr.-1 == null', 'Unsupported condition: $a.json.arr.-1 == null'),
    ('$a.json.arr.01 == 2', True),
    ('$a.json.arr.1.0 == null', False),
    ("$a.json.s <= '2'", True),
    ('$a.json.s < 3 && $a.json.s > 1', True),
    ('1 < 2 < 3', 'Unsupported condition: 1 < 2 < 3'),
    ('!(1 < 2)', False),
    ('!1 < 2', False),
    ('1 == -1.5', False),
    ('-1.5 == -1.50', True),
    ('$b-c.json.k', True),
    ('$a.approved', False),
    ('$a.approved == false', False),
    ('$a.skipped == null', False),
    ('1 ==  \xa0 1', True),
    ('1 =! 1', 'Unsupported condition: 1 =! 1'),
    ('1 !== 1', 'Unsupported condition: 1 !== 1'),
    ('1 <> 1', 'Unsupported condition: 1 <> 1'),
    ('1 >> 1', 'Unsupported condition: 1 >> 1'),
    ('1 |  | 1', 'Unsupported condition: 1 |  | 1'),
    ('true && false', False),
    ('false || true', True),
    ('$a.json.arr.0x1 == 2', True),
    ('$a.json.arr.1e0 == 2', True),
    ('$a.json.arr.0b1 == 2', True),
    ('$a.json.arr.1_0 == null', False),
    ('$a.json.arr.00 == 1', True),
    ('$a.json.obj == $a.json.arr', False),
    ('$a.json.arr == $a.json.obj', False),
    ('$a.json.obj.y == $a.json.obj2.y', True),
    ('$a.json.t == 1', False),
    ('$a.json.n == true', False),
    ('$a.json.z == false', False),
    ('$a.json.nul == $a.json.missing', False),
    ('$a.json.missing == $a.json.missing2', True),
    ('-0 == 0', False),
    ('-0 == -0', True),
    ('$a.json.s != 2', True),
    ('!!$a.json.obj', True),
    ('!$a.json.arr', False),
    ('($a.json.t)', True),
    ('(($a.json.n))', True),
    ('$a.json.n > $a.json.s', False),
    ('$a.json.s >= $a.json.sp', False),
    ("'10' > '9'", True),
    ("'abc' < 'abd'", False),
    ("'1e3' > 999", True),
    ("' 0x1F ' == 31", False),
    ("' 0x1F ' >= 31", True),
    ('"\\\\" == \'\\\\\'', True),
]


def _outcome(expression: Any, results: dict[str, Any] = RESULTS) -> bool | str:
    try:
        return evaluate_condition({"when": expression}, results)
    except LobsterRuntimeError as error:
        return error.message


@pytest.mark.parametrize(("expression", "expected"), CASES)
def test_expressions(expression: str, expected: bool | str) -> None:
    assert _outcome(expression) == expected


def test_c28_numeric_and_structural_conditions() -> None:
    results = {
        "data": {"id": "data", "json": {"count": 1}},
        "flag": {"id": "flag", "json": {"val": True}},
        "left": {"id": "left", "json": {"a": 1, "b": 2}},
        "right": {"id": "right", "json": {"b": 2, "a": 1}},
    }
    assert _outcome("$data.json.count > 3", results) is False
    assert _outcome("$flag.json.val > 0", results) is False
    assert _outcome("$left.json == $right.json", results) is True


def test_c29_condition_errors() -> None:
    results = {"a": {"id": "a", "json": {}}}
    assert evaluate_condition({"condition": "true"}, results) is True
    assert _outcome("approve", results) == "Unsupported condition: approve"
    assert _outcome("!$aprove.approved", results) == "Unknown step reference: aprove.approved"
    assert _outcome("$a.json.missing == null || $zz.json", results) == "Unknown step reference: zz.json"


def test_spec_example_with_grouping_and_negation() -> None:
    results = {
        "approve_step": {"id": "approve_step", "approved": True},
        "review": {"id": "review", "response": {"decision": "approve"}},
        "collect": {"id": "collect", "json": {"kind": "deploy", "count": 2}},
    }
    expression = (
        "($approve_step.approved && $review.response.decision == approve) && "
        "!($collect.json.kind != deploy || $collect.json.count != 2)"
    )
    assert _outcome(expression, results) is True
    results["collect"]["json"]["count"] = 3
    assert _outcome(expression, results) is False


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        ({}, True),
        ({"when": None}, True),
        ({"when": None, "condition": None}, True),
        ({"when": True, "condition": False}, True),
        ({"when": False}, False),
        ({"when": None, "condition": False}, False),
        ({"when": " false ", "condition": "true"}, False),
        ({"when": "\ttrue\n"}, True),
        ({"condition": "$a.json.t"}, True),
        ({"when": 5}, "Unsupported condition type"),
        ({"when": 0}, "Unsupported condition type"),
        ({"when": {"a": 1}}, "Unsupported condition type"),
        ({"when": ["$a.json.t"]}, "Unsupported condition type"),
        ({"when": None, "condition": 1.5}, "Unsupported condition type"),
    ],
)
def test_when_takes_precedence_over_condition(step: dict[str, Any], expected: bool | str) -> None:
    try:
        outcome: bool | str = evaluate_condition(step, RESULTS)
    except LobsterRuntimeError as error:
        outcome = error.message
    assert outcome == expected


def test_planned_and_special_results() -> None:
    results = {
        "gate": {"id": "gate", "approved": True},
        "skip": {"id": "skip", "skipped": True},
        "ask": {"id": "ask", "response": {"pending": True}},
        "zero": {"id": "zero", "json": -0.0},
        "big": {"id": "big", "json": 2**53 + 1},
    }
    assert _outcome("$gate.approved && $skip.skipped && $ask.response.pending == true", results) is True
    assert _outcome("$gate.skipped == false", results) is False
    assert _outcome("$zero.json == 0", results) is False
    assert _outcome("$zero.json == -0", results) is True
    # JavaScript numbers are doubles: 2**53 + 1 is 2**53.
    assert _outcome("$big.json == 9007199254740992", results) is True


def test_absurd_nesting_is_unsupported_not_a_crash() -> None:
    expression = "(" * 5000 + "1" + ")" * 5000
    assert _outcome(expression) == f"Unsupported condition: {expression}"
    assert _outcome("!" * 5000 + "1") == f"Unsupported condition: {'!' * 5000}1"


_FRAGMENTS = [*"$ab-c._0129 ()!=<>&|'\"\\\t", "json", "true", "null", "$a.json.n", "$b-c.json.k", "$zz.json", "==", "&&"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=25).map("".join) | st.text(max_size=30))
def test_any_text_either_evaluates_or_raises_a_lobster_error(expression: str) -> None:
    try:
        assert isinstance(evaluate_condition({"when": expression}, RESULTS), bool)
    except LobsterRuntimeError as error:
        assert error.message.startswith(("Unsupported condition: ", "Unknown step reference: "))


@pytest.mark.parametrize(
    ("expression", "ids"),
    [
        ("$a.json.x > 1 && '$b-c.json' == x || $a.approved", ["a", "b-c"]),
        ("$1st.json $a.stdout", ["1st", "a"]),
        ("$a $b. ${c} $d.e", ["d"]),
        ("true", []),
    ],
)
def test_referenced_step_ids(expression: str, ids: list[str]) -> None:
    assert referenced_step_ids(expression) == ids


def _official_bin() -> str | None:
    for candidate in (os.environ.get("LOBSTER_OFFICIAL_BIN", ""), "/work/official-lobster/node_modules/.bin/lobster"):
        if candidate and Path(candidate).exists() and shutil.which("node"):
            return candidate
    return None


@pytest.mark.official
def test_expressions_match_the_official_runtime(tmp_path: Path) -> None:
    official = _official_bin()
    if official is None:
        pytest.skip("the official Lobster runtime (Node + @clawdbot/lobster) is not installed")
    # A sample keeps this fast (Node starts slowly); the whole table was produced this way.
    sample = CASES[::12]

    def official_outcome(index: int) -> bool | str:
        steps = [{"id": key, "run": "cat", "stdin": value} for key, value in DATA.items()]
        steps.append({"id": "probe", "run": "echo yes", "when": sample[index][0]})
        path = tmp_path / f"wf{index}.json"
        path.write_text(json.dumps({"steps": steps}))
        proc = subprocess.run(
            [official, "run", "--mode", "tool", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "LOBSTER_STATE_DIR": str(tmp_path / f"state{index}")},
        )
        envelope = json.loads(proc.stdout)
        return envelope["output"] == ["yes\n"] if envelope["ok"] else envelope["error"]["message"]

    with ThreadPoolExecutor(4) as pool:
        theirs = list(pool.map(official_outcome, range(len(sample))))
    assert [_outcome(expression) for expression, _ in sample] == theirs
