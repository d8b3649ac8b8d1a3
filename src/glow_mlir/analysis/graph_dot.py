"""The `glow` graph as Graphviz dot (Glow's dumpDAG): `glow-compile --dump-graph-dag`.

One cluster per function. Inputs are blue `invhouse` nodes, outputs green `house` nodes,
constants small grey `note` nodes (their resource name or a few values, never the bytes),
and every op a box with its kind, its attributes and its result types (a `glow.if` or
`glow.loop` is one box; what its regions use from outside comes in dashed). An edge goes from
the producer of each operand to its user (one per operand, so `add %a, %a` has two),
labelled `#i` when the producer has several results.

Output is plain text, so no graphviz package is needed to write it.
"""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, OpResult, SSAValue

from glow_mlir.analysis.graph_memory import is_weight

MAX_ATTR_CHARS = 40
"""Attribute values longer than this are cut (a label should stay readable)."""

_INPUT = 'shape=invhouse, style=filled, fillcolor="#cfe2ff"'
_OUTPUT = 'shape=house, style=filled, fillcolor="#d1e7dd"'
_CONSTANT = 'shape=note, style=filled, fillcolor="#eeeeee", fontsize=9'
_OP = 'shape=box, style="rounded,filled", fillcolor="#ffffff"'


def _quote(text: str) -> str:
    """A dot double-quoted string; lines separated by `\\n` (dot's centred line break)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "\\n".join(escaped.split("\n")) + '"'


def _cut(text: str) -> str:
    return text if len(text) <= MAX_ATTR_CHARS else text[: MAX_ATTR_CHARS - 3] + "..."


def type_text(type_: Attribute) -> str:
    """`1x3x224x224xf32` for a tensor type (its element type alone for a scalar tensor)."""
    if isinstance(type_, TensorType):
        return "x".join([*(str(d) for d in type_.get_shape()), str(type_.get_element_type())])
    return str(type_)


def attr_text(attr: Attribute) -> str:
    """A short, readable value: `[3, 3]`, `1`, `0.5`, `true`, `NCHW`."""
    if isinstance(attr, DenseArrayBase):
        return _cut("[" + ", ".join(f"{v:g}" if isinstance(v, float) else str(v)
                                    for v in attr.get_values()) + "]")
    if isinstance(attr, IntegerAttr):
        if attr.type.width.data == 1:  # type: ignore[union-attr]
            return "true" if attr.value.data else "false"
        return str(attr.value.data)
    if isinstance(attr, FloatAttr):
        return f"{attr.value.data:g}"
    if isinstance(attr, StringAttr):
        return _cut(attr.data)
    return _cut(str(attr))


def constant_text(op: Operation) -> str:
    """What a constant holds, compactly: its resource handle, or its (few) inline values."""
    value = op.attributes.get("value")
    if isinstance(value, DenseResourceAttr):
        return value.resource_handle.data
    if isinstance(value, DenseIntOrFPElementsAttr):
        values = value.get_values()
        if len(values) == 1 or len(set(values)) == 1:
            return f"splat {values[0]:g}" if values else "[]"
        return _cut("[" + ", ".join(f"{v:g}" for v in values) + "]")
    return op.name


def _node(node_id: str, style: str, label: str) -> str:
    return f"    {node_id} [{style}, label={_quote(label)}];"


def _op_label(op: Operation) -> str:
    results = ", ".join(type_text(r.type) for r in op.results)
    if is_weight(op):
        return f"constant {constant_text(op)}\n{results}"
    attrs = [f"{k}={attr_text(v)}" for k, v in op.attributes.items()]
    return "\n".join([op.name, *attrs, results])


def _title(fn: func.FuncOp) -> str:
    """`@name`, and the peaks `schedule-graph` recorded, if it ran."""
    before = fn.attributes.get("glow.peak_live_bytes_before")
    after = fn.attributes.get("glow.peak_live_bytes_after")
    if isinstance(before, IntegerAttr) and isinstance(after, IntegerAttr):
        return f"@{fn.sym_name.data}\npeak live bytes {before.value.data} -> {after.value.data}"
    return f"@{fn.sym_name.data}"


PART_COLOURS = ("#ffd6a5", "#caffbf", "#9bf6ff", "#bdb2ff", "#ffadad", "#fdffb6", "#a0c4ff",
                "#ffc6ff")
"""Fill colours of the device partitioner's parts (`part_of`), repeating after eight."""


