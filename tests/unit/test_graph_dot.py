"""graph_to_dot: well-formed dot with one node per input, op and output, and one edge per
operand. The dot is checked by a small parser here (no graphviz dependency)."""

from __future__ import annotations

import re

from glow_mlir.analysis.graph_dot import graph_to_dot
from glow_mlir.conversion.pass_runner import run_pipeline
from test_schedule_graph import functions, parse

MODULE = """
func.func @net(%image: tensor<1x3x8x8xf32>, %k: tensor<10xf32>)
    -> (tensor<1x4x4x4xf32>, tensor<2xf32>, tensor<2xi64>) {
  %w = glow.constant dense_resource<conv_w> : tensor<4x3x3x3xf32>
  %bias = glow.constant dense<[0.5, 1.0, -1.0, 2.0]> : tensor<4xf32>
  %c = glow.convolution %image, %w, %bias
      {kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %r = glow.relu %c {glow.note = "say \\"hi\\""} : tensor<1x4x4x4xf32>
  %sq = glow.mul %k, %k : tensor<10xf32>
  %v, %i = glow.top_k %sq {k = 2 : i64} : (tensor<10xf32>) -> (tensor<2xf32>, tensor<2xi64>)
  func.return %r, %v, %i : tensor<1x4x4x4xf32>, tensor<2xf32>, tensor<2xi64>
}

func.func @second(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
{-#
  dialect_resources: {
    builtin: {
      conv_w: "0x04000000BLOB"
    }
  }
#-}
""".replace("BLOB", "00" * 4 * 4 * 3 * 3 * 3)  # 4-byte alignment, then the floats

_STRING = r'"(?:[^"\\]|\\.)*"'
_ATTRS = rf'\[(?:[^\]"]|{_STRING})*\]'
_STATEMENT = re.compile(
    rf'^\s*(?:(?P<src>\w+) -> (?P<dst>\w+)|(?P<node>\w+))\s*(?P<attrs>{_ATTRS})?;$')


def parse_dot(text: str):
    """(clusters, nodes {id: attrs text}, edges [(src, dst, attrs)]) of our dot subset;
    fails on anything else, on unbalanced braces and on edges to undeclared nodes."""
    lines = text.strip().splitlines()
    assert lines[0] == "digraph glow {" and lines[-1] == "}"
    depth, clusters, nodes, edges = 0, [], {}, []
    for line in lines:
        stripped = line.strip()
        if stripped.endswith("{"):
            depth += 1
            if stripped.startswith("subgraph "):
                clusters.append(stripped.split()[1])
            continue
        if stripped == "}":
            depth -= 1
            continue
        if re.fullmatch(rf"label={_STRING};", stripped) or stripped.startswith(("node [",
                                                                                 "edge [")):
            continue
        m = _STATEMENT.match(line)
        assert m, f"not a dot statement: {line!r}"
        if m["node"]:
            assert m["node"] not in nodes, f"node {m['node']} declared twice"
            nodes[m["node"]] = m["attrs"]
        else:
            edges.append((m["src"], m["dst"], m["attrs"] or ""))
    assert depth == 0
    for src, dst, _ in edges:
        assert src in nodes and dst in nodes, f"edge {src} -> {dst} to an undeclared node"
    return clusters, nodes, edges


def label(attrs: str) -> str:
    m = re.search(rf"label=({_STRING})", attrs)
    assert m
    return m[1][1:-1].replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")


def test_structure():
    module = parse(MODULE)
    clusters, nodes, edges = parse_dot(graph_to_dot(module))
    assert clusters == ["cluster_f0", "cluster_f1"]
    net, second = functions(module)
    n_ops = len(list(net.body.block.ops)) - 1
    assert len([n for n in nodes if n.startswith("f0_")]) == 2 + n_ops + 3
    operands = sum(len(op.operands) for op in net.body.block.ops)
    assert len([e for e in edges if e[0].startswith("f0_")]) == operands
    assert ("f1_in0", "f1_out0", "") in edges and len(nodes) == 2 + n_ops + 3 + 2


def test_labels_show_kinds_shapes_and_attributes():
    _, nodes, edges = parse_dot(graph_to_dot(parse(MODULE)))
    labels = {n: label(a) for n, a in nodes.items()}
    assert labels["f0_in0"] == "input %image\n1x3x8x8xf32"
    assert "shape=invhouse" in nodes["f0_in0"] and "shape=house" in nodes["f0_out0"]
    assert labels["f0_out2"] == "output #2\n2xi64"
    # constants: compact, the resource name or the few inline values
    assert labels["f0_op0"] == "constant conv_w\n4x3x3x3xf32"
    assert labels["f0_op1"] == "constant [0.5, 1, -1, 2]\n4xf32"
    assert "shape=note" in nodes["f0_op0"]
    conv = labels["f0_op2"].split("\n")
    assert conv[0] == "glow.convolution" and conv[-1] == "1x4x4x4xf32"
    assert "kernels=[3, 3]" in conv and "pads=[1, 1, 1, 1]" in conv
    assert labels["f0_op3"] == 'glow.relu\nglow.note=say "hi"\n1x4x4x4xf32'
    assert labels["f0_op5"] == "glow.top_k\nk=2\n2xf32, 2xi64"
    # operand edges, with the result index of a multi-result producer
    assert [(s, d) for s, d, _ in edges if d == "f0_op2"] == [
        ("f0_in0", "f0_op2"), ("f0_op0", "f0_op2"), ("f0_op1", "f0_op2")]
    assert [(s, d) for s, d, _ in edges if d == "f0_op4"] == [("f0_in1", "f0_op4")] * 2
    assert [label(a) for s, d, a in edges if s == "f0_op5"] == ["#0", "#1"]


def test_scheduled_graph_shows_its_peaks():
    module = run_pipeline(parse(MODULE), "schedule-graph")
    text = graph_to_dot(module)
    parse_dot(text)
    assert 'label="@net\\npeak live bytes ' in text


def test_control_flow_is_one_box_with_what_its_regions_use_dashed():
    module = parse("""
func.func @f(%c: tensor<i1>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = glow.if %c : tensor<i1> -> (tensor<4xf32>) {
    %a = glow.add %x, %y : tensor<4xf32>
    glow.yield %a : tensor<4xf32>
  } else {
    glow.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}""")
    text = graph_to_dot(module)
    assert "glow.add" not in text  # inside the box
    assert re.search(r"f0_in0 -> (\w+);\n\s+f0_in1 -> \1 \[style=dashed\];\n"
                     r"\s+f0_in2 -> \1 \[style=dashed\];", text), text
