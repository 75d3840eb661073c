"""``template``: render ``{{path | filter …}}`` text once per item (spec §5.13).

Filters follow JavaScript semantics (``String()``, ``parseInt``, ``toFixed``, ``Date``) because the
reference is JavaScript and the same template must give the same text under both runtimes.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...errors import LobsterRuntimeError
from ...jsvalues import UNDEFINED, dumps_compact, dumps_pretty, js_string
from ..base import CommandContext, CommandResult, command, positionals
from ..parser import JS_WHITESPACE, js_trim
from .data import (
    is_nan,
    is_nullish,
    is_number,
    js_number,
    lookup_expression,
    render_placeholders,
    string_flag,
    utf16_len,
    utf16_slice,
    utf16_units,
)

_DEFAULT_TRUNCATE = 80
_MAX_FIXED_DIGITS = 100
_TO_FIXED_EXPONENT_LIMIT = 1e21  # toFixed falls back to String(x) from here on
_MAX_TIME_MS = 8.64e15  # the JavaScript Date range (TimeClip)
_MS_PER_DAY = 86_400_000
_INT_PREFIX = re.compile(r"[+-]?[0-9]+")

Filter = Callable[[Any, list[str]], Any]


# -- placeholders and filter syntax ---------------------------------------------------------------


def split_expression(expression: str) -> list[str]:
    """Split a placeholder at ``|`` outside quotes; parts are trimmed (R-CMD-TEMPLATE-2)."""
    parts: list[str] = []
    current: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(expression):
        char = expression[i]
        if quote is not None and char == "\\":
            current.append(expression[i : i + 2])  # escapes are kept for the filter tokenizer
            i += 2
            continue
        if quote is not None and char == quote:
            quote = None
        elif quote is None and char in "'\"":
            quote = char
        elif quote is None and char == "|":
            parts.append("".join(current))
            current = []
            i += 1
            continue
        current.append(char)
        i += 1
    parts.append("".join(current))
    return [js_trim(part) for part in parts]


def filter_words(text: str) -> list[str]:
    """Split a filter expression into words (R-CMD-TEMPLATE-3).

    Words are separated by spaces (only ``" "``, not tabs). A word that starts with a quote runs to
    the matching quote (or the end) with backslash escapes resolved, and ends there; any other word
    runs to the next space, quotes included (``a"b c"`` gives ``a"b`` and ``c"``).
    """
    words: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == " ":
            i += 1
        elif char in "'\"":
            word, i = _quoted_word(text, i + 1, char)
            words.append(word)
        else:
            end = text.find(" ", i)
            end = len(text) if end < 0 else end
            words.append(text[i:end])
            i = end
    return words


def _quoted_word(text: str, start: int, quote: str) -> tuple[str, int]:
    chars: list[str] = []
    i = start
    while i < len(text) and text[i] != quote:
        if text[i] == "\\" and i + 1 < len(text):
            i += 1
        chars.append(text[i])
        i += 1
    return "".join(chars), i + 1


def js_parse_int(text: str) -> int | float:
    """JavaScript ``parseInt(text, 10)``: the leading integer, or ``math.nan``."""
    match = _INT_PREFIX.match(text.lstrip(JS_WHITESPACE))
    return int(match.group()) if match else math.nan


def _text(value: Any) -> str:
    """``String(value ?? "")``."""
    return "" if is_nullish(value) else js_string(value)


# -- filters --------------------------------------------------------------------------------------


def _arg(args: list[str], index: int, default: Any) -> Any:
    return args[index] if len(args) > index else default


def _truncate(value: Any, args: list[str]) -> Any:
    text = _text(value)
    limit = js_parse_int(_arg(args, 0, ""))
    limit = _DEFAULT_TRUNCATE if is_nan(limit) else limit
    return utf16_slice(text, limit) + "..." if utf16_len(text) > limit else text


def _split(value: Any, args: list[str]) -> Any:
    text = _text(value)
    separator = _arg(args, 0, ",")
    if separator == "":
        units = utf16_units(text)
        return [units[i : i + 2].decode("utf-16-be", "surrogatepass") for i in range(0, len(units), 2)]
    return text.split(separator)


def _join(value: Any, args: list[str]) -> Any:
    if not isinstance(value, list):
        return _text(value)
    return _arg(args, 0, ", ").join(_text(element) for element in value)


def _length(value: Any, args: list[str]) -> Any:
    if isinstance(value, list):
        return len(value)
    return utf16_len(value) if isinstance(value, str) else 0


def _default(value: Any, args: list[str]) -> Any:
    return _arg(args, 0, UNDEFINED) if is_nullish(value) or value == "" else value


def _round(value: Any, args: list[str]) -> Any:
    number = js_number(value)
    if is_nan(number):
        return value
    digits = js_parse_int(_arg(args, 0, ""))
    digits = 0 if is_nan(digits) else digits
    if not 0 <= digits <= _MAX_FIXED_DIGITS:
        raise LobsterRuntimeError("toFixed() digits argument must be between 0 and 100")
    if math.isinf(number) or abs(number) >= _TO_FIXED_EXPONENT_LIMIT:
        return number
    # toFixed rounds the exact binary value half away from zero; Decimal(x) is that exact value.
    from decimal import ROUND_HALF_UP, Decimal  # only the round filter needs it

    rounded = float(Decimal(number).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))
    return int(rounded) if rounded.is_integer() else rounded


def _json(value: Any, args: list[str]) -> Any:
    return UNDEFINED if value is UNDEFINED else dumps_pretty(value)


def _date(value: Any, args: list[str]) -> Any:
    epoch_ms = _date_value(value)
    if epoch_ms is None:
        return js_string(value)
    if not args or not args[0]:
        return iso_string(epoch_ms)
    return format_date(epoch_ms, args[0])


FILTERS: dict[str, Filter] = {
    "upper": lambda value, args: _text(value).upper(),
    "lower": lambda value, args: _text(value).lower(),
    "trim": lambda value, args: js_trim(_text(value)),
    "truncate": _truncate,
    "replace": lambda value, args: _text(value).replace(_arg(args, 0, ""), _arg(args, 1, "")),
    "split": _split,
    "first": lambda value, args: (value[0] if value else UNDEFINED) if isinstance(value, list) else value,
    "last": lambda value, args: (value[-1] if value else UNDEFINED) if isinstance(value, list) else value,
    "length": _length,
    "join": _join,
    "json": _json,
    "string": lambda value, args: _text(value),
    "default": _default,
    "round": _round,
    "date": _date,
}


def apply_filter(value: Any, expression: str) -> Any:
    """Apply one filter expression such as ``truncate 20`` or ``default "N/A"``."""
    words = filter_words(expression)
    name = words[0] if words else ""
    handler = FILTERS.get(name)
    if handler is None:
        raise LobsterRuntimeError(f"Unknown template filter: {name}")
    return handler(value, words[1:])


def evaluate(item: Any, expression: str) -> str:
    """The text of one ``{{ … }}`` placeholder for ``item``."""
    path, *filters = split_expression(expression)
    value = lookup_expression(item, path)
    for expression_part in filters:
        value = apply_filter(value, expression_part)
    if is_nullish(value):
        return ""
    if isinstance(value, (str, bool)) or is_number(value):
        return js_string(value)
    return dumps_compact(value)


def render_template(text: str, item: Any) -> str:
    """Render every placeholder of ``text`` against ``item``."""
    return render_placeholders(text, lambda expression: evaluate(item, expression))


# -- dates ----------------------------------------------------------------------------------------

_ISO_DATE = re.compile(
    r"(?P<year>[+-]\d{6}|\d{4})(?:-(?P<month>\d{2})(?:-(?P<day>\d{2}))?)?"
    r"(?:[Tt](?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:\.(?P<fraction>\d+))?)?"
    r"(?P<zone>[Zz]|[+-]\d{2}:\d{2})?)?"
)
# V8's fallback parser accepts far more; these are the common machine-written shapes.
_NUMERIC_DATE = re.compile(
    r"(?P<year>\d{4,6})[-/](?P<month>\d{1,2})[-/](?P<day>\d{1,2})"
    r"(?:[ Tt](?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:\.(?P<fraction>\d+))?)?)?"
    r" *(?P<zone>[Zz]|UTC|GMT|[+-]\d{2}:?\d{2})?"
)
_UTC_STRING = re.compile(
    r"(?:[A-Za-z]{3}, )?(?P<day>\d{1,2}) (?P<month>[A-Za-z]{3}) (?P<year>\d{4})"
    r" (?P<hour>\d{2}):(?P<minute>\d{2}):(?P<second>\d{2}) (?P<zone>GMT|UTC|Z|[+-]\d{4})"
)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def _date_value(value: Any) -> int | None:
    """``new Date(x)`` as epoch milliseconds: numbers and all-digit strings are epoch ms, other
    values are parsed as date text; ``None`` for an Invalid Date."""
    if is_number(value):
        epoch: float | None = value
    elif isinstance(value, str) and _is_digits(js_trim(value)):
        epoch = int(js_trim(value))
    else:
        epoch = parse_date(js_string(value))
    if epoch is None or math.isnan(epoch) or abs(epoch) > _MAX_TIME_MS:
        return None
    return int(epoch)  # TimeClip truncates towards zero


def _is_digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def parse_date(text: str) -> float | None:
    """``Date.parse(text)`` for ISO strings, ``YYYY-MM-DD hh:mm`` / ``YYYY/MM/DD`` and UTC strings.

    As in JavaScript, an ISO date alone is UTC while a date-time without an offset, and any
    non-ISO form without a zone, is local time. Other forms give ``None`` (Invalid Date).
    """
    iso = _ISO_DATE.fullmatch(text)
    if iso is not None:
        return _from_fields(iso.groupdict(), local=iso["hour"] is not None)
    trimmed = js_trim(text)
    for pattern in (_NUMERIC_DATE, _UTC_STRING):
        match = pattern.fullmatch(trimmed)
        if match is not None:
            return _from_fields(match.groupdict(), local=True)
    return None


def _from_fields(fields: dict[str, str | None], *, local: bool) -> float | None:
    year_text = fields["year"] or ""
    if year_text == "-000000":
        return None  # ISO forbids a negative zero year
    month = _month_number(fields.get("month"))
    day = int(fields.get("day") or 1)
    hour, minute, second = (int(fields.get(name) or 0) for name in ("hour", "minute", "second"))
    millis = int(((fields.get("fraction") or "") + "000")[:3])
    if not (1 <= month <= 12 and 1 <= day <= 31 and minute < 60 and second < 60):
        return None
    if hour > 24 or (hour == 24 and (minute or second or millis)):
        return None
    # Day overflow is allowed, as in JS (2023-02-29 is 1 March).
    days = days_from_civil(int(year_text), month, 1) + day - 1
    epoch = days * _MS_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1000 + millis
    zone = fields.get("zone")
    if zone:
        return epoch - _zone_offset_minutes(zone) * 60_000
    return _local_to_utc(epoch) if local else epoch


def _month_number(text: str | None) -> int:
    """A month from digits or an English abbreviation (``Mar``); 0 (invalid) for anything else."""
    if text is None:
        return 1
    if text.isdigit():
        return int(text)
    lowered = text.lower()
    return _MONTHS.index(lowered) + 1 if lowered in _MONTHS else 0


def _zone_offset_minutes(zone: str) -> int:
    if zone.upper() in ("Z", "UTC", "GMT"):
        return 0
    digits = zone[1:].replace(":", "")
    minutes = int(digits[:2]) * 60 + int(digits[2:])
    return -minutes if zone[0] == "-" else minutes


def _local_to_utc(wall_ms: int) -> int:
    """Treat ``wall_ms`` as local wall-clock time and return the UTC epoch, as JS Date does."""
    try:
        offset = time.localtime(wall_ms / 1000).tm_gmtoff
        offset = time.localtime(wall_ms / 1000 - offset).tm_gmtoff  # re-check across DST edges
    except (OverflowError, OSError, ValueError):
        return wall_ms
    return wall_ms - offset * 1000


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year, unlike ``datetime``)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def civil_from_days(days: int) -> tuple[int, int, int]:
    """The ``(year, month, day)`` of a day count since 1970-01-01."""
    shifted = days + 719468
    era = shifted // 146097
    day_of_era = shifted - era * 146097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_index = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * month_index + 2) // 5 + 1
    month = month_index + 3 if month_index < 10 else month_index - 9
    return year_of_era + era * 400 + (month <= 2), month, day


def _utc_fields(epoch_ms: int) -> tuple[int, int, int, int, int, int, int]:
    days, rest = divmod(epoch_ms, _MS_PER_DAY)
    year, month, day = civil_from_days(days)
    seconds, millis = divmod(rest, 1000)
    return year, month, day, seconds // 3600, seconds // 60 % 60, seconds % 60, millis


def iso_string(epoch_ms: int) -> str:
    """JavaScript ``toISOString()``: ``YYYY-MM-DDTHH:mm:ss.sssZ``, 6-digit signed years outside 0..9999."""
    year, month, day, hour, minute, second, millis = _utc_fields(epoch_ms)
    year_text = f"{year:04d}" if 0 <= year <= 9999 else f"{'-' if year < 0 else '+'}{abs(year):06d}"
    return f"{year_text}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}.{millis:03d}Z"


def format_date(epoch_ms: int, pattern: str) -> str:
    """Replace the first ``YYYY``, ``MM``, ``DD``, ``HH``, ``mm``, ``ss`` with UTC components."""
    year, month, day, hour, minute, second, _ = _utc_fields(epoch_ms)
    for token, text in (
        ("YYYY", str(year)),
        ("MM", f"{month:02d}"),
        ("DD", f"{day:02d}"),
        ("HH", f"{hour:02d}"),
        ("mm", f"{minute:02d}"),
        ("ss", f"{second:02d}"),
    ):
        pattern = pattern.replace(token, text, 1)
    return pattern


# -- the command ----------------------------------------------------------------------------------


def _read_template_file(path: str) -> str:
    """Read ``path`` relative to the process cwd; errors read like Node's."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except IsADirectoryError:
        raise LobsterRuntimeError("EISDIR: illegal operation on a directory, read") from None
    except FileNotFoundError:
        raise LobsterRuntimeError(f"ENOENT: no such file or directory, open '{path}'") from None
    except PermissionError:
        raise LobsterRuntimeError(f"EACCES: permission denied, open '{path}'") from None
    except (OSError, UnicodeDecodeError) as error:
        raise LobsterRuntimeError(f"template --file {path}: {error}") from None


def _template_source(args: dict[str, Any]) -> str:
    """``--text``, else ``--file``, else the positionals joined by spaces (R-CMD-TEMPLATE-1)."""
    text = string_flag(args, "text")
    if text is None:
        path = string_flag(args, "file")
        text = _read_template_file(path) if path is not None else " ".join(positionals(args))
    if not text:
        raise LobsterRuntimeError("template requires --text or --file (or positional text)")
    return text


@command(
    "template",
    description="Render a {{path | filter}} template once per item",
    args_schema={
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "Template text ({{path}}, {{path | filter}}, {{.}})"},
            "file": {"type": "string", "description": "Template file (relative to the process cwd)"},
            "_": {"type": "array", "items": {"type": "string"}, "description": "Template text, joined by spaces"},
        },
    },
    examples=["template --text '{{title | truncate 60}} ({{updatedAt | date \"YYYY-MM-DD\"}})'"],
)
def template_command(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
    """Output one rendered string per input item (R-CMD-TEMPLATE-1..4)."""
    text = _template_source(args)
    return CommandResult(output=[render_template(text, item) for item in items])


COMMANDS = [template_command]