def _part_style(part: int) -> str:
    colour = PART_COLOURS[part % len(PART_COLOURS)]
    return f'shape=box, style="rounded,filled", fillcolor="{colour}"'


def _function_dot(fn: func.FuncOp, prefix: str,
                  part_of: Mapping[Operation, int] | None = None) -> list[str]:
    lines = [f"  subgraph cluster_{prefix} {{", f"    label={_quote(_title(fn))};"]
    edges: list[str] = []
    ids: dict[Operation | SSAValue, str] = {}

    def edge(value: SSAValue, dst: str, dashed: bool = False) -> None:
        """From the node that defines `value` (`#i`: which result of a multi-result op);
        dashed: a use inside the regions of `dst`'s op."""
        attrs = ["style=dashed"] if dashed else []
        if isinstance(value, OpResult) and value.op in ids:
            if len(value.op.results) > 1:
                attrs.append(f"label={_quote(f'#{value.index}')}")
            src = ids[value.op]
        else:
            src = ids.get(value, prefix + "_unknown")
        edges.append(f"    {src} -> {dst}{' [' + ', '.join(attrs) + ']' if attrs else ''};")

    block = fn.body.block
    for i, arg in enumerate(block.args):
        ids[arg] = f"{prefix}_in{i}"
        name = f"%{arg.name_hint}" if arg.name_hint else f"#{i}"
        lines.append(_node(ids[arg], _INPUT, f"input {name}\n{type_text(arg.type)}"))
    for k, op in enumerate(block.ops):
        if isinstance(op, func.ReturnOp):
            for j, value in enumerate(op.operands):
                out = f"{prefix}_out{j}"
                lines.append(_node(out, _OUTPUT, f"output #{j}\n{type_text(value.type)}"))
                edge(value, out)
            continue
        ids[op] = f"{prefix}_op{k}"
        part = part_of.get(op) if part_of is not None else None
        style = _CONSTANT if is_weight(op) else _OP if part is None else _part_style(part)
        label = _op_label(op) if part is None else f"{_op_label(op)}\npart {part}"
        lines.append(_node(ids[op], style, label))
        for value in op.operands:
            edge(value, ids[op])
        for value in _used_inside(op):  # what a glow.if's or glow.loop's regions use
            edge(value, ids[op], dashed=True)
    return [*lines, *edges, "  }"]


def _used_inside(op: Operation) -> list[SSAValue]:
    """The values `op`'s regions use that are defined outside it, in first-use order."""
    seen: dict[SSAValue, None] = {}
    for inner in op.walk():
        for value in inner.operands if inner is not op else ():
            owner = value.owner
            where = owner if isinstance(owner, Operation) else owner.parent_op()
            if where is None or not op.is_ancestor(where):
                seen.setdefault(value, None)
    return list(seen)


def graph_to_dot(module: ModuleOp, part_of: Mapping[Operation, int] | None = None) -> str:
    """Graphviz dot text of every function of `module` (render: `dot -Tsvg FILE.dot`);
    with `part_of` (op -> part, from the device partitioner), each op is filled with its
    part's colour and labelled with its part."""
    lines = ["digraph glow {", '  node [fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=8];']
    fns = [op for op in module.walk() if isinstance(op, func.FuncOp) and op.body.blocks]
    for i, fn in enumerate(fns):
        lines += _function_dot(fn, f"f{i}", part_of)
    lines.append("}")
    return "\n".join(lines) + "\n"


__all__ = ["PART_COLOURS", "graph_to_dot", "type_text", "attr_text", "constant_text"]
