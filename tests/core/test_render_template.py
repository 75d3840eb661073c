"""json / table renderers and the template command (spec §5.7, §5.8, §5.13, C-39, C-41).

Expected texts beyond the spec's examples were printed by the official runtime for the same input.
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lobster_tui.core.errors import LobsterRuntimeError
from lobster_tui.core.pipeline.base import CommandContext, CommandRegistry, CommandResult
from lobster_tui.core.pipeline.commands import render, template
from lobster_tui.core.pipeline.parser import parse_stage
from lobster_tui.core.state import StateStore


@pytest.fixture
def render_ctx(tmp_path: Path) -> CommandContext:
    return CommandContext(
        env={},
        cwd=str(tmp_path),
        mode="tool",
        registry=CommandRegistry([*render.COMMANDS, *template.COMMANDS]),
        state=StateStore(tmp_path / "state"),
        stdout=io.StringIO(),
    )


def run_stage(ctx: CommandContext, stage_text: str, items: list[Any]) -> CommandResult:
    stage = parse_stage(stage_text)
    spec = ctx.registry.get(stage.name)
    assert spec is not None
    return spec.run(items, stage.args, ctx)


def printed(ctx: CommandContext) -> str:
    assert isinstance(ctx.stdout, io.StringIO)
    return ctx.stdout.getvalue()


# -- json -----------------------------------------------------------------------------------------


def test_json_renders_pretty_and_outputs_nothing(render_ctx: CommandContext) -> None:
    result = run_stage(render_ctx, "json", [1, {"a": "é", "b": 1.0}])
    assert result.output == [] and result.rendered
    assert printed(render_ctx) == '[\n  1,\n  {\n    "a": "é",\n    "b": 1\n  }\n]\n'


def test_json_of_nothing(render_ctx: CommandContext) -> None:
    run_stage(render_ctx, "json", [])
    assert printed(render_ctx) == "[]\n"


# -- table ----------------------------------------------------------------------------------------


def test_table_spec_example(render_ctx: CommandContext) -> None:
    result = run_stage(render_ctx, "table", [{"id": 1, "n": 5, "tag": "a", "u": {"d": "x.com"}, "flag": None}])
    assert result.output == [] and result.rendered
    assert printed(render_ctx) == (
        "id   n    tag  u              flag\n"
        "---  ---  ---  -------------  ----\n"
        '1    5    a    {"d":"x.com"}      \n'
    )


def test_table_cells_and_widths(render_ctx: CommandContext) -> None:
    items = [
        {"id": 1, "n": 5, "tag": "a", "u": {"d": "x.com"}},
        {"id": 2, "flag": False, "tag": "line1\nline2\r\nx\ty", "n": None, "arr": [1, "a"]},
        {"id": "élan✓"},
    ]
    run_stage(render_ctx, "table", items)
    assert printed(render_ctx) == (
        "id     n    tag               u              flag   arr    \n"
        "-----  ---  ----------------  -------------  -----  -------\n"
        '1      5    a                 {"d":"x.com"}                \n'
        '2           line1 line2\r x\ty                 false  [1,"a"]\n'
        "élan✓                                                      \n"
    )


def test_table_without_items(render_ctx: CommandContext) -> None:
    run_stage(render_ctx, "table", [])
    assert printed(render_ctx) == "(no results)\n"


def test_table_of_non_records_prints_one_line_each_keeping_newlines(render_ctx: CommandContext) -> None:
    run_stage(render_ctx, "table", ["a\nb", 5, None, {"x": 1}, [1, 2], True, "é"])
    assert printed(render_ctx) == 'a\nb\n5\n\n{"x":1}\n[1,2]\ntrue\né\n'


def test_table_of_empty_objects(render_ctx: CommandContext) -> None:
    run_stage(render_ctx, "table", [{}])
    assert printed(render_ctx) == "\n\n\n"


def test_table_decides_from_the_first_20_items(render_ctx: CommandContext) -> None:
    records = [{"i": i} for i in range(20)]
    run_stage(render_ctx, "table", [*records, "s", {"other": 1}, {"length": 1}])
    lines = printed(render_ctx).split("\n")
    assert lines[:3] == ["i  ", "---", "0  "]
    assert lines[-4:] == ["   ", "   ", "   ", ""]  # later rows only fill the sampled columns


def test_table_falls_back_when_a_sampled_item_is_not_a_record(render_ctx: CommandContext) -> None:
    run_stage(render_ctx, "table", [{"i": 0}, "s"])
    assert printed(render_ctx) == '{"i":0}\ns\n'


def test_table_cells_use_member_access(render_ctx: CommandContext) -> None:
    run_stage(render_ctx, "table", [*({"length": i} for i in range(20)), "abc"])
    assert printed(render_ctx).endswith("19    \n3     \n")


# -- template: source -------------------------------------------------------------------------------


def render_texts(ctx: CommandContext, stage_text: str, items: list[Any]) -> list[Any]:
    return run_stage(ctx, stage_text, items).output


C39_ITEMS: list[Any] = [
    {"id": 1, "n": "5", "tag": "a"},
    {"id": 2, "n": 5, "tag": "b"},
    {"id": 3, "n": 30, "tag": "a", "flag": True},
    {"id": 4, "n": None, "tag": "b"},
    {"id": 5, "tag": "c"},
    "str",
    7,
]


def test_c39_template(render_ctx: CommandContext) -> None:
    out = render_texts(render_ctx, """template --text '{{id}}:{{tag | upper}}:{{missing | default "N/A"}}'""", C39_ITEMS)
    assert out == ["1:A:N/A", "2:B:N/A", "3:A:N/A", "4:B:N/A", "5:C:N/A", "::N/A", "::N/A"]


def test_template_positionals_are_joined(render_ctx: CommandContext) -> None:
    assert render_texts(render_ctx, "template --text= hi {{a}}  x", [{"a": 1}]) == ["hi 1 x"]


def test_template_file_is_relative_to_the_process_cwd(
    render_ctx: CommandContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tpl.txt").write_text("F{{a}}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert render_texts(render_ctx, "template --file tpl.txt", [{"a": 1}]) == ["F1\n"]
    assert render_texts(render_ctx, "template --text=x --file tpl.txt", [{"a": 1}]) == ["x"]


@pytest.mark.parametrize("stage", ["template", "template --text", "template --text=", "template --file"])
def test_template_requires_text(render_ctx: CommandContext, stage: str) -> None:
    with pytest.raises(LobsterRuntimeError, match=r"^template requires --text or --file \(or positional text\)$"):
        render_texts(render_ctx, stage, [1])


def test_template_empty_file_counts_as_no_text(
    render_ctx: CommandContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LobsterRuntimeError, match="^template requires"):
        render_texts(render_ctx, "template --file empty.txt", [1])


def test_template_file_errors_read_like_node(
    render_ctx: CommandContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LobsterRuntimeError, match="^ENOENT: no such file or directory, open 'nope.txt'$"):
        render_texts(render_ctx, "template --file nope.txt", [1])
    with pytest.raises(LobsterRuntimeError, match="^EISDIR: illegal operation on a directory, read$"):
        render_texts(render_ctx, f"template --file {tmp_path}", [1])


# -- template: placeholders and filters --------------------------------------------------------------

ITEM: dict[str, Any] = {
    "s": "hello world",
    "n": 3.14159,
    "t": "  pad  ",
    "arr": ["a", None, "c"],
    "e": "",
    "z": 0,
    "neg": -2.5,
    "h": 2.5,
    "x": 1.005,
    "big": 1e21,
    "m": 0.125,
    "obj": {"k": "v"},
    "b": True,
    "nul": None,
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{{s | truncate 5}}", "hello..."),
        ("{{s | truncate -2}}", "hello wor..."),
        ("{{s | truncate 5.9}}", "hello..."),
        ("{{s | truncate 0x3}}", "..."),  # parseInt(…, 10)
        ("{{s | truncate 0}}", "..."),
        ("{{s | upper | truncate 3}}", "HEL..."),
        ("{{n | round 2}}", "3.14"),
        ("{{n | round}}", "3"),
        ("{{neg | round}}", "-3"),
        ("{{h | round}}", "3"),
        ("{{x | round 2}}", "1"),
        ("{{m | round 2}}", "0.13"),
        ("{{big | round 2}}", "1e+21"),
        ("{{n | round 0x2}}", "3"),
        ("{{missing | round}}", ""),
        ("{{e | round}}", "0"),
        ("{{nul | round 2}}", "0"),
        ("{{b | round 2}}", "1"),
        ("{{s | round}}", "hello world"),
        ("{{arr | join}}", "a, , c"),
        ("{{arr | join -}}", "a--c"),
        ('{{arr | join "a b"}}', "aa ba bc"),
        ("{{s | join}}", "hello world"),
        ("{{arr | first}}", "a"),
        ("{{arr | last}}", "c"),
        ("{{s | first}}", "hello world"),
        ("{{arr | length}}", "3"),
        ("{{s | length}}", "11"),
        ("{{n | length}}", "0"),
        ("{{arr | json}}", '[\n  "a",\n  null,\n  "c"\n]'),
        ("{{missing | json}}", ""),
        ('{{s | split " "}}', '["hello","world"]'),
        ("{{s | split}}", '["hello world"]'),
        ('{{s | split ""}}', '["h","e","l","l","o"," ","w","o","r","l","d"]'),
        ("{{s | split o | join _}}", "hell_ w_rld"),
        ("{{n | string}}", "3.14159"),
        ("{{missing | string}}", ""),
        ("{{e | default x}}", "x"),
        ("{{z | default x}}", "0"),
        ("{{missing | default}}", ""),
        ("{{s | replace o 0}}", "hell0 w0rld"),
        ("{{s | replace o}}", "hell wrld"),
        ("{{s | replace}}", "hello world"),
        ("{{n | replace 1 X}}", "3.X4X59"),
        ('{{e | replace "" X}}', "X"),
        ("{{t | trim}}|", "pad|"),
        ("{{missing | upper}}", ""),
        ("{{n | upper}}", "3.14159"),
        ("{{arr | upper}}", "A,,C"),
        ("{{obj | upper}}", "[OBJECT OBJECT]"),
        ("{{arr}}", '["a",null,"c"]'),
        ("{{obj}}", '{"k":"v"}'),
        ("{{b}}", "true"),
        ("{{z}}{{e}}{{missing}}", "0"),
        ("{{ this.s }}", ""),
        ("{{s.length}}", "11"),
        ("{{s.0}}", "h"),
        ("{{arr.1}}", ""),
        ("{{ a. }}", ""),
        ("{{}}", "{{}}"),
    ],
)
def test_filters(render_ctx: CommandContext, text: str, expected: str) -> None:
    assert render_texts(render_ctx, f"template --text {quote(text)}", [ITEM]) == [expected]


def quote(text: str) -> str:
    return "'" + text.replace("'", "\\'") + "'"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{{s | replace  o  0}}", "hell0 w0rld"),  # runs of spaces separate words
        ('{{s | replace "o w" "_"}}', "hell_orld"),
        ('{{s | replace "o w"X Y}}', "hellXorld"),  # a quoted word ends at its closing quote
        ('{{e | default a"b c"d}}', 'a"b'),  # an unquoted word runs to the next space
        ('{{e | default "a\\\\"b"}}', "a\\"),
        ('{{e | default "x}}', "x"),  # an unterminated quote runs to the end
        ('{{e | default x"}}', 'x"'),
        ('{{e | "default" x}}', "x"),
        ('{{e | default "a|b"}}', "a|b"),  # | inside quotes does not split
        ('{{ e | default "x y" }}', "x y"),
    ],
)
def test_filter_word_syntax(render_ctx: CommandContext, text: str, expected: str) -> None:
    assert render_texts(render_ctx, f"template --text {quote(text)}", [ITEM]) == [expected]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{{s | nope}}", "Unknown template filter: nope"),
        ("{{s | }}", "Unknown template filter: "),
        ("{{s||upper}}", "Unknown template filter: "),
        ("{{e | default\tx}}", "Unknown template filter: default\tx"),  # only spaces separate words
        ("{{n | round 101}}", "toFixed() digits argument must be between 0 and 100"),
        ("{{n | round -1}}", "toFixed() digits argument must be between 0 and 100"),
    ],
)
def test_filter_errors(render_ctx: CommandContext, text: str, message: str) -> None:
    with pytest.raises(LobsterRuntimeError) as caught:
        render_texts(render_ctx, f"template --text {quote(text)}", [ITEM])
    assert caught.value.message == message


def test_whole_item_placeholders(render_ctx: CommandContext) -> None:
    item = {"a": {"b": 1}}
    assert render_texts(render_ctx, "template --text '[{{ . }}][{{this}}][{{ }}][{{..}}]'", [item, "s"]) == [
        '[{"a":{"b":1}}]' * 4,
        "[s][s][s][s]",
    ]


def test_truncate_counts_utf16_units(render_ctx: CommandContext) -> None:
    assert render_texts(render_ctx, "template --text '{{s | truncate 2}}|{{s | length}}'", [{"s": "😀ab"}]) == [
        "😀...|4"
    ]


def test_truncate_defaults_to_80(render_ctx: CommandContext) -> None:
    out = render_texts(render_ctx, "template --text '{{s | truncate abc | length}}'", [{"s": "x" * 100}])
    assert out == ["83"]


# -- date -----------------------------------------------------------------------------------------


@pytest.fixture
def tz_new_york(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run with a non-UTC local zone, as JS parses offset-less date-times in local time."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


DATES: dict[str, Any] = {
    "ms": 1710000000000,
    "ms_text": "1710000000000",
    "iso": "2024-03-09T16:00:00Z",
    "date_only": "2024-03-09",
    "offset": "2024-03-09T10:00:00+05:30",
    "offset_no_colon": "2024-03-09T10:11:12+0530",
    "fraction": "2024-03-09T10:11:12.123456Z",
    "midnight24": "2024-03-09T24:00:00Z",
    "overflow": "2023-02-29",
    "year": "2024",
    "month": "2024-03",
    "extended": "+002024-03-09",
    "utc_string": "Sat, 09 Mar 2024 16:00:00 GMT",
    "negative": -1,
    "fractional_ms": -1.7,
    "year1": -62135596800000,
    "year_minus1": -62198755200000,
    "max": 8.64e15,
    "too_big": 9e15,
    "bad_month": "2024-13-01",
    "bad_hour": "2024-03-09T25:00:00Z",
    "one_digit_hour": "2024-03-09T1:00Z",
    "word": "nope",
    "bool": True,
    "nul": None,
}


@pytest.mark.parametrize(
    ("key", "iso", "formatted"),
    [
        ("ms", "2024-03-09T16:00:00.000Z", "2024/03/09 16:00:00"),
        ("ms_text", "2024-03-09T16:00:00.000Z", "2024/03/09 16:00:00"),
        ("iso", "2024-03-09T16:00:00.000Z", "2024/03/09 16:00:00"),
        ("date_only", "2024-03-09T00:00:00.000Z", "2024/03/09 00:00:00"),
        ("offset", "2024-03-09T04:30:00.000Z", "2024/03/09 04:30:00"),
        ("offset_no_colon", "2024-03-09T04:41:12.000Z", "2024/03/09 04:41:12"),
        ("fraction", "2024-03-09T10:11:12.123Z", "2024/03/09 10:11:12"),
        ("midnight24", "2024-03-10T00:00:00.000Z", "2024/03/10 00:00:00"),
        ("overflow", "2023-03-01T00:00:00.000Z", "2023/03/01 00:00:00"),
        ("year", "1970-01-01T00:00:02.024Z", "1970/01/01 00:00:02"),
        ("month", "2024-03-01T00:00:00.000Z", "2024/03/01 00:00:00"),
        ("extended", "2024-03-09T00:00:00.000Z", "2024/03/09 00:00:00"),
        ("utc_string", "2024-03-09T16:00:00.000Z", "2024/03/09 16:00:00"),
        ("negative", "1969-12-31T23:59:59.999Z", "1969/12/31 23:59:59"),
        ("fractional_ms", "1969-12-31T23:59:59.999Z", "1969/12/31 23:59:59"),
        ("year1", "0001-01-01T00:00:00.000Z", "1/01/01 00:00:00"),
        ("year_minus1", "-000001-01-01T00:00:00.000Z", "-1/01/01 00:00:00"),
        ("max", "+275760-09-13T00:00:00.000Z", "275760/09/13 00:00:00"),
        ("too_big", "9000000000000000", "9000000000000000"),
        ("bad_month", "2024-13-01", "2024-13-01"),
        ("bad_hour", "2024-03-09T25:00:00Z", "2024-03-09T25:00:00Z"),
        ("one_digit_hour", "2024-03-09T1:00Z", "2024-03-09T1:00Z"),
        ("word", "nope", "nope"),
        ("bool", "true", "true"),
        ("nul", "null", "null"),
        ("missing", "undefined", "undefined"),
    ],
)
def test_date_filter(render_ctx: CommandContext, tz_new_york: None, key: str, iso: str, formatted: str) -> None:
    text = f'{{{{{key} | date}}}}|{{{{{key} | date ""}}}}|{{{{{key} | date "YYYY/MM/DD HH:mm:ss"}}}}'
    assert render_texts(render_ctx, f"template --text {quote(text)}", [DATES]) == [f"{iso}|{iso}|{formatted}"]


@pytest.mark.parametrize(
    ("value", "iso"),
    [
        ("2024-03-09T10:11:12", "2024-03-09T15:11:12.000Z"),
        ("2024-03-09 10:11", "2024-03-09T15:11:00.000Z"),
        ("2024/03/09", "2024-03-09T05:00:00.000Z"),
        (" 2024-03-09", "2024-03-09T05:00:00.000Z"),
        ("2024-3-9", "2024-03-09T05:00:00.000Z"),
    ],
)
def test_date_without_zone_is_local_time(
    render_ctx: CommandContext, tz_new_york: None, value: str, iso: str
) -> None:
    assert render_texts(render_ctx, "template --text '{{. | date}}'", [value]) == [iso]


def test_date_format_replaces_first_occurrences_only(render_ctx: CommandContext) -> None:
    out = render_texts(render_ctx, """template --text '{{. | date "YYYY YYYY MM"}}|{{. | date YYYYMMDDHHmmss}}'""", [1710000000000])
    assert out == ["2024 YYYY 03|20240309160000"]


def test_template_metadata() -> None:
    for spec in [*render.COMMANDS, *template.COMMANDS]:
        assert spec.description and spec.examples and spec.side_effects == []
        assert spec.args_schema is not None
