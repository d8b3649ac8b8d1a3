"""Binding a node test's shape-like inputs as constants, as a real model holds them.

A node test makes every input of its node a graph input, including those that fix the
output's shape, an axis or a mode (Reshape's `shape`, Slice's `starts`, ReduceSum's `axes`,
TopK's `K`, ...). Most of these were attributes in earlier opsets; exporters emit them as
initializers, Constant nodes or shape computations the importer folds. glow-mlir, like
Glow, compiles statically shaped graphs, so it needs them at compile time. This module
turns exactly these inputs into initializers holding the case's values, as
onnx-mlir's backend tests do for static compilers (their "constant input" mode), and then
checks the op's numbers as usual. Inputs that carry data (NonZero's input, If's condition,
Loop's trip count, Clip's bounds, Pad's constant value) stay graph inputs: folding those
would test the importer's constant folding instead of the op.

The suite no longer binds them by default: the ONNX backend compiles at the first call,
specialized on those inputs' values (`glow_mlir/runtime/specialized.py`), so the cases run
as they come. `python -m tests.onnx.conformance --constant-inputs` binds them as before.
"""

from __future__ import annotations

import onnx
from onnx import GraphProto, ModelProto, numpy_helper

SHAPE_INPUTS: dict[str, frozenset[str]] = {
    op: frozenset(names.split()) for op, names in {
        "Reshape": "shape",
        "Expand": "shape",
        "Tile": "repeats",
        "ConstantOfShape": "input",
        "Range": "start limit delta",
        "Slice": "starts ends axes steps",
        "Squeeze": "axes",
        "Unsqueeze": "axes",
        "Split": "split",
        "Pad": "pads axes",
        "Resize": "scales sizes",
        "Upsample": "scales",
        "TopK": "K",
        "CumSum": "axis",
        "Dropout": "training_mode",
        "ReduceL1": "axes",
        "ReduceL2": "axes",
        "ReduceLogSum": "axes",
        "ReduceLogSumExp": "axes",
        "ReduceMax": "axes",
        "ReduceMean": "axes",
        "ReduceMin": "axes",
        "ReduceProd": "axes",
        "ReduceSum": "axes",
        "ReduceSumSquare": "axes",
    }.items()
}
"""Op type -> the inputs (by their schema names) that fix a shape, an axis or a mode."""


def _opset(model: ModelProto) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
                onnx.defs.onnx_opset_version())


def _schema_input_names(op_type: str, opset: int) -> list[str]:
    try:
        schema = onnx.defs.get_schema(op_type, opset, "")
    except onnx.defs.SchemaError:
        return []
    return [i.name for i in schema.inputs]


def _uses(graph: GraphProto, opset: int, found: dict[str, list[bool]]) -> None:
    """For every value name, whether each use is at a shape-like slot (subgraphs too)."""
    for node in graph.node:
        shape_like = SHAPE_INPUTS.get(node.op_type, frozenset()) \
            if node.domain in ("", "ai.onnx") else frozenset()
        names = _schema_input_names(node.op_type, opset) if shape_like else []
        for i, value in enumerate(node.input):
            if value:
                found.setdefault(value, []).append(i < len(names) and names[i] in shape_like)
        for attr in node.attribute:
            for sub in [attr.g] if attr.HasField("g") else list(attr.graphs):
                _uses(sub, opset, found)


def shape_input_names(model: ModelProto) -> list[str]:
    """The graph inputs used only at shape-like slots, in graph input order."""
    uses: dict[str, list[bool]] = {}
    _uses(model.graph, _opset(model), uses)
    initializers = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input
            if i.name not in initializers and uses.get(i.name) and all(uses[i.name])]


def bind_shape_inputs(model: ModelProto, inputs: list) -> tuple[ModelProto, list, list[str]]:
    """A copy of `model` whose shape-like graph inputs are initializers holding their values
    from `inputs` (positional, in graph input order), the remaining inputs, and the names
    bound."""
    names = [i.name for i in model.graph.input]
    bound = [n for n in shape_input_names(model)
             if names.index(n) < len(inputs) and hasattr(inputs[names.index(n)], "dtype")]
    if not bound:
        return model, inputs, []
    bound_model = ModelProto()
    bound_model.CopyFrom(model)
    graph = bound_model.graph
    values = dict(zip(names, inputs))
    kept = [info for info in graph.input if info.name not in bound]
    del graph.input[:]
    graph.input.extend(kept)
    graph.initializer.extend(numpy_helper.from_array(values[n], n) for n in bound)
    return bound_model, [values[info.name] for info in kept], bound
