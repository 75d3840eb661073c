"""``lobster graph``: a workflow file as Mermaid, Graphviz DOT or a plain list (spec §7.18).

One node per top-level step and deduplicated edges for step order (``next``), data flow (``stdin``,
``for_each``) and conditions (``when: …``). References are found textually, so a ``$id.x`` inside a
quoted string still draws an edge, as in the reference.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Literal

from ..records import record
from .conditions import referenced_step_ids
from .loader import is_approval_step, is_input_step, js_trim, resolve_args, shell_text
from .templates import resolve_args_template

GraphFormat = Literal["mermaid", "dot", "ascii"]

_LABEL_BREAK = "\\n"
"""Node labels join id and detail with the two characters backslash and ``n``."""

_MERMAID_ENTITIES = {"&": "&amp;", '"': "&quot;", "<": "&lt;", ">": "&gt;", "|": "&#124;"}


@record(frozen=True, slots=True)
class _Node:
    id: str
    type: str
    label: str
    diamond: bool


@record(frozen=True, slots=True)
class _Edge:
    source: str
    target: str
    label: str


def _utf16_width(char: str) -> int:
    return 2 if ord(char) > 0xFFFF else 1


def _truncate(text: str, limit: int) -> str:
    """At most ``limit`` UTF-16 code units (as JavaScript counts), ending in ``…`` when cut.

    Where the cut would split a surrogate pair the whole character is dropped, rather than emitting
    half of it as the reference does.
    """
    if sum(map(_utf16_width, text)) <= limit:
        return text
    kept: list[str] = []
    units = 0
    for char in text:
        units += _utf16_width(char)
        if units > limit - 1:
            break
        kept.append(char)
    return "".join(kept) + "…"


def _step_type(step: dict[str, Any]) -> str:
    if step.get("parallel"):
        return "parallel"
    if isinstance(step.get("for_each"), str):
        return "for_each"
    if isinstance(step.get("workflow"), str) and js_trim(step["workflow"]):
        return "workflow"
    if isinstance(step.get("pipeline"), str) and js_trim(step["pipeline"]):
        return "pipeline"
    if isinstance(step.get("run"), str) or isinstance(step.get("command"), str):
        return "run"
    if is_approval_step(step):
        return "approval"
    if is_input_step(step):
        return "input"
    return "step"


def _step_detail(step: dict[str, Any], args: dict[str, Any]) -> str:
    if step.get("parallel"):
        return f"parallel ({step['parallel'].get('wait', 'all')})"
    for field in ("for_each", "workflow", "pipeline"):
        text = step.get(field)
        if isinstance(text, str) and (field == "for_each" or js_trim(text)):
            return f"{field}: {resolve_args_template(text, args)}"
    shell = shell_text(step)
    if isinstance(shell, str) and js_trim(shell):
        return f"run: {resolve_args_template(shell, args)}"
    if is_approval_step(step):
        return "approval gate"
    if is_input_step(step):
        return "input request"
    return ""


def _refs_in(value: Any) -> Iterator[str]:
    """Step ids referenced by ``$id.path`` texts anywhere inside a value (strings, lists, maps)."""
    if isinstance(value, str):
        yield from referenced_step_ids(value)
    elif isinstance(value, list):
        for item in value:
            yield from _refs_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _refs_in(item)


def _collect(doc: dict[str, Any], args: dict[str, Any]) -> tuple[list[_Node], list[_Edge]]:
    steps: list[dict[str, Any]] = doc["steps"]
    known = {step["id"] for step in steps}
    nodes: list[_Node] = []
    edges: dict[_Edge, None] = {}  # insertion-ordered set: duplicates keep their first position

    def add(source: str, target: str, label: str) -> None:
        if source in known:
            edges.setdefault(_Edge(source, target, label))

    previous: str | None = None
    for step in steps:
        step_id = step["id"]
        detail = _step_detail(step, args)
        label = f"{step_id}{_LABEL_BREAK}{_truncate(detail, 80)}" if detail else step_id
        nodes.append(_Node(step_id, _step_type(step), label, is_approval_step(step)))
        if previous is not None:
            add(previous, step_id, "next")
        previous = step_id
        for ref in _refs_in(step.get("stdin")):
            add(ref, step_id, "stdin")
        if isinstance(step.get("for_each"), str):
            for ref in referenced_step_ids(step["for_each"]):
                add(ref, step_id, "for_each")
        condition = step.get("when")
        if condition is None:
            condition = step.get("condition")
        if isinstance(condition, str) and js_trim(condition):
            when = _truncate(f"when: {js_trim(condition)}", 70)
            for ref in referenced_step_ids(condition):
                add(ref, step_id, when)
    return nodes, list(edges)


def _sanitize_key(step_id: str) -> str:
    # Characters outside the BMP are two UTF-16 units in JavaScript, so two underscores.
    return re.sub(r"[^A-Za-z0-9_]", lambda m: "_" * _utf16_width(m.group(0)), step_id)


def _mermaid_keys(nodes: list[_Node]) -> dict[str, str]:
    """Unique Mermaid node keys: sanitised id, ``step`` when empty, ``s_`` before a digit, ``_2``… on clashes."""
    keys: dict[str, str] = {}
    used: set[str] = set()
    for node in nodes:
        key = _sanitize_key(node.id) or "step"
        if key[0].isascii() and key[0].isdigit():
            key = f"s_{key}"
        suffix = 2
        while key in used:
            # The reference rebuilds clash keys from the bare sanitised id (no ``s_``/``step``).
            key = f"{_sanitize_key(node.id)}_{suffix}"
            suffix += 1
        used.add(key)
        keys[node.id] = key
    return keys


def _escape_mermaid(text: str) -> str:
    return "".join(_MERMAID_ENTITIES.get(char, char) for char in text)


def _render_mermaid(nodes: list[_Node], edges: list[_Edge]) -> list[str]:
    keys = _mermaid_keys(nodes)
    lines = ["flowchart TD"]
    for node in nodes:
        label = _escape_mermaid(node.label)
        lines.append(f'  {keys[node.id]}{{"{label}"}}' if node.diamond else f'  {keys[node.id]}["{label}"]')
    lines.append("")
    lines.extend(f"  {keys[e.source]} -->|{_escape_mermaid(e.label)}| {keys[e.target]}" for e in edges)
    return lines


def _escape_dot(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _render_dot(nodes: list[_Node], edges: list[_Edge]) -> list[str]:
    lines = ["digraph workflow {", "  rankdir=TB;"]
    for node in nodes:
        shape = "diamond" if node.diamond else "box"
        lines.append(f'  "{_escape_dot(node.id)}" [shape={shape},label="{_escape_dot(node.label)}"];')
    lines.append("")
    lines.extend(
        f'  "{_escape_dot(e.source)}" -> "{_escape_dot(e.target)}" [label="{_escape_dot(e.label)}"];' for e in edges
    )
    lines.append("}")
    return lines


def _render_ascii(nodes: list[_Node], edges: list[_Edge]) -> list[str]:
    lines = ["Workflow Graph", "", "Nodes:"]
    for node in nodes:
        # The detail is read back from the label, as the reference does (an id containing a
        # literal backslash-n therefore shows part of the id).
        parts = node.label.split(_LABEL_BREAK)
        lines.append(f"- {node.id} [{node.type}] ({parts[1]})" if len(parts) > 1 else f"- {node.id} [{node.type}]")
    lines.extend(["", "Edges:"])
    lines.extend(f"- {e.source} -> {e.target} ({e.label})" for e in edges)
    if not edges:
        lines.append("- (none)")
    return lines


def render_graph(doc: dict[str, Any], args: Any, fmt: GraphFormat) -> str:
    """The graph of a validated workflow document, without a trailing newline (R-WF-150..152).

    ``args`` are the provided or already resolved args (defaults are applied here; resolving twice
    is harmless); they are substituted into ``run``/``pipeline``/``workflow``/``for_each`` details.
    """
    nodes, edges = _collect(doc, resolve_args(doc, args))
    if fmt == "mermaid":
        lines = _render_mermaid(nodes, edges)
    elif fmt == "dot":
        lines = _render_dot(nodes, edges)
    elif fmt == "ascii":
        lines = _render_ascii(nodes, edges)
    else:
        raise ValueError(f"unknown graph format: {fmt}")
    return "\n".join(lines)
