"""The pipeline DSL parser (spec §4.1, R-PARSE-1..7, S-1, S-2, S-16).

Expected values that go beyond the spec's examples were checked against the official runtime
(`lobster run --dry-run` and `exec` of a script that prints its argv).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lobster_tui.core.errors import LobsterParseError
from lobster_tui.core.pipeline.parser import (
    js_key_order,
    js_trim,
    parse_args,
    parse_pipeline,
    parse_stage,
    quote_token,
    split_stages,
    tokenize,
)


def stage_json(text: str) -> dict[str, Any]:
    return parse_stage(text).to_json()


def error_of(text: str) -> str:
    with pytest.raises(LobsterParseError) as caught:
        parse_pipeline(text)
    return caught.value.message


# -- R-PARSE-1: splitting -------------------------------------------------------------------------


def test_split_trims_each_stage() -> None:
    assert split_stages("  exec --json x |  where a=1  ") == ["exec --json x", "where a=1"]


def test_pipe_inside_quotes_does_not_split() -> None:
    assert split_stages("""map 'a|b' "c|d" | pick x""") == ["map 'a|b' \"c|d\"", "pick x"]


def test_backslash_outside_quotes_does_not_protect_a_pipe() -> None:
    assert split_stages(r"map a\|b") == ["map a\\", "b"]


def test_escaped_quote_inside_quotes_does_not_close_at_split_level() -> None:
    assert split_stages(r'map "a\"|b"') == [r'map "a\"|b"']
    assert split_stages(r"map 'a\'|b'") == [r"map 'a\'|b'"]


def test_trailing_pipe_is_dropped() -> None:
    assert split_stages("a | b |") == ["a", "b"]
    assert split_stages("a | b |   ") == ["a", "b"]


@pytest.mark.parametrize("text", ["a || b", "| a", "a | | ", "a |  | b"])
def test_empty_middle_or_leading_stage(text: str) -> None:
    assert error_of(text) == "Empty command stage"


@pytest.mark.parametrize("text", ["", "   ", "\t\n", "\u00a0", "\ufeff "])
def test_empty_pipeline(text: str) -> None:
    assert error_of(text) == "Empty pipeline"


def test_lone_pipe_is_an_empty_stage_not_an_empty_pipeline() -> None:
    assert error_of("|") == "Empty command stage"


@pytest.mark.parametrize("text", ["map 'a", 'map "a', "map a || 'b", "map 'a\\'", r"map x\"y"])
def test_unclosed_quote(text: str) -> None:
    assert error_of(text) == "Unclosed quote"


def test_unclosed_quote_is_reported_before_empty_stages() -> None:
    assert error_of("map a || 'b") == "Unclosed quote"


def test_stage_raw_is_trimmed_with_javascript_whitespace() -> None:
    # A trailing U+000C is trimmed from raw, a leading U+000B inside the stage stays a token char.
    stage = parse_stage("map \vq\f")
    assert stage.raw == "map \vq"
    assert stage.args["_"] == ["\vq"]


# -- R-PARSE-2: tokens ----------------------------------------------------------------------------


def test_whitespace_separates_tokens() -> None:
    assert tokenize("map\ta\nb\rc  d") == ["map", "a", "b", "c", "d"]


def test_other_whitespace_does_not_separate() -> None:
    assert tokenize("a\u00a0b \vc") == ["a\u00a0b", "\vc"]


def test_quotes_concatenate_with_adjacent_text() -> None:
    assert tokenize('a"b c"d') == ["ab cd"]
    assert tokenize("""a'b'"c"d""") == ["abcd"]


def test_single_quotes_are_literal_except_escaped_quote() -> None:
    assert tokenize(r"'x\'y'") == ["x'y"]
    assert tokenize(r"'a\\b'") == [r"a\\b"]
    assert tokenize(r"'a\nb'") == [r"a\nb"]


def test_single_quoted_token_cannot_end_in_backslash() -> None:
    # `\\` is not an escape inside single quotes, so `\'` then escapes the closing quote.
    with pytest.raises(LobsterParseError, match="Unclosed quote"):
        tokenize(r"'a\\' 'b'")


def test_double_quote_escapes() -> None:
    assert tokenize(r'"p\"q\\r\$s\`t"') == ['p"q\\r$s`t']


def test_double_quotes_keep_other_backslash_sequences() -> None:
    assert tokenize(r'"a\nb" "\t" "\'x"') == [r"a\nb", r"\t", r"\'x"]


def test_backslash_newline_is_a_line_continuation_in_double_quotes() -> None:
    assert tokenize('"a\\\nb"') == ["ab"]
    assert tokenize('"a\\\r\nb"') == ["a\\\r\nb"]  # only \n continues a line


def test_backslash_outside_quotes_is_ordinary() -> None:
    assert tokenize(r"a\b \$y") == [r"a\b", r"\$y"]


def test_empty_tokens_are_dropped() -> None:
    assert tokenize("echo '' x \"\" y''") == ["echo", "x", "y"]


def test_stage_of_only_empty_quotes_is_empty() -> None:
    assert error_of("''") == "Empty command stage"
    assert error_of("map a | \"\"") == "Empty command stage"


# -- R-PARSE-3/4: stage shape and flags -------------------------------------------------------------


def test_stage_shape() -> None:
    assert stage_json("exec --json=true echo hi") == {
        "name": "exec",
        "args": {"_": ["echo", "hi"], "json": "true"},
        "raw": "exec --json=true echo hi",
    }


def test_positionals_key_is_always_present_and_first() -> None:
    args = parse_stage("approve --prompt ok").args
    assert list(args) == ["_", "prompt"]
    assert args["_"] == []


def test_flag_with_equals() -> None:
    assert parse_args(["--a=b=c", "--e="]) == {"_": [], "a": "b=c", "e": ""}


def test_greedy_flag_swallows_next_positional() -> None:
    # S-1: the reference's own help example runs with json = "echo [1,2,3]" and no command.
    assert parse_stage("exec --json 'echo [1,2,3]'").args == {"_": [], "json": "echo [1,2,3]"}
    assert parse_stage("exec --json echo hi").args == {"_": ["hi"], "json": "echo"}


def test_flag_before_flag_or_at_end_is_true() -> None:
    assert parse_stage("exec --json --shell 'echo 1' --x").args == {"_": [], "json": True, "shell": "echo 1", "x": True}


def test_single_dash_tokens_are_positional_and_can_be_flag_values() -> None:
    assert parse_stage("map -x --k -y").args == {"_": ["-x"], "k": "-y"}


def test_truthy_flag_strings_stay_strings() -> None:
    # S-2: values are never converted; commands test them with JS truthiness.
    assert parse_stage("sort --desc=false --emit 0 --json=").args == {"_": [], "desc": "false", "emit": "0", "json": ""}


def test_last_repeated_key_wins_and_keeps_first_position() -> None:
    assert list(parse_stage("map --a=1 --b=2 --a=3").args.items()) == [("_", []), ("a", "3"), ("b", "2")]


def test_double_dash_alone_is_the_empty_key() -> None:
    assert parse_stage("map --=x -- e --e=").args == {"_": [], "": "e", "e": ""}


def test_quoting_does_not_protect_a_flag() -> None:
    assert parse_stage("""map "--x" '--y=1'""").args == {"_": [], "x": True, "y": "1"}


def test_integer_like_keys_come_first_like_a_javascript_object() -> None:
    args = parse_stage("map --5=a --b=c --1 z y --01=q --4294967295=big --4294967294=idx").args
    assert list(args) == ["1", "5", "4294967294", "_", "b", "01", "4294967295"]
    assert json.dumps(args, separators=(",", ":")).startswith('{"1":"z","5":"a"')


def test_proto_flag_vanishes_like_in_javascript() -> None:
    assert parse_stage("map --__proto__ x --constructor=y").args == {"_": [], "constructor": "y"}


def test_underscore_flag_is_refused() -> None:
    # The reference replaces args._ with the string and later crashes; we reject it up front.
    with pytest.raises(LobsterParseError):
        parse_stage("map --_=q")


def test_parse_pipeline_returns_stages_in_order() -> None:
    stages = parse_pipeline("exec --json --shell 'echo [1]' | where a=1 | pick a,b |")
    assert [(s.name, s.raw) for s in stages] == [
        ("exec", "exec --json --shell 'echo [1]'"),
        ("where", "where a=1"),
        ("pick", "pick a,b"),
    ]


def test_names_are_not_checked_by_the_parser() -> None:
    assert parse_pipeline("NoSuchThing --x")[0].name == "NoSuchThing"


# -- helpers --------------------------------------------------------------------------------------


def test_js_trim_uses_the_javascript_set() -> None:
    assert js_trim("\u2003\ufeff a \u3000\n") == "a"
    assert js_trim("\x1c a") == "\x1c a"  # Python's strip() would remove U+001C


def test_js_key_order() -> None:
    assert list(js_key_order({"b": 1, "10": 2, "2": 3, "a": 4})) == ["2", "10", "b", "a"]


def test_quote_token_leaves_safe_tokens_bare() -> None:
    assert quote_token("--json=true") == "--json=true"
    assert quote_token("a b") == '"a b"'
    assert quote_token('x"y\\') == '"x\\"y\\\\"'


def test_quote_token_rejects_the_empty_token() -> None:
    with pytest.raises(ValueError):
        quote_token("")


# -- properties -----------------------------------------------------------------------------------

DSL_TEXT = st.text(alphabet=st.sampled_from(list("ab -=_|'\"\\\t\n\r$`\u00a0\v")) | st.characters(), max_size=40)


@settings(max_examples=200, deadline=None)
@given(DSL_TEXT)
def test_parser_only_raises_parse_errors(text: str) -> None:
    try:
        stages = parse_pipeline(text)
    except LobsterParseError:
        return
    for stage in stages:
        assert stage.name and stage.raw == js_trim(stage.raw)
        assert isinstance(stage.args["_"], list)
        assert all(isinstance(v, str) or v is True for k, v in stage.args.items() if k != "_")


@settings(max_examples=200, deadline=None)
@given(DSL_TEXT)
def test_tokenize_only_raises_parse_errors_and_never_yields_empty_tokens(text: str) -> None:
    try:
        tokens = tokenize(text)
    except LobsterParseError:
        return
    assert all(tokens)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=6))
def test_quote_token_round_trips(tokens: list[str]) -> None:
    line = " ".join(quote_token(token) for token in tokens)
    assert tokenize(line) == tokens
    stages = parse_pipeline("cmd " + line)
    assert len(stages) == 1
    assert tokenize(stages[0].raw) == ["cmd", *tokens]
