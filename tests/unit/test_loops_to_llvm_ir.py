"""The one-walk translation of the loop IR to LLVM IR (conversion/loops_to_llvm_ir/),
which the JIT, bundles and the accelerator's native path compile: its text on a small
function (bare pointers, `noalias`, inbounds GEPs with nsw index math, kernel calls,
linkage), models compiled through it and through the reference LLVM-dialect route giving
the same LLVM IR and bit-identical outputs, the fallback to that route for a function it
cannot translate, and the loop-IR verification switch. (Every kernel the cpu kernel
tests build is compared too: cpu_upstream.upstream_runner.)"""

from __future__ import annotations

import re
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
import pytest
from xdsl.utils.exceptions import PassFailedException, VerifyException

import glow_mlir
from glow_graphs import clone_module
from glow_mlir import model_zoo
from glow_mlir.conversion.loops_to_llvm import lower_loops_to_llvm, prepare_loops
from glow_mlir.conversion.loops_to_llvm_ir import Untranslatable, split_texts, translate_function
from glow_mlir.dialects.context import make_context
from glow_mlir.ir.text import VERIFY_EACH_STEP_ENV, parse_module
from glow_mlir.targets.cpu import jit
from llvm_ir_check import assert_same_llvm_ir
from onnx_testing import model_feeds

REPO = Path(__file__).resolve().parents[2]
TRIPLE = "x86_64-unknown-linux-gnu"

DOUBLE = """
func.func private @k(%a: memref<4x8xf32> {llvm.noalias}, %b: memref<4x8xf32> {llvm.noalias})
    attributes {glow.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %x = memref.load %a[%i, %j] : memref<4x8xf32>
      %y = arith.addf %x, %x fastmath<reassoc,contract> : f32
      memref.store %y, %b[%i, %j] : memref<4x8xf32>
    }
  }
  %first = memref.load %a[%c2, %c1] : memref<4x8xf32>
  memref.store %first, %b[%c0, %c0] : memref<4x8xf32>
  func.return
}
func.func @main(%cw: memref<1xi8> {llvm.noalias}, %mw: memref<256xi8> {llvm.noalias},
                %act: memref<1xi8> {llvm.noalias}) -> i32 attributes {glow.activations_size = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %in = memref.view %mw[%c0][] : memref<256xi8> to memref<4x8xf32>
  %out = memref.view %mw[%c128][] : memref<256xi8> to memref<4x8xf32>
  func.call @k(%in, %out) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
  %z = arith.constant 0 : i32
  func.return %z : i32
}
"""


def _module(text: str):
    return parse_module(make_context(), text)


def _run(entry, mutable: np.ndarray) -> None:
    one = np.zeros(64, np.uint8)
    assert entry(one.ctypes.data, mutable.ctypes.data, one.ctypes.data) == 0


def test_text_of_a_kernel_and_its_call():
    entry, (kernel,) = split_texts(_module(DOUBLE), "main", TRIPLE)
    # The kernel: bare noalias pointers, external (its own module, linked by name), the
    # row-major index with nsw and an inbounds GEP of the element type; a constant index
    # folded into one offset (2 * 8 + 1); the arith fast-math flags.
    assert "define void @k(ptr noalias %v1, ptr noalias %v2) {" in kernel
    assert re.search(r"(%v\d+) = mul nsw i64 %v\d+, 8\n  (%v\d+) = add nsw i64 \1, %v\d+\n"
                     r"  %v\d+ = getelementptr inbounds float, ptr %v1, i64 \2\n", kernel)
    assert re.search(r"fadd contract reassoc float (%v\d+), \1\n", kernel)
    assert "getelementptr inbounds float, ptr %v1, i64 17\n" in kernel
    assert re.search(r"phi i64 \[0, %b\d+\], \[%v\d+, %b\d+\]", kernel)
    assert re.search(r"icmp slt i64 %v\d+, 4\n", kernel)
    # The entry point: the kernel declared (no definition), byte views as i8 GEPs.
    assert "declare void @k(ptr, ptr)" in entry and "define void @k" not in entry
    assert "define i32 @main(ptr noalias %v1, ptr noalias %v2, ptr noalias %v3)" in entry
    assert "getelementptr inbounds i8, ptr %v2, i64 128" in entry
    assert re.search(r"call ccc void @k\(ptr %v\d+, ptr %v\d+\)", entry)
    assert "ret i32 0" in entry
    for text in (entry, kernel):
        llvm.parse_assembly(text).verify()


