"""``lobster graph`` rendering (spec §7.18; C-37)."""

from __future__ import annotations

import html
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lobster_tui.core.workflow.graph import render_graph
from lobster_tui.core.workflow.loader import load_workflow, validate_workflow

WEATHER = """\
args: {city: {default: Phoenix}}
steps:
  - id: fetch
    run: weather --json ${city}
  - id: confirm
    approval: Want jacket advice?
    stdin: $fetch.json
  - id: advice
    pipeline: llm.invoke --prompt "x <y> & z | w"
    stdin: $fetch.json
    when: $confirm.approved && $fetch.json.temp > 10
"""

WEATHER_MERMAID = """\
flowchart TD
  fetch["fetch\\nrun: weather --json Seattle"]
  confirm{"confirm\\napproval gate"}
  advice["advice\\npipeline: llm.invoke --prompt &quot;x &lt;y&gt; &amp; z &#124; w&quot;"]

  fetch -->|next| confirm
  fetch -->|stdin| confirm
  confirm -->|next| advice
  fetch -->|stdin| advice
  confirm -->|when: $confirm.approved &amp;&amp; $fetch.json.temp &gt; 10| advice
  fetch -->|when: $confirm.approved &amp;&amp; $fetch.json.temp &gt; 10| advice"""

WEATHER_DOT = """\
digraph workflow {
  rankdir=TB;
  "fetch" [shape=box,label="fetch\\\\nrun: weather --json Seattle"];
  "confirm" [shape=diamond,label="confirm\\\\napproval gate"];
  "advice" [shape=box,label="advice\\\\npipeline: llm.invoke --prompt \\"x <y> & z | w\\""];

  "fetch" -> "confirm" [label="next"];
  "fetch" -> "confirm" [label="stdin"];
  "confirm" -> "advice" [label="next"];
  "fetch" -> "advice" [label="stdin"];
  "confirm" -> "advice" [label="when: $confirm.approved && $fetch.json.temp > 10"];
  "fetch" -> "advice" [label="when: $confirm.approved && $fetch.json.temp > 10"];
}"""

WEATHER_ASCII = """\
Workflow Graph

Nodes:
- fetch [run] (run: weather --json Seattle)
- confirm [approval] (approval gate)
- advice [pipeline] (pipeline: llm.invoke --prompt "x <y> & z | w")

Edges:
- fetch -> confirm (next)
- fetch -> confirm (stdin)
- confirm -> advice (next)
- fetch -> advice (stdin)
- confirm -> advice (when: $confirm.approved && $fetch.json.temp > 10)
- fetch -> advice (when: $confirm.approved && $fetch.json.temp > 10)"""

# Awkward ids, every node type, nested stdin refs, references to later steps and to branches,
# duplicate edges, long details and conditions.
KITCHEN_SINK = """\
args: {city: {default: Phoenix}, n: {default: 3}}
steps:
  - id: 1st step
    run: weather --json ${city} $later.json ${nope}
  - id: a-b
    pipeline: "exec --shell 'echo ${city}' | where x==\\"y\\" | pick a|b <c> & d"
    stdin: {x: ["$1st.json", "$a-b.stdout", "$later.json", "$nope.json $1st.stdout"]}
    when: "$later.json.x > 1 && '$a-b.json' == x || $1st.approved"
  - id: a_b
    run: "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
    approval: true
    condition: "$a-b.json.loooooooooooooooooooooooooooooooooooong == \\"vaaaaaaaaaaaaaaaaaaaaaaaalue\\""
  - id: later
    for_each: " $a_b.json ${city}"
    steps: [{id: s, run: x}]
    when: true
  - id: "*"
    workflow: "c\\\\d\\"e.lobster ${city}"
  - id: z
    approval: {prompt: x}
  - id: w
    input: {prompt: x, responseSchema: {}}
    stdin: $z.json
    when: "  $w.json  "
  - id: p
    parallel: {branches: [{id: b1, run: x}]}
  - id: q
    approval: false
    run: " "
    stdin: "$b1.json"
  - id: 9x
    run: "012345678901234567890123456789012345678901234567890123456789012345678901234567890"
  - id: "9x "
    run: "01234567890123456789012345678901234567890123456789012345678901234567890123456789"
"""

