"""A YAML 1.2 (core schema) loader on top of PyYAML (R-GEN-11, S-25).

PyYAML resolves plain scalars with YAML 1.1 rules (``yes``/``on`` are booleans, ``012`` is octal,
``2001-12-14`` is a date, ``<<`` merges). The reference parses workflow files with the JavaScript
``yaml`` package in 1.2 mode, so this loader swaps in the 1.2 core-schema resolvers and builds the
values a JavaScript object would hold: string keys, no dates, no sets, no bytes.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

from ..jsvalues import js_string

# libyaml's parser is several times faster; the resolvers and constructors below are Python either way.
_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)

_TAG = "tag:yaml.org,2002:"


class Yaml12Loader(_BaseLoader):  # type: ignore[misc]
    """PyYAML safe loader with YAML 1.2 core-schema scalar resolution and JS-shaped mappings."""

    # Start from no implicit resolvers at all, so none of PyYAML's 1.1 rules leak through.
    yaml_implicit_resolvers: dict[Any, Any] = {}


Yaml12Loader.add_implicit_resolver(_TAG + "null", _NULL, ["~", "n", "N", ""])
Yaml12Loader.add_implicit_resolver(_TAG + "bool", _BOOL, list("tTfF"))
# Registered before float: for a shared first character the first matching resolver wins.
Yaml12Loader.add_implicit_resolver(_TAG + "int", _INT, list("-+0123456789"))
Yaml12Loader.add_implicit_resolver(_TAG + "float", _FLOAT, list("-+.0123456789"))


def _construct_bool(loader: Yaml12Loader, node: yaml.ScalarNode) -> bool:
    return loader.construct_scalar(node).lower() == "true"


def _construct_int(loader: Yaml12Loader, node: yaml.ScalarNode) -> int | str:
    text = loader.construct_scalar(node)
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    try:
        return int(text, 10)
    except ValueError:
        # An explicit ``!!int`` on text that is not a 1.2 integer: keep the text, as ``yaml`` does.
        return text


def _construct_float(loader: Yaml12Loader, node: yaml.ScalarNode) -> float | str:
    text = loader.construct_scalar(node)
    lowered = text.lower()
    if lowered.endswith(".inf"):
        return -math.inf if lowered.startswith("-") else math.inf
    if lowered == ".nan":
        return math.nan
    try:
        return float(text)
    except ValueError:
        return text


def _construct_text(loader: Yaml12Loader, node: yaml.Node) -> Any:
    """Tags the 1.2 core schema does not know (``!!timestamp``, ``!!binary``, ``!custom``).

    The ``yaml`` package keeps such nodes as if they were untagged, with a warning; we do the same
    instead of producing ``datetime``/``bytes`` values that JSON cannot carry.
    """
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return _construct_sequence(loader, node)
    return _construct_mapping(loader, node)


def _construct_sequence(loader: Yaml12Loader, node: yaml.SequenceNode) -> list[Any]:
    return loader.construct_sequence(node, deep=True)


def _js_key(key: Any) -> str:
    """A mapping key as a JavaScript object holds it: ``String(key)``, with null becoming ``""``."""
    return "" if key is None else js_string(key)


def _construct_mapping(loader: Yaml12Loader, node: yaml.MappingNode) -> dict[str, Any]:
    result: dict[str, Any] = {}
    seen: set[tuple[type, Any]] = set()
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        mark = key_node.start_mark
        where = f"at line {mark.line + 1}, column {mark.column + 1}"
        if isinstance(key, (list, dict)):
            raise yaml.constructor.ConstructorError(None, None, f"Map keys must be scalars {where}", None)
        # Compare by (type, value): in Python ``1 == True``, in YAML they are different keys.
        identity = (type(key), key)
        if identity in seen:
            raise yaml.constructor.ConstructorError(None, None, f"Map keys must be unique {where}", None)
        seen.add(identity)
        result[_js_key(key)] = loader.construct_object(value_node, deep=True)
    return result


Yaml12Loader.add_constructor(_TAG + "bool", _construct_bool)
Yaml12Loader.add_constructor(_TAG + "int", _construct_int)
Yaml12Loader.add_constructor(_TAG + "float", _construct_float)
Yaml12Loader.add_constructor(_TAG + "map", _construct_mapping)
Yaml12Loader.add_constructor(_TAG + "seq", _construct_sequence)
for _tag in ("timestamp", "binary", "set", "omap", "pairs"):
    Yaml12Loader.add_constructor(_TAG + _tag, _construct_text)
Yaml12Loader.add_constructor(None, _construct_text)


def load_yaml(text: str) -> Any:
    """Parse one YAML 1.2 document into JSON-compatible Python values.

    Mappings become ``dict`` with string keys (duplicates are an error, as in the ``yaml`` package),
    ``yes``/``no``/``on``/``off`` and dates stay strings, ``0o17``/``0x1F`` are integers and
    ``.inf``/``.nan`` floats. More than one document is an error. Raises :class:`yaml.YAMLError`.
    """
    return yaml.load(text, Loader=Yaml12Loader)