def test_one_module_keeps_the_kernel_internal_and_noinline():
    text = jit.unoptimized_ir(_module(DOUBLE))
    assert "define internal void @k(ptr noalias %v1, ptr noalias %v2) noinline {" in text
    assert "define i32 @main(" in text and "declare" not in text
    llvm.parse_assembly(text).verify()


def test_the_translation_runs_and_equals_the_dialect_route():
    module = _module(DOUBLE)
    assert_same_llvm_ir(module, "main")
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    mutable = np.zeros(256, np.uint8)
    mutable[:128] = x.reshape(-1).view(np.uint8)
    _run(jit.jit(module, "main"), mutable)
    want = 2 * x
    want[0, 0] = x[2, 1]
    np.testing.assert_array_equal(mutable[128:].view(np.float32).reshape(4, 8), want)


# ---------------------------------------------------------------------- fallback

VECTOR = """
func.func @main(%cw: memref<1xi8> {llvm.noalias}, %mw: memref<16xi8> {llvm.noalias},
                %act: memref<1xi8> {llvm.noalias}) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = memref.view %mw[%c0][] : memref<16xi8> to memref<2xvector<2xf32>>
  %x = memref.load %v[%c0] : memref<2xvector<2xf32>>
  %y = arith.addf %x, %x : vector<2xf32>
  memref.store %y, %v[%c1] : memref<2xvector<2xf32>>
  %z = arith.constant 0 : i32
  func.return %z : i32
}
"""


def test_a_function_the_walk_cannot_translate_goes_the_dialect_route():
    """Vectors: the dialect route lowers them, the walk does not; the function is the
    dialect route's (the same text), and runs."""
    module = _module(VECTOR)
    with pytest.raises(Untranslatable, match="vector"):
        translate_function(next(iter(module.ops)), {})
    assert_same_llvm_ir(module, "main")
    mutable = np.zeros(16, np.uint8)
    mutable[:8] = np.array([1.5, -3.0], np.float32).view(np.uint8)
    _run(jit.jit(module, "main"), mutable)
    np.testing.assert_array_equal(mutable[8:].view(np.float32), [3.0, -6.0])


def test_an_op_neither_route_lowers_is_the_dialect_routes_located_error():
    module = _module("""
func.func @main(%cw: memref<1xi8> {llvm.noalias}, %mw: memref<8xi8> {llvm.noalias},
                %act: memref<1xi8> {llvm.noalias}) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = memref.view %mw[%c0][] : memref<8xi8> to memref<2xi32>
  %x = memref.load %v[%c0] : memref<2xi32>
  %y = math.ctpop %x : i32
  memref.store %y, %v[%c1] : memref<2xi32>
  %z = arith.constant 0 : i32
  func.return %z : i32
}
""")
    with pytest.raises(PassFailedException, match=r"<stdin>:8:8: error: 'math.ctpop' op on i32 "
                                                   r"has no lowering to the LLVM dialect"):
        jit.split_ir(module, "main")


# ------------------------------------------------------------------ models, both ways

def _reference_outputs(model, feeds):
    """`model` compiled by the reference route (loop IR -> LLVM dialect ->
    convert_module), run on `feeds`."""
    from glow_mlir.dialects import glow_ir
    from glow_mlir.frontends.onnx import import_onnx
    from glow_mlir.runtime.compiled_model import optimize_graph
    from glow_mlir.targets.cpu.areas import Areas
    from glow_mlir.targets.cpu.executor import lower_to_loops
    from glow_mlir.targets.cpu.winograd_filters import pretransform_winograd_filters
    from glow_mlir.targets.instructions import lower_to_instructions

    module = optimize_graph(import_onnx(model), "cpu")
    lower_to_instructions(module)
    pretransform_winograd_filters(module)  # as CpuBackend.compile: the same kernels
    fn = next(op for op in module.walk() if isinstance(op, glow_ir.FuncOp))
    name, areas = fn.sym_name.data, Areas(fn)
    lower_to_loops(module)
    areas.fit_lowered(module, name)
    assert_same_llvm_ir(module.clone(), name)
    lower_loops_to_llvm(module, prepared=True)
    entry = jit.jit(module, name)
    mutable, activations = areas.new_mutable(list(feeds.values())), areas.new_activations()
    assert entry(areas.constant.ctypes.data, mutable.ctypes.data, activations.ctypes.data) == 0
    return areas.read_outputs(mutable)