KITCHEN_SINK_ASCII = """\
Workflow Graph

Nodes:
- 1st step [run] (run: weather --json Seattle $later.json ${nope})
- a-b [pipeline] (pipeline: exec --shell 'echo Seattle' | where x=="y" | pick a|b <c> & d)
- a_b [run] (run: 01234567890123456789012345678901234567890123456789012345678901234567890123…)
- later [for_each] (for_each:  $a_b.json Seattle)
- * [workflow] (workflow: c\\d"e.lobster Seattle)
- z [approval] (approval gate)
- w [input] (input request)
- p [parallel] (parallel (all))
- q [run]
- 9x [run] (run: 01234567890123456789012345678901234567890123456789012345678901234567890123…)
- 9x  [run] (run: 01234567890123456789012345678901234567890123456789012345678901234567890123…)

Edges:
- 1st step -> a-b (next)
- a-b -> a-b (stdin)
- later -> a-b (stdin)
- later -> a-b (when: $later.json.x > 1 && '$a-b.json' == x || $1st.approved)
- a-b -> a-b (when: $later.json.x > 1 && '$a-b.json' == x || $1st.approved)
- a-b -> a_b (next)
- a-b -> a_b (when: $a-b.json.loooooooooooooooooooooooooooooooooooong == "vaaaaaaaa…)
- a_b -> later (next)
- a_b -> later (for_each)
- later -> * (next)
- * -> z (next)
- z -> w (next)
- z -> w (stdin)
- w -> w (when: $w.json)
- w -> p (next)
- p -> q (next)
- q -> 9x (next)
- 9x -> 9x  (next)"""


def _doc(tmp_path: Path, text: str) -> dict[str, Any]:
    path = tmp_path / "wf.lobster"
    path.write_text(text)
    doc = load_workflow(str(path))
    validate_workflow(doc)
    assert isinstance(doc, dict)
    return doc


def test_c37_mermaid(tmp_path: Path) -> None:
    output = render_graph(_doc(tmp_path, WEATHER), {"city": "Seattle"}, "mermaid")
    assert output == WEATHER_MERMAID
    lines = output.splitlines()
    assert '  fetch["fetch\\nrun: weather --json Seattle"]' in lines
    assert '  confirm{"confirm\\napproval gate"}' in lines
    assert "  fetch -->|stdin| confirm" in lines


def test_c37_dot(tmp_path: Path) -> None:
    output = render_graph(_doc(tmp_path, WEATHER), {"city": "Seattle"}, "dot")
    assert output == WEATHER_DOT
    assert '  "confirm" [shape=diamond,label="confirm\\\\napproval gate"];' in output.splitlines()


def test_c37_ascii(tmp_path: Path) -> None:
    assert render_graph(_doc(tmp_path, WEATHER), {"city": "Seattle"}, "ascii") == WEATHER_ASCII


def test_defaults_apply_when_no_args_are_given(tmp_path: Path) -> None:
    assert "run: weather --json Phoenix" in render_graph(_doc(tmp_path, WEATHER), {}, "ascii")


def test_kitchen_sink_ascii(tmp_path: Path) -> None:
    assert render_graph(_doc(tmp_path, KITCHEN_SINK), {"city": "Seattle"}, "ascii") == KITCHEN_SINK_ASCII


def test_kitchen_sink_mermaid_keys_and_escapes(tmp_path: Path) -> None:
    lines = render_graph(_doc(tmp_path, KITCHEN_SINK), {"city": "Seattle"}, "mermaid").splitlines()
    assert lines[1] == '  s_1st_step["1st step\\nrun: weather --json Seattle $later.json ${nope}"]'
    assert lines[2] == (
        '  a_b["a-b\\npipeline: exec --shell \'echo Seattle\' &#124; where x==&quot;y&quot; '
        '&#124; pick a&#124;b &lt;c&gt; &amp; d"]'
    )
    assert lines[3].startswith('  a_b_2{"a_b\\nrun: 0123')
    assert lines[5] == '  _["*\\nworkflow: c\\d&quot;e.lobster Seattle"]'
    assert lines[9] == '  q["q"]'
    assert lines[10].startswith('  s_9x["9x\\nrun: ')
    assert lines[11].startswith('  s_9x_["9x \\nrun: ')
    assert "  a_b_2 -->|for_each| later" in lines
    assert "  w -->|when: $w.json| w" in lines


