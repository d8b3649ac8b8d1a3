"""`lower-to-instr` (IRGen): real models and random graphs lower to instruction IR that
verifies, frees every activation once, has the instructions the graph ops call for, and
computes what the graph computes.

The numbers are checked with `run_lowered` below: a deliberately naive executor (one numpy
array per buffer, views as numpy views, compute instructions by the graph evaluator's
kernel on their shadow op), so this test does not depend on the instruction interpreter
and its memory model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException

from glow_graphs import assert_outputs_close, clone_module, evaluate, glow_graphs
from glow_mlir import model_zoo
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects import glow, glow_ir
from glow_mlir.dialects.context import make_context
from glow_mlir.frontends.onnx import import_onnx
from glow_mlir.ir.element_types import numpy_dtype
from glow_mlir.ir.resources import resource_value
from glow_mlir.ir.text import parse_module, verify_module
from glow_mlir.runtime.compiled_model import optimize_graph
from glow_mlir.targets.interpreter import evaluate_module, evaluate_op

# ====================================================================== helpers


def _poisoned(t) -> np.ndarray:
    """A buffer of memref type `t` whose every byte is 0xFF (NaN for floats), so a value
    nobody wrote shows up in the outputs."""
    a = np.empty(tuple(t.get_shape()), numpy_dtype(t.get_element_type()))
    a.view(np.uint8).fill(0xFF)
    return a


def run_lowered(fn: glow_ir.FuncOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run a `glow_ir.func` straight out of lower-to-instr (see the module docstring)."""
    env: dict = {}
    it = iter(inputs)
    for w, arg in fn.weight_values():
        if w.role_name == "input":
            env[arg] = np.array(next(it), numpy_dtype(w.type.get_element_type()))
        elif w.value is not None:
            env[arg] = np.array(resource_value(w.value, w))
        else:
            env[arg] = _poisoned(w.type)
    for op in fn.body.ops:
        if isinstance(op, glow_ir.AllocActivationOp):
            env[op.result] = _poisoned(op.result.type)
        elif isinstance(op, glow_ir.DeallocActivationOp):
            env[op.buffer].view(np.uint8).fill(0xFF)
        elif isinstance(op, glow_ir.TensorViewOp):
            flat = env[op.source].reshape(-1)
            start, shape = op.element_offset, tuple(op.result.type.get_shape())
            view = flat[start:start + int(np.prod(shape))].reshape(shape)
            assert np.shares_memory(view, env[op.source]) or view.size == 0
            env[op.result] = view
        elif isinstance(op, glow_ir.CopyOp):
            env[op.operands[0]][...] = env[op.operands[1]]
        elif isinstance(op, glow_ir.ExtractTensorOp):
            dest, src = (env[v] for v in op.operands)
            dest[...] = src[tuple(slice(o, o + n) for o, n in zip(op.offsets(), dest.shape))]
        elif isinstance(op, glow_ir.InsertTensorOp):
            dest, src = (env[v] for v in op.operands)
            for k in range(op.count()):
                box = [slice(o, o + n) for o, n in zip(op.offsets(), src.shape)]
                if src.ndim:
                    a, n = op.axis(), src.shape[op.axis()]
                    box[a] = slice(box[a].start + k * n, box[a].stop + k * n)
                dest[tuple(box)] = src
        else:
            assert isinstance(op, glow_ir.GraphInstrOp), op.name
            results = evaluate_op(glow_ir.shadow_graph_op(op), [env[v] for v in op.sources()])
            for d, r in zip(op.dests(), results):
                env[d][...] = r
    return [env[arg] for _, arg in fn.placeholders("output")]


def _functions(module: ModuleOp) -> list[glow_ir.FuncOp]:
    return [op for op in module.ops if isinstance(op, glow_ir.FuncOp)]


def expected_instructions(fn: func.FuncOp) -> Counter:
    """The instruction kinds IRGen must emit for a graph function."""
    want: Counter = Counter()
    ops = list(fn.body.block.ops)
    ret = ops[-1]
    for op in ops[:-1]:
        if isinstance(op, glow.ConcatOp):
            want["glow_ir.insert_tensor"] += len(op.operands)
        elif isinstance(op, glow.InsertTensorOp):
            want["glow_ir.copy"] += 1
            want["glow_ir.insert_tensor"] += 1
        elif isinstance(op, glow.SliceOp):
            want["glow_ir.extract_tensor"] += 1
        elif op.name in glow_ir.INSTRUCTION_FOR:
            want[glow_ir.INSTRUCTION_FOR[op.name].name] += 1
        elif isinstance(op, glow.IfOp):  # its branches are its own programs
            want["glow_ir.if"] += 1
        elif isinstance(op, glow.LoopOp):  # and one copy of each initial value
            want["glow_ir.loop"] += 1
            want["glow_ir.copy"] += len(op.inits)
    written: set = set()
    for v in ret.operands:  # outputs an instruction cannot write directly are copies
        computed = isinstance(v.owner, Operation) and not isinstance(
            v.owner, (glow.ConstantOp, glow.ReshapeOp))
        if v in written or not computed:
            want["glow_ir.copy"] += 1
        written.add(v)
    return want


