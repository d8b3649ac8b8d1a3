"""The cpu backend end to end: ONNX/glow graphs -> native code (our convert-*-to-llvm,
llvmlite MCJIT) give the reference interpreter's numbers; concurrent calls from threads;
one error naming every instruction kind without a code generator; glow-compile --emit
llvm / llvm-ir (the llvm dialect checked by upstream mlir-translate-22 when installed)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

import glow_mlir
from cpu_upstream import assert_mlir_translate_accepts
from glow_mlir.dialects.context import make_context
from glow_mlir.ir.errors import UserError
from glow_mlir.ir.text import parse_module
from onnx_testing import make_model, rand

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "small_cnn.onnx"

ADD_RELU = """
func.func @add_relu(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = glow.add %x, %y : tensor<4x8xf32>
  %r = glow.relu %a : tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
"""


def both(model, **kw):
    """The model (glow text, an ONNX path or ModelProto) for the interpreter and the cpu."""
    if isinstance(model, str) and "func.func" in model:
        return (glow_mlir.compile(parse_module(make_context(), model), "interpreter", **kw),
                glow_mlir.compile(parse_module(make_context(), model), "cpu", **kw))
    return glow_mlir.compile(model, "interpreter", **kw), glow_mlir.compile(model, "cpu", **kw)


def assert_same_outputs(ref, cpu, inputs, rtol=1e-5, atol=1e-6):
    want, got = ref(*inputs), cpu(*inputs)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def test_add_relu_matches_the_interpreter():
    ref, cpu = both(ADD_RELU)
    x, y = rand(4, 8, seed=1), rand(4, 8, seed=2)
    assert_same_outputs(ref, cpu, [x, y], rtol=0, atol=0)
    assert cpu.memory.mutable_bytes == ref.memory.mutable_bytes


def test_conv_relu_example_matches_the_interpreter():
    ref, cpu = both((ROOT / "examples" / "conv_relu.mlir").read_text())
    assert_same_outputs(ref, cpu, [rand(1, 3, 8, 8, seed=3)])


def test_small_cnn_matches_the_interpreter():
    ref, cpu = both(str(EXAMPLE))
    assert_same_outputs(ref, cpu, [rand(1, 3, 32, 32, seed=4)], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", ["Tanh", "Sigmoid", "Exp", "Erf", "Sqrt", "Floor", "Softmax"])
def test_math_through_intrinsics_and_libm(op):
    """exp/sqrt/floor are LLVM intrinsics, tanh/erf calls to libm resolved by the JIT."""
    x = np.abs(rand(3, 5, seed=5)) if op == "Sqrt" else rand(3, 5, seed=5)
    model = make_model([helper.make_node(op, ["x"], ["y"])], {"x": x}, ["y"])
    ref, cpu = both(model)
    assert_same_outputs(ref, cpu, [x], rtol=2e-6, atol=1e-6)


def test_gemm_and_max_pool_match_the_interpreter():
    x, w, b = rand(2, 1, 6, 6, seed=6), rand(4, 9, seed=7), rand(4, seed=8)
    nodes = [helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "w", "b"], ["y"], transB=1)]
    model = make_model(nodes, {"x": x}, ["y"], initializers={"w": w, "b": b})
    ref, cpu = both(model)
    assert_same_outputs(ref, cpu, [x], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("to", [TensorProto.INT32, TensorProto.UINT8, TensorProto.INT8])
def test_float_to_int_casts(to):
    """fptosi/fptoui (saturating intrinsics) and uitofp (zext + sitofp) on the way back."""
    x = (rand(4, 6, seed=9) * 40).astype(np.float32)
    if to == TensorProto.UINT8:
        x = np.abs(x)
    nodes = [helper.make_node("Cast", ["x"], ["i"], to=to),
             helper.make_node("Cast", ["i"], ["y"], to=TensorProto.FLOAT)]
    model = make_model(nodes, {"x": x}, ["i", "y"])
    ref, cpu = both(model)
    assert_same_outputs(ref, cpu, [x], rtol=0, atol=0)


def test_concurrent_calls_from_threads_are_independent():
    _, cpu = both(ADD_RELU)
    inputs = [(rand(4, 8, seed=10 + i), rand(4, 8, seed=20 + i)) for i in range(4)]
    want = [np.maximum(x + y, 0) for x, y in inputs]
    results: dict[int, list] = {}

    def work(i):
        results[i] = [cpu(*inputs[i])[0] for _ in range(200)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(4):
        assert len(results[i]) == 200
        for got in results[i]:
            np.testing.assert_array_equal(got, want[i])


def test_calls_reuse_their_areas():
    """A call runs on the areas of the one before (no fresh pages to fault in), the
    mutable area zeroed and refilled: each call gives its own inputs' outputs."""
    _, cpu = both(ADD_RELU)
    program = cpu._executor
    made = []
    new_activations = program.areas.new_activations
    program.areas.new_activations = lambda: made.append(1) or new_activations()
    for i in range(3):
        x, y = rand(4, 8, seed=30 + i), rand(4, 8, seed=40 + i)
        np.testing.assert_array_equal(cpu(x, y)[0], np.maximum(x + y, 0))
    assert len(made) == 1


@pytest.mark.parametrize("bound", [True, False])
def test_a_used_mutable_area_is_refilled_as_a_new_one(monkeypatch, bound):
    """The next call's mutable area is byte for byte what `new_mutable` makes (outputs
    and padding zeroed, inputs in) whether the areas carry their views (`BoundAreas`) or
    not, with either zeroing (`area_plan.ZERO_ALL_ON_REFILL`), and the switches may flip
    between calls."""
    from glow_mlir.targets.cpu import area_plan, native_program

    _, cpu = both(ADD_RELU)
    program, plan = cpu._executor, cpu._executor.areas
    monkeypatch.setattr(native_program, "BOUND_AREAS", bound)
    for i, zero_all in enumerate([False, True, False]):
        monkeypatch.setattr(area_plan, "ZERO_ALL_ON_REFILL", zero_all)
        x, y = rand(4, 8, seed=50 + i), rand(4, 8, seed=60 + i)
        np.testing.assert_array_equal(cpu(x, y)[0], np.maximum(x + y, 0))
        monkeypatch.setattr(native_program, "BOUND_AREAS", not native_program.BOUND_AREAS)
    spare = program._spare[-1]
    mutable = spare.mutable if isinstance(spare, native_program.BoundAreas) else spare[0]
    assert mutable[plan.output_slots[0].offset:].any()  # the last call's output
    # an input of another shape with the same elements: reshaped, as fill_inputs does
    x, y = rand(32, seed=70), rand(4, 8, seed=71)
    if bound:
        refilled = program._take_bound([x, y]).mutable
    else:
        refilled = program._take_areas([x, y])[0]
    np.testing.assert_array_equal(refilled, plan.new_mutable([x, y]))


def test_uncovered_bytes_of_a_mutable_area():
    """The ranges `refill` zeroes: the mutable area less its input slots."""
    from glow_mlir.targets.cpu.area_plan import AreaPlan, Slot

    f32 = np.dtype(np.float32)
    slots = [Slot(f32, (4,), 64, 16), Slot(f32, (2,), 0, 8)]
    plan = AreaPlan(np.zeros(1, np.uint8), 1, 128, 0, 64, slots, [Slot(f32, (4,), 80, 16)])
    assert plan.uncovered() == [(8, 64), (80, 128)]
    flush = AreaPlan(np.zeros(1, np.uint8), 1, 80, 0, 64, slots, [])
    assert flush.uncovered() == [(8, 64)]


def test_missing_code_generators_are_one_user_error(monkeypatch):
    """Every missing instruction kind is named at once, as a UserError (no traceback)."""
    from glow_mlir.conversion import glow_ir_to_loops as loops
    from glow_mlir.dialects import glow_ir

    loops._load_generators()
    for kind in (glow_ir.INSTRUCTION_FOR["glow.relu"], glow_ir.INSTRUCTION_FOR["glow.add"]):
        monkeypatch.delitem(loops.GENERATORS, kind)
    with pytest.raises(UserError) as info:
        glow_mlir.compile(parse_module(make_context(), ADD_RELU), "cpu")
    message = str(info.value)
    assert "cpu backend" in message
    assert "glow_ir.element_add (1)" in message and "glow_ir.relu (1)" in message
    # each at its instruction, which IRGen located at the graph op's line
    from glow_mlir.targets.cpu.executor import CpuBackendError

    assert isinstance(info.value, CpuBackendError)
    assert [(d.op.name, d.line) for d in info.value.diagnostics] == [
        ("glow_ir.element_add", 3), ("glow_ir.relu", 4)]
    assert message.splitlines()[1:] == [
        "<stdin>:3:8: error: 'glow_ir.element_add' op has no loop generator",
        "<stdin>:4:8: error: 'glow_ir.relu' op has no loop generator"]


def test_missing_code_generators_of_an_onnx_model_name_its_nodes(monkeypatch):
    """An ONNX model's ops have no file location: each error names the node."""
    from glow_mlir.conversion import glow_ir_to_loops as loops
    from glow_mlir.dialects import glow, glow_ir

    loops._load_generators()
    monkeypatch.delitem(loops.GENERATORS, glow_ir.instruction_of(glow.ReluOp))
    model = make_model([helper.make_node("Relu", ["x"], ["h"], name="first"),
                        helper.make_node("Neg", ["h"], ["n"], name="neg"),
                        helper.make_node("Relu", ["n"], ["y"], name="second")],
                       {"x": rand(4)}, ["y"])
    with pytest.raises(UserError) as info:
        glow_mlir.compile(model, "cpu", cache=False)
    assert str(info.value).splitlines() == [
        "the cpu backend cannot compile this model yet: no code generator for the "
        "instruction kinds glow_ir.relu (2)",
        "error: 'glow_ir.relu' op has no loop generator (at node 'first')",
        "error: 'glow_ir.relu' op has no loop generator (at node 'second')"]


# ------------------------------------------------------------------ glow-compile --emit

def _compile(capsys, *args):
    from glow_mlir.tools import glow_compile

    with pytest.raises(SystemExit) as info:
        glow_compile.main([str(a) for a in args])
        raise SystemExit(0)
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return info.value.code, out, err


def test_emit_llvm_ir_is_vectorized_native_code(capsys):
    code, out, err = _compile(capsys, EXAMPLE, "--emit", "llvm-ir")
    assert code == 0, err
    assert "define" in out and "@main(ptr noalias" in out
    assert "x float>" in out  # the loop vectorizer ran
    assert "inttoptr" not in out and "ptrtoint" not in out


def test_emit_llvm_is_accepted_by_mlir_translate(capsys, tmp_path):
    out_file = tmp_path / "cnn.llvm.mlir"
    code, _, err = _compile(capsys, EXAMPLE, "--emit", "llvm", "-o", out_file)
    assert code == 0, err
    text = out_file.read_text()
    assert "llvm.func @main(" in text and "{llvm.noalias}" in text
    assert "memref" not in text and "index" not in text
    assert_mlir_translate_accepts(out_file)