def _small_models():
    return {
        "mlp": model_zoo.mlp(),
        "lenet": model_zoo.lenet(),
        "small_cnn": str(REPO / "examples" / "small_cnn.onnx"),
        "resnet18": model_zoo.resnet18(image=32, classes=10),
        "mobilenet_v1": model_zoo.mobilenet_v1(image=32, classes=10, width=0.25),
        "bert_layer": model_zoo.bert_layer(seq=16, hidden=64, heads=4, ffn=128),
    }


@pytest.fixture
def without_vector_ops():
    """The kernels that write `vector` ops themselves (the float gemm's micro-kernel, the
    pointwise tiles borrowing it, the VNNI products) off for both routes: the dialect
    route cannot lower those ops (vector_ops.py; their own tests compare them with the
    scalar loops), and both routes must translate the same loop IR."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro, kernels_vnni

    with gemm_micro.enabled(False), kernels_vnni.enabled(False):
        yield


@pytest.mark.parametrize("name", list(_small_models()))
def test_models_give_bit_identical_outputs_both_ways(name, without_vector_ops):
    model = _small_models()[name]
    compiled = glow_mlir.compile(model, backend="cpu", cache=False)  # the translation
    feeds = model_feeds(compiled)
    got = compiled.run(feeds)
    want = _reference_outputs(model, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes()


def test_accelerator_native_path_is_bit_identical_both_ways(without_vector_ops):
    from glow_mlir.conversion.glow_accel_to_llvm import lower_accel_to_llvm, lower_accel_to_loops
    from glow_mlir.dialects import glow_ir
    from glow_mlir.targets.accel.native import AccelNativeExecutor
    from glow_mlir.targets.cpu.areas import Areas

    compiled = glow_mlir.compile(model_zoo.lenet(), backend="accel", scratchpad_kib=64)
    feeds = list(model_feeds(compiled).values())
    program = compiled.module
    loops = clone_module(program)
    lower_accel_to_loops(loops)
    fn = next(op for op in program.walk() if isinstance(op, glow_ir.FuncOp))
    assert_same_llvm_ir(loops, fn.sym_name.data)
    reference = clone_module(program)
    areas = Areas(next(op for op in reference.walk() if isinstance(op, glow_ir.FuncOp)))
    lower_accel_to_llvm(reference)
    areas.fit_lowered(reference, fn.sym_name.data)
    entry = jit.jit(reference, fn.sym_name.data)
    mutable, activations = areas.new_mutable(feeds), areas.new_activations()
    assert entry(areas.constant.ctypes.data, mutable.ctypes.data, activations.ctypes.data) == 0
    got = AccelNativeExecutor(clone_module(program)).run(feeds)
    for g, w in zip(got, areas.read_outputs(mutable)):
        assert g.tobytes() == w.tobytes()


# ----------------------------------------------------------------- verification switch

BROKEN = DOUBLE.replace("func.call @k(%in, %out) : (memref<4x8xf32>, memref<4x8xf32>) -> ()",
                        "func.call @k(%in) : (memref<4x8xf32>) -> ()")


def test_loop_ir_is_verified_only_under_the_switch(monkeypatch):
    from glow_mlir.ir.text import OpDiagnostic

    monkeypatch.setenv(VERIFY_EACH_STEP_ENV, "1")  # as tests/conftest.py sets it
    with pytest.raises(OpDiagnostic, match="incorrect number of operands"):
        prepare_loops(_module(BROKEN))
    monkeypatch.setenv(VERIFY_EACH_STEP_ENV, "0")  # production: LLVM's verifier checks the result,
    module = _module(BROKEN)              # the translation what LLVM cannot see
    prepare_loops(module)
    with pytest.raises(VerifyException, match="incorrect number of operands for callee"):
        jit.jit(module, "main")
    module = _module(DOUBLE.replace("%x = memref.load %a[%i, %j]", "%x = memref.load %a[%i]"))
    with pytest.raises(VerifyException, match=r"memref.load at <stdin>:\d+:\d+: 1 indices "
                                              r"into memref<4x8xf32>"):
        jit.jit(module, "main")


def test_the_text_does_not_depend_on_the_process():
    """Fast-math flags come from a frozenset, whose order follows the string hash seed:
    the text must not (a cache of compiled objects is keyed by it)."""
    import os
    import subprocess
    import sys

    script = ("import sys; from glow_mlir.dialects.context import make_context; "
              "from glow_mlir.ir.text import parse_module; "
              "from glow_mlir.conversion.loops_to_llvm_ir import module_text; "
              "print(module_text(parse_module(make_context(), sys.stdin.read()), 'x'))")
    texts = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", script], input=DOUBLE, env=env,
                              capture_output=True, text=True, check=True)
        assert "fadd contract reassoc float" in done.stdout
        texts.add(done.stdout)
    assert len(texts) == 1


def test_an_intrinsic_on_two_types_in_one_module():
    """xDSL's translator names `llvm.exp` without its type, so the dialect route fails on
    exp of f32 and of f64 in one module (a bundle's); the translation mangles the names."""
    module = _module("""
func.func @main(%a: f32, %b: f64) -> f64 {
  %x = math.exp %a : f32
  %y = math.exp %b : f64
  %z = arith.extf %x : f32 to f64
  %w = arith.addf %z, %y : f64
  func.return %w : f64
}
""")
    text = jit.unoptimized_ir(module)
    assert "call float @llvm.exp.f32(float %v1)" in text
    assert "call double @llvm.exp.f64(double %v2)" in text
    llvm.parse_assembly(text).verify()


WHILE = """
func.func @main(%cw: memref<1xi8> {llvm.noalias}, %mw: memref<16xi8> {llvm.noalias},
                %act: memref<1xi8> {llvm.noalias}) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %v = memref.view %mw[%c0][] : memref<16xi8> to memref<4xi32>
  %limit = memref.load %v[%c0] : memref<4xi32>
  %r:2 = scf.while (%i = %z, %s = %z) : (i32, i32) -> (i32, i32) {
    %lt = arith.cmpi slt, %i, %limit : i32
    scf.condition(%lt) %i, %s : i32, i32
  } do {
  ^bb0(%j: i32, %t: i32):
    %t2 = arith.addi %t, %j : i32
    %j2 = arith.addi %j, %one : i32
    scf.yield %j2, %t2 : i32, i32
  }
  memref.store %r#1, %v[%c1] : memref<4xi32>
  memref.store %r#0, %v[%c0] : memref<4xi32>
  func.return %z : i32
}
"""


@pytest.mark.parametrize("limit", [0, 1, 7])
def test_scf_while_runs_and_equals_the_dialect_route(limit):
    """`scf.while` (glow_ir.loop's code): phis in a header, the before region's
    condition, the body branching back; the results are what scf.condition passes on."""
    module = _module(WHILE)
    assert_same_llvm_ir(module, "main")
    mutable = np.zeros(16, np.uint8)
    mutable.view(np.int32)[0] = limit
    _run(jit.jit(_module(WHILE), "main"), mutable)
    assert list(mutable.view(np.int32)[:2]) == [limit, sum(range(limit))]


@pytest.mark.parametrize("name", ["if", "nested", "runtime", "swap", "if_in_loop"])
def test_control_flow_models_give_bit_identical_outputs_both_ways(name):
    """glow_ir.if and glow_ir.loop (scf.if and scf.while in the entry point): the same
    LLVM IR and the same bytes out through the translation and the dialect route."""
    import test_control_flow_if as cf_if
    import test_control_flow_loop as cf_loop

    x = np.linspace(-1, 1.5, 6, dtype=np.float32).reshape(2, 3)
    if name in cf_if.MODELS:
        model, feeds = cf_if.MODELS[name](), {"x": x}
    else:
        model, feeds = cf_loop.MODELS[name](), cf_loop._feeds(name, x, 4)
    got = glow_mlir.compile(model, backend="cpu", cache=False).run(feeds)
    want = _reference_outputs(model, feeds)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes()


def test_a_vector_extract_of_one_constant_element():
    """`vector.extract` of one lane (the pointwise kernel's vector tiles): extractelement
    at that lane."""
    module = _module("""
func.func @main(%a: f32) -> f32 {
  %v = vector.broadcast %a : f32 to vector<4xf32>
  %e = vector.extract %v[2] : f32 from vector<4xf32>
  func.return %e : f32
}
""")
    translate_function(next(iter(module.ops)), {})  # the walk's (Untranslatable if not)
    text = jit.unoptimized_ir(module)
    assert "extractelement <4 x float>" in text and ", i64 2" in text
    llvm.parse_assembly(text).verify()


CAPTURED_VECTOR = """
func.func private @k(%a: memref<4x64xi8> {llvm.noalias}, %b: memref<4x64xi8> {llvm.noalias})
    attributes {glow.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %s = vector.load %a[%c0, %c0] : memref<4x64xi8>, vector<64xi8>
  %r = vector.load %a[%c1, %c0] : memref<4x64xi8>, vector<64xi8>
  scf.for %i = %c0 to %c4 step %c1 {
    %row = arith.muli %i, %c1 : index
    %x = vector.load %a[%row, %c0] : memref<4x64xi8>, vector<64xi8>
    %y = arith.xori %x, %s : vector<64xi8>
    %z = arith.addi %y, %r : vector<64xi8>
    vector.store %z, %b[%row, %c0] : memref<4x64xi8>, vector<64xi8>
  } {glow.parallel = 2 : i64}
  func.return
}
func.func @main(%cw: memref<1xi8> {llvm.noalias}, %mw: memref<512xi8> {llvm.noalias},
                %act: memref<1xi8> {llvm.noalias}) -> i32 attributes {glow.activations_size = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %in = memref.view %mw[%c0][] : memref<512xi8> to memref<4x64xi8>
  %out = memref.view %mw[%c256][] : memref<512xi8> to memref<4x64xi8>
  func.call @k(%in, %out) : (memref<4x64xi8>, memref<4x64xi8>) -> ()
  %z = arith.constant 0 : i32
  func.return %z : i32
}
"""


def test_a_parallel_loop_captures_a_vector_whole():
    """Two vectors defined before a parallel loop reach its outlined body whole: each
    value had an 8-byte slot of the context, so a vector<64xi8> overwrote the next one
    and the stack past it (wrong sums and crashes of the int8 NCHW 1x1 kernel on two
    threads)."""
    text = jit.unoptimized_ir(_module(CAPTURED_VECTOR))
    assert "glow_parallel_for" in text
    a = np.random.default_rng(3).integers(-128, 128, (4, 64)).astype(np.int8)
    mutable = np.zeros(512, np.uint8)
    mutable[:256] = a.reshape(-1).view(np.uint8)
    _run(jit.jit(_module(CAPTURED_VECTOR), "main"), mutable)
    want = (a ^ a[0]) + a[1]
    np.testing.assert_array_equal(mutable[256:].view(np.int8).reshape(4, 64), want)


UNUSED_STEP = """
func.func private @k(%a: memref<8xi32> {llvm.noalias}) attributes {glow.kernel} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c2 = arith.constant 2 : index
  %seven = arith.constant 7 : i32
  scf.for %i = %c0 to %c8 step %c2 {
    memref.store %seven, %a[%i] : memref<8xi32>
  } {glow.parallel = 2 : i64}
  func.return
}
func.func @main(%cw: memref<1xi8> {llvm.noalias}, %mw: memref<512xi8> {llvm.noalias},
                %act: memref<1xi8> {llvm.noalias}) -> i32 attributes {glow.activations_size = 1 : i64} {
  %c0 = arith.constant 0 : index
  %in = memref.view %mw[%c0][] : memref<512xi8> to memref<8xi32>
  func.call @k(%in) : (memref<8xi32>) -> ()
  %z = arith.constant 0 : i32
  func.return %z : i32
}
"""


def test_a_parallel_loop_whose_step_the_body_does_not_use():
    """The outlined body steps by the loop's step even when nothing inside reads that
    constant (it was not among the captured values: 'a value used before it is
    defined'): every other element written, on two threads."""
    text = jit.unoptimized_ir(_module(UNUSED_STEP))
    assert "glow_parallel_for" in text
    mutable = np.zeros(512, np.uint8)
    _run(jit.jit(_module(UNUSED_STEP), "main"), mutable)
    np.testing.assert_array_equal(mutable[:32].view(np.int32), [7, 0] * 4)