def check_lowering(module: ModuleOp) -> list[glow_ir.FuncOp]:
    """Lower `module` in place and check what every lowered program must satisfy."""
    graphs = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    want = {name: expected_instructions(f) for name, f in graphs.items()}
    graph_ops = {name: sum(1 for op in f.body.block.ops
                           if op.name not in glow_ir.NOT_INSTRUCTIONS and op.name != "func.return"
                           and not op.regions)
                 for name, f in graphs.items()}
    run_pipeline(module, "lower-to-instr,verify-instr")
    verify_module(module)
    lowered = _functions(module)
    assert [f.sym_name.data for f in lowered] == list(graphs)
    assert not any(isinstance(op, func.FuncOp) for op in module.walk())
    for fn in lowered:
        name = fn.sym_name.data
        ops = list(fn.body.ops)
        got = Counter(op.name for op in ops if isinstance(op, glow_ir.InstrOp))
        assert got == want[name]
        # one compute instruction per surviving graph op
        assert sum(isinstance(op, glow_ir.GraphInstrOp) for op in ops) == graph_ops[name]
        allocs = [op.result for op in ops if isinstance(op, glow_ir.AllocActivationOp)]
        deallocs = [op.buffer for op in ops if isinstance(op, glow_ir.DeallocActivationOp)]
        assert deallocs == allocs[::-1]
        tail = ops[len(ops) - len(deallocs):]
        assert all(isinstance(op, glow_ir.DeallocActivationOp) for op in tail)
        names = [w.sym_name.data for w in fn.weights]
        assert len(set(names)) == len(names)
    return lowered


# ====================================================================== models