def test_kitchen_sink_dot_escapes_backslashes_and_quotes(tmp_path: Path) -> None:
    lines = render_graph(_doc(tmp_path, KITCHEN_SINK), {"city": "Seattle"}, "dot").splitlines()
    assert '  "*" [shape=box,label="*\\\\nworkflow: c\\\\d\\"e.lobster Seattle"];' in lines
    assert '  "9x" -> "9x " [label="next"];' in lines


@pytest.mark.parametrize(
    ("ids", "keys"),
    [
        (["a-b", "a_b", "a.b"], ["a_b", "a_b_2", "a_b_3"]),
        (["9-a", "9_a"], ["s_9_a", "9_a_2"]),
        ([" ", "_"], ["_", "__2"]),
        (["é", "😀"], ["_", "__"]),
    ],
)
def test_mermaid_keys(ids: list[str], keys: list[str]) -> None:
    doc = {"steps": [{"id": step_id, "run": "x"} for step_id in ids]}
    lines = render_graph(doc, {}, "mermaid").splitlines()[1 : len(ids) + 1]
    assert [line.split("[")[0].strip() for line in lines] == keys


def test_truncation_counts_utf16_units() -> None:
    detail = "run: " + "😀" * 40
    doc = {"steps": [{"id": "a", "run": "😀" * 40}]}
    (line,) = [row for row in render_graph(doc, {}, "ascii").splitlines() if row.startswith("- a ")]
    kept = line.removeprefix("- a [run] (").removesuffix(")")
    assert kept == detail[: 5 + 37] + "…"


def test_a_single_step_has_no_edges() -> None:
    doc = {"steps": [{"id": "only", "approval": True}]}
    assert render_graph(doc, {}, "ascii") == "Workflow Graph\n\nNodes:\n- only [approval] (approval gate)\n\nEdges:\n- (none)"
    assert render_graph(doc, {}, "mermaid") == 'flowchart TD\n  only{"only\\napproval gate"}\n'
    assert render_graph(doc, {}, "dot") == (
        'digraph workflow {\n  rankdir=TB;\n  "only" [shape=diamond,label="only\\\\napproval gate"];\n\n}'
    )


def test_condition_is_used_when_when_is_null() -> None:
    doc = {"steps": [{"id": "a", "run": "x"}, {"id": "b", "run": "y", "when": None, "condition": "$a.json"}]}
    assert render_graph(doc, {}, "ascii").splitlines()[-1] == "- a -> b (when: $a.json)"


def test_an_unknown_format_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="svg"):
        render_graph({"steps": [{"id": "a", "run": "x"}]}, {}, "svg")  # type: ignore[arg-type]


def _official_bin() -> str | None:
    for candidate in (os.environ.get("LOBSTER_OFFICIAL_BIN", ""), "/work/official-lobster/node_modules/.bin/lobster"):
        if candidate and Path(candidate).exists() and shutil.which("node"):
            return candidate
    return None


def _release_mermaid(text: str) -> str:
    """Our (head) Mermaid label escaping rewritten as the 2026.5.22 release escapes: only ``\\"``."""
    return html.unescape(text.replace("&quot;", '\\"'))


@pytest.mark.official
@pytest.mark.parametrize("fmt", ["mermaid", "dot", "ascii"])
@pytest.mark.parametrize("workflow", [WEATHER, KITCHEN_SINK], ids=["weather", "kitchen-sink"])
def test_graphs_match_the_official_runtime(tmp_path: Path, workflow: str, fmt: str) -> None:
    official = _official_bin()
    if official is None:
        pytest.skip("the official Lobster runtime (Node + @clawdbot/lobster) is not installed")
    path = tmp_path / "wf.lobster"
    path.write_text(workflow)
    proc = subprocess.run(
        [official, "graph", "--file", str(path), "--format", fmt, "--args-json", '{"city":"Seattle"}'],
        capture_output=True,
        text=True,
        timeout=60,
    )
    ours = render_graph(_doc(tmp_path, workflow), {"city": "Seattle"}, fmt)  # type: ignore[arg-type]
    # The release predates head's HTML-entity escaping of Mermaid labels (spec R-WF-152, C-37).
    assert proc.stdout == (_release_mermaid(ours) if fmt == "mermaid" else ours) + "\n"
