"""where / pick / head / map / sort / dedupe / groupBy (spec §5.4-§5.12, C-39).

Beyond C-39, expected values were taken from the official runtime (release 2026.5.22, whose data
commands equal head's per spec §12).
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import pytest

from lobster_tui.core.errors import LobsterRuntimeError
from lobster_tui.core.jsvalues import UNDEFINED, dumps_compact
from lobster_tui.core.pipeline.base import CommandContext, CommandRegistry
from lobster_tui.core.pipeline.commands import data
from lobster_tui.core.pipeline.parser import parse_stage
from lobster_tui.core.state import StateStore

C39_ITEMS: list[Any] = [
    {"id": 1, "n": "5", "tag": "a"},
    {"id": 2, "n": 5, "tag": "b"},
    {"id": 3, "n": 30, "tag": "a", "flag": True},
    {"id": 4, "n": None, "tag": "b"},
    {"id": 5, "tag": "c"},
    "str",
    7,
]


def make_ctx(tmp_path: Path) -> CommandContext:
    return CommandContext(
        env={},
        cwd=str(tmp_path),
        mode="tool",
        registry=CommandRegistry(data.COMMANDS),
        state=StateStore(tmp_path / "state"),
        stdout=io.StringIO(),
    )


@pytest.fixture
def run_data(tmp_path: Path) -> Any:
    """Run one stage text (e.g. ``where n==5``) on a list of items; returns the output list."""
    ctx = make_ctx(tmp_path)

    def run(stage_text: str, items: list[Any] | None = None) -> list[Any]:
        stage = parse_stage(stage_text)
        spec = ctx.registry.get(stage.name)
        assert spec is not None
        return spec.run(list(C39_ITEMS if items is None else items), stage.args, ctx).output

    return run


def ids(items: list[Any]) -> list[Any]:
    return [item["id"] if isinstance(item, dict) else item for item in items]


def as_json(items: list[Any]) -> str:
    return dumps_compact(items)


# -- C-39 -----------------------------------------------------------------------------------------


def test_c39_where_loose_equality(run_data: Any) -> None:
    assert ids(run_data("where n==5")) == [1, 2]


def test_c39_where_relational(run_data: Any) -> None:
    assert ids(run_data("where n<10")) == [1, 2, 4]


def test_c39_where_null_matches_missing_and_non_objects(run_data: Any) -> None:
    assert ids(run_data("where n==null")) == [4, 5, "str", 7]


def test_c39_where_single_equals_and_boolean(run_data: Any) -> None:
    assert ids(run_data("where flag=true")) == [3]


def test_c39_pick_passes_non_objects_through(run_data: Any) -> None:
    assert run_data("pick id,tag") == [
        {"id": 1, "tag": "a"},
        {"id": 2, "tag": "b"},
        {"id": 3, "tag": "a"},
        {"id": 4, "tag": "b"},
        {"id": 5, "tag": "c"},
        "str",
        7,
    ]


def test_c39_dedupe_collapses_missing_keys(run_data: Any) -> None:
    assert ids(run_data("dedupe --key tag")) == [1, 2, 5, "str"]


def test_c39_group_by(run_data: Any) -> None:
    groups = run_data("groupBy --key tag")
    assert len(groups) == 4
    assert [(g["key"], ids(g["items"]), g["count"]) for g in groups[:3]] == [
        ("a", [1, 3], 2),
        ("b", [2, 4], 2),
        ("c", [5], 1),
    ]
    assert as_json(groups[3:]) == '[{"items":["str",7],"count":2}]'


def test_c39_map_unwrap(run_data: Any) -> None:
    assert as_json(run_data("map --unwrap id")) == "[1,2,3,4,5,null,null]"


def test_c39_sort_desc_puts_nullish_first(run_data: Any) -> None:
    assert ids(run_data("sort --key n --desc")) == [4, 5, "str", 7, 1, 3, 2]


# -- where ------------------------------------------------------------------------------------------

W_ITEMS: list[Any] = [
    {"n": "5"}, {"n": 5}, {"n": None}, {}, {"n": True}, {"n": False}, {"n": "true"}, {"n": [5]},
    {"n": [1, 2]}, {"n": {"a": 1}}, {"n": ""}, {"n": "0x1f"}, {"n": 31}, {"n": "abc"}, {"n": 0},
    {"n": []}, {"n": "1e3"}, {"n": "Infinity"}, "str", 7, None,
]


def where_indexes(run_data: Any, expression: str) -> list[int]:
    kept = run_data(f"where {expression}", W_ITEMS)
    return [index for index, item in enumerate(W_ITEMS) if any(item is k for k in kept)]


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # Observed on the official runtime with the same items.
        ("n==true", [4]),
        ("n==false", [5, 10, 14, 15]),
        ("n==0", [5, 10, 14, 15]),
        ("n==0x1f", [11, 12]),
        ("n==1e3", [16]),
        ("n==Infinity", [17]),
        ("'n==1,2'", [8]),
        ("'n==[object Object]'", [9]),
        ("n==5", [0, 1, 7]),
        ("n!=5", [2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]),
        ("n<b", [0, 7, 8, 9, 10, 11, 13, 15, 16, 17]),
        ("n<=null", [2, 5, 10, 14, 15]),
        ("n>=false", [0, 1, 2, 4, 5, 7, 10, 11, 12, 14, 15, 16, 17]),
    ],
)
def test_where_javascript_coercions(run_data: Any, expression: str, expected: list[int]) -> None:
    assert where_indexes(run_data, expression) == expected


def test_where_strings_compare_by_code_units(run_data: Any) -> None:
    items = [{"s": "B"}, {"s": "a"}, {"s": "é"}, {"s": "Z"}]
    assert run_data("where s>Z", items) == [{"s": "a"}, {"s": "é"}]


def test_where_literal_keeps_trailing_spaces_and_quotes_are_removed(run_data: Any) -> None:
    items = [{"s": "bob"}, {"s": "bob "}]
    assert run_data('where s=="bob"', items) == [{"s": "bob"}]
    assert run_data("where 's==bob '", items) == [{"s": "bob "}]


def test_where_spaces_around_operator_need_quoting(run_data: Any) -> None:
    assert run_data("where 'n == 5'", [{"n": 5}, {"n": 6}]) == [{"n": 5}]


def test_where_operator_alternation_order(run_data: Any) -> None:
    # `n===5` is `n == "=5"`, `n=<5` is `n == "<5"`: the first alternative that fits wins.
    assert run_data("where n===5", [{"n": "=5"}, {"n": 5}]) == [{"n": "=5"}]
    assert run_data("where n=<5", [{"n": "<5"}, {"n": 4}]) == [{"n": "<5"}]


def test_where_paths_only_walk_objects_and_arrays(run_data: Any) -> None:
    items = [{"s": "xyz", "arr": [5, 6], "a": {"b": 2}}]
    assert run_data("where arr.0==5", items) == items
    assert run_data("where arr.length==2", items) == items
    assert run_data("where a.b==2", items) == items
    assert run_data("where s.length==3", items) == []  # strings have no members here
    assert run_data("where a..b==2", items) == []  # empty segments count


@pytest.mark.parametrize(
    ("stage", "message"),
    [
        ("where", "where requires an expression (e.g. field=value)"),
        ("where a", "Invalid where expression: a"),
        ("where a=", "Invalid where expression: a="),
        ("where a == 1", "Invalid where expression: a"),
        ("where 'a b==1'", "Invalid where expression: a b==1"),
        ("where 'é==1'", "Invalid where expression: é==1"),
        ("where 'a==1\n'", "Invalid where expression: a==1\n"),
    ],
)
def test_where_errors(run_data: Any, stage: str, message: str) -> None:
    with pytest.raises(LobsterRuntimeError) as caught:
        run_data(stage)
    assert caught.value.message == message


def test_loose_equals_examples() -> None:
    assert data.loose_equals("5", 5)
    assert data.loose_equals(True, 1)
    assert not data.loose_equals("true", True)
    assert data.loose_equals(UNDEFINED, None)
    assert not data.loose_equals(None, 0)
    assert not data.loose_equals(math.nan, math.nan)
    assert data.loose_equals([], False)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0x1f", 31), (" 12 ", 12), ("1e3", 1000), ("Infinity", math.inf), ("", 0), ("0b101", 5), ("-0x10", None),
     ("1_0", None), ("0x 1", None), ("\u20005", 5), ("abc", None), ("+.5", 0.5)],
)
def test_js_number(text: str, expected: float | None) -> None:
    result = data.js_number(text)
    assert data.is_nan(result) if expected is None else result == expected


# -- pick / head --------------------------------------------------------------------------------------


def test_pick_uses_javascript_member_access_and_key_order(run_data: Any) -> None:
    items = [[5, 6], [], None]
    assert as_json(run_data("pick length,0,1", items)) == '[{"0":5,"1":6,"length":2},{"length":0},null]'


def test_pick_trims_fields_and_keeps_missing_members_undefined(run_data: Any) -> None:
    out = run_data("pick ' a ,a, ,zz'", [{"a": 1}])
    assert out == [{"a": 1, "zz": UNDEFINED}]
    assert as_json(out) == '[{"a":1}]'


def test_pick_with_only_commas_gives_empty_objects(run_data: Any) -> None:
    assert run_data("pick ,", [{"a": 1}, "s"]) == [{}, "s"]


def test_pick_requires_fields(run_data: Any) -> None:
    with pytest.raises(LobsterRuntimeError, match="^pick requires a comma-separated field list$"):
        run_data("pick")


@pytest.mark.parametrize(
    ("stage", "count"),
    [("head", 7), ("head --n 2", 2), ("head --n 1.5", 2), ("head --n", 1), ("head --n=", 0), ("head --n 0x2", 2),
     ("head 1", 7), ("head --n ' 3 '", 3), ("head --n 1e1", 7)],
)
def test_head(run_data: Any, stage: str, count: int) -> None:
    assert run_data(stage) == C39_ITEMS[:count]


@pytest.mark.parametrize("value", ["-1", "abc", "Infinity", "1_0"])
def test_head_rejects_bad_counts(run_data: Any, value: str) -> None:
    with pytest.raises(LobsterRuntimeError, match="^head --n must be a non-negative number$"):
        run_data(f"head --n={value}")


# -- map ------------------------------------------------------------------------------------------------


def test_map_assignments_render_strings_and_wrap_non_objects(run_data: Any) -> None:
    assert run_data("map x={{id}}-{{tag}} y=z", ["str"]) == [{"value": "str", "x": "-", "y": "z"}]


def test_map_assignments_see_earlier_assignments(run_data: Any) -> None:
    # The reference assigns into the item itself; our copy keeps the input list untouched.
    items = [{"id": 1}]
    assert run_data("map a=1 b={{a}}", items) == [{"id": 1, "a": "1", "b": "1"}]
    assert items == [{"id": 1}]


def test_map_wrap_renders_against_the_original_item(run_data: Any) -> None:
    assert run_data("map --wrap w a={{id}} b={{w}}", [{"id": 1}]) == [{"w": {"id": 1}, "a": "1", "b": ""}]


def test_map_render_rules(run_data: Any) -> None:
    item = {"s": "xyz", "arr": [5, 6], "a": {"b": 2}, "n": None}
    out = run_data("map 'x={{s.length}}' 'y={{arr.0}}' 'z={{arr}}' 'w={{a}}' 'v={{ n }}' 'u={{ }}' 'k={{ a . b }}'", [item])
    assert out[0]["x"] == "3"
    assert out[0]["y"] == "5"
    assert out[0]["z"] == "[5,6]"
    assert out[0]["w"] == '{"b":2}'
    assert out[0]["v"] == ""
    assert out[0]["u"] == '{"s":"xyz","arr":[5,6],"a":{"b":2},"n":null,"x":"3","y":"5","z":"[5,6]","w":"{\\"b\\":2}","v":""}'
    assert out[0]["k"] == ""  # segments are not trimmed


def test_map_assignment_parsing(run_data: Any) -> None:
    assert run_data("map =a b= ' k =v' c=d=e noequals", [{}]) == [{"b": "", "k": "v", "c": "d=e"}]


def test_map_flags_need_non_empty_strings(run_data: Any) -> None:
    items = [{"x": 1}]
    assert run_data("map --wrap", items) == items
    assert run_data("map --unwrap", items) == items
    assert run_data("map --wrap= --unwrap x", items) == [1]
    assert run_data("map --wrap --unwrap x", items) == [1]


def test_map_unwrap_uses_member_access_on_arrays_only(run_data: Any) -> None:
    assert run_data("map --unwrap length", [[1, 2], "abc", {"length": 9}]) == [2, UNDEFINED, 9]


def test_map_assignment_on_undefined_item(run_data: Any) -> None:
    out = run_data("map x=1", [UNDEFINED])
    assert as_json(out) == '[{"x":"1"}]'


def test_map_wrap_and_unwrap_conflict(run_data: Any) -> None:
    with pytest.raises(LobsterRuntimeError, match="^map cannot use both --wrap and --unwrap$"):
        run_data("map --wrap=a --unwrap=b")


# -- sort / dedupe / groupBy ------------------------------------------------------------------------


def test_sort_whole_items_compare_as_strings(run_data: Any) -> None:
    assert ids(run_data("sort")) == [7, 1, 2, 3, 4, 5, "str"]


def test_sort_numbers_numerically_nullish_last_and_stable(run_data: Any) -> None:
    items = [{"k": 10, "i": 0}, {"i": 1}, {"k": 9, "i": 2}, {"k": None, "i": 3}, {"k": 10, "i": 4}]
    assert [item["i"] for item in run_data("sort --key k", items)] == [2, 0, 4, 1, 3]
    assert [item["i"] for item in run_data("sort --key k --desc", items)] == [1, 3, 0, 4, 2]


def test_sort_key_path_skips_empty_segments_and_reads_string_length(run_data: Any) -> None:
    items = [{"s": "xyz", "a": {"b": 2}}, {"s": "ab", "a": {"b": 1}}]
    assert run_data("sort --key s.length", items) == [items[1], items[0]]
    assert run_data("sort --key a..b", items) == [items[1], items[0]]


def test_sort_desc_uses_truthiness_and_bare_key_is_ignored(run_data: Any) -> None:
    items = [{"true": 2}, {"true": 1}]
    assert run_data("sort --desc=false --key true", items) == [{"true": 2}, {"true": 1}]
    assert run_data("sort --desc= --key true", items) == [{"true": 1}, {"true": 2}]
    assert run_data("sort --key", items) == items


def test_sort_strings_by_code_units(run_data: Any) -> None:
    assert run_data("sort", ["b", "a", "B", "é", "10", "9", "x"]) == ["10", "9", "B", "a", "b", "x", "é"]


def test_sort_mixed_numbers_and_strings_matches_the_reference(run_data: Any) -> None:
    # The comparator is not transitive here; this order is what the official runtime printed.
    assert run_data("sort", ["b", "a", "B", "é", "10", "9", 10, 9]) == ["10", 9, 10, "9", "B", "a", "b", "é"]


def test_dedupe_whole_items_and_bare_key(run_data: Any) -> None:
    items = [{"a": 1}, {"a": 1.0}, {"a": 2}, [1], [1], UNDEFINED, UNDEFINED]
    assert run_data("dedupe", items) == [{"a": 1}, {"a": 2}, [1], UNDEFINED]
    assert run_data("dedupe --key", [{"a": 1}, {"a": 2}]) == [{"a": 1}, {"a": 2}]


def test_dedupe_identity_is_insertion_ordered_json(run_data: Any) -> None:
    assert run_data("dedupe", [{"a": 1, "b": 2}, {"b": 2, "a": 1}]) == [{"a": 1, "b": 2}, {"b": 2, "a": 1}]


def test_group_by_trims_key_and_bare_key_means_true(run_data: Any) -> None:
    groups = run_data("groupBy --key=' a.b '", [{"a": {"b": 1}}, "s"])
    assert as_json(groups) == '[{"key":1,"items":[{"a":{"b":1}}],"count":1},{"items":["s"],"count":1}]'
    assert as_json(run_data("groupBy --key", [{"true": 1}, {"true": 1}])) == '[{"key":1,"items":[{"true":1},{"true":1}],"count":2}]'


@pytest.mark.parametrize("stage", ["groupBy", "groupBy --key=", "groupBy --key=' '"])
def test_group_by_requires_key(run_data: Any, stage: str) -> None:
    with pytest.raises(LobsterRuntimeError, match="^groupBy requires --key$"):
        run_data(stage)


def test_command_metadata() -> None:
    names = [spec.name for spec in data.COMMANDS]
    assert names == ["where", "pick", "head", "map", "sort", "dedupe", "groupBy"]
    for spec in data.COMMANDS:
        assert spec.description and spec.examples and spec.side_effects == []
        assert spec.args_schema is not None and spec.args_schema["type"] == "object"