MODELS = {
    "mlp": lambda: model_zoo.mlp(),
    "lenet": lambda: model_zoo.lenet(),
    "resnet18": lambda: model_zoo.resnet18(image=32, classes=10),
    "mobilenet_v1": lambda: model_zoo.mobilenet_v1(image=32, classes=10, width=0.25),
    "bert_layer": lambda: model_zoo.bert_layer(seq=8, hidden=32, heads=2, ffn=64),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_models_lower(name):
    module = optimize_graph(import_onnx(MODELS[name]()), "interpreter")
    graph = clone_module(module)
    (fn,) = check_lowering(module)
    # weights: inputs named as in ONNX, every surviving constant, outputs
    graph_fn = next(op for op in graph.ops if isinstance(op, func.FuncOp))
    roles = Counter(w.role_name or "constant" for w in fn.weights)
    assert roles["input"] == len(graph_fn.args)
    assert roles["output"] == len(graph_fn.function_type.outputs)
    onnx_name = graph_fn.arg_attrs.data[0].data["glow.name"].data  # type: ignore[union-attr]
    assert fn.weights[0].sym_name.data == onnx_name
    # the text form reads back (weights keep their blobs)
    reread = clone_module(module)
    verify_module(reread)
    assert len(list(reread.walk())) == len(list(module.walk()))
    # the same numbers as the graph
    rng = np.random.default_rng(0)
    inputs = []
    for a in graph_fn.args:  # floats in [-1, 1]; an integer input (BERT's mask) of ones
        dtype = numpy_dtype(a.type.get_element_type())
        shape = tuple(a.type.get_shape())
        inputs.append(rng.uniform(-1, 1, shape).astype(dtype) if dtype.kind == "f"
                      else np.ones(shape, dtype))
    expected = evaluate_module(graph, inputs)
    for e, g in zip(expected, run_lowered(_functions(reread)[0], inputs)):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


# ====================================================================== every op kind


def test_every_graph_op_has_a_lowering():
    """Every glow op either has an instruction or is one IRGen handles itself."""
    handled = {"glow.constant", "glow.reshape", "glow.slice", "glow.insert_tensor",
               "glow.concat"}
    assert glow_ir.NOT_INSTRUCTIONS == handled
    for op in glow.ALL_OPS:
        assert op.name in handled or op.name in glow_ir.INSTRUCTION_FOR, op.name


def test_every_op_of_the_dialect_roundtrip_file_lowers():
    """The glow roundtrip test holds every op kind with its optional attributes."""
    path = Path(__file__).parents[1] / "filecheck" / "dialects" / "glow" / "roundtrip.mlir"
    module = parse_module(make_context(), path.read_text(), str(path))
    lowered = check_lowering(module)
    seen = {op.name for fn in lowered for op in fn.body.ops}
    assert {i.name for i in glow_ir.COMPUTE_INSTRUCTIONS} <= seen


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(glow_graphs(max_ops=10, max_outputs=3))
def test_random_graphs_lower_and_compute_the_same(g):
    module = clone_module(g)
    before = evaluate(g)
    (fn,) = check_lowering(module)
    assert_outputs_close(g, before, run_lowered(fn, g.inputs), what="after lower-to-instr")


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(glow_graphs(families=["data", "arg", "convert"], max_ops=8, max_outputs=3,
                   topology="dag"))
def test_random_data_movement_graphs(g):
    """Views, slices, inserts and concats (the ops IRGen lowers by hand), in DAGs."""
    module = clone_module(g)
    before = evaluate(g)
    (fn,) = check_lowering(module)
    assert_outputs_close(g, before, run_lowered(fn, g.inputs), what="after lower-to-instr")


# ====================================================================== edge cases


def _lower_text(text: str) -> ModuleOp:
    module = parse_module(make_context(), text)
    verify_module(module)
    check_lowering(module)
    return module


def test_returned_values_copy_or_write_directly():
    module = _lower_text("""
    func.func @f(%x: tensor<4xf32>)
        -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>) {
      %0 = glow.relu %x : tensor<4xf32>
      %1 = glow.reshape %0 : tensor<4xf32> -> tensor<2x2xf32>
      func.return %0, %x, %0, %1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>
    }""")
    (fn,) = _functions(module)
    x, o0, o1, o2, o3 = fn.body.args
    relu, view, c1, c2, c3 = fn.body.ops
    assert relu.operands[0] is o0  # written directly
    assert isinstance(view, glow_ir.TensorViewOp) and view.source is o0
    assert [c.operands[0] for c in (c1, c2, c3)] == [o1, o2, o3]
    assert [c.operands[1] for c in (c1, c2, c3)] == [x, o0, view.result]
    x_in = np.array([-1, 2, -3, 4], np.float32)
    outs = run_lowered(fn, [x_in])
    relu_x = np.maximum(x_in, 0)
    for got, want in zip(outs, [relu_x, x_in, relu_x, relu_x.reshape(2, 2)]):
        np.testing.assert_array_equal(got, want)


def test_weight_names_are_unique():
    module = _lower_text("""
    func.func @f(%a: tensor<2xf32> {glow.name = "w"}, %b: tensor<2xf32> {glow.name = "w"})
        -> (tensor<2xf32> {glow.name = "w"}) {
      %w = glow.constant dense<[1.0, 2.0]> : tensor<2xf32>
      %0 = glow.add %a, %b : tensor<2xf32>
      %1 = glow.add %0, %w : tensor<2xf32>
      func.return %1 : tensor<2xf32>
    }""")
    (fn,) = _functions(module)
    assert [w.sym_name.data for w in fn.weights] == ["w", "w_1", "w_2", "w_3"]
    assert fn.weights[2].value is not None
    np.testing.assert_array_equal(resource_value(fn.weights[2].value, fn), [1.0, 2.0])


def test_two_constants_with_one_handle_are_one_weight():
    module = _lower_text("""
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %a = glow.constant dense_resource<k> : tensor<2xf32>
      %b = glow.constant dense_resource<k> : tensor<2xf32>
      %0 = glow.add %x, %a : tensor<2xf32>
      %1 = glow.mul %0, %b : tensor<2xf32>
      func.return %1 : tensor<2xf32>
    }
    {-#
      dialect_resources: { builtin: { k: "0x040000000000803F00000040" } }
    #-}""")
    (fn,) = _functions(module)
    assert [w.sym_name.data for w in fn.weights] == ["input0", "k", "output0"]
    np.testing.assert_array_equal(run_lowered(fn, [np.ones(2, np.float32)])[0], [2.0, 6.0])


def test_op_without_instruction_is_a_clear_error():
    text = """
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %c = arith.constant dense<1.0> : tensor<2xf32>
      %0 = glow.add %x, %c : tensor<2xf32>
      func.return %0 : tensor<2xf32>
    }"""
    module = parse_module(make_context(), text, "g.mlir")
    with pytest.raises(PassFailedException, match=r"g.mlir:3:\d+: error: 'arith.constant' op "
                                                  r"has no instruction"):
        run_pipeline(module, "lower-to-instr")
    # nothing was replaced
    assert isinstance(next(iter(module.ops)), func.FuncOp)


def test_locations_are_kept():
    module = parse_module(make_context(), """
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = glow.relu %x : tensor<2xf32>
      %1 = glow.neg %0 : tensor<2xf32>
      func.return %1 : tensor<2xf32>
    }""", "loc.mlir")
    run_pipeline(module, "lower-to-instr")
    (fn,) = _functions(module)
    from glow_mlir.ir.text import location_text

    locs = {op.name: location_text(op) for op in fn.body.ops}
    assert locs["glow_ir.relu"].startswith("loc.mlir:3:")
    assert locs["glow_ir.element_neg"].startswith("loc.mlir:4:")
