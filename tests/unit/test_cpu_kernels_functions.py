"""Kernel functions (issue 14): one private function per distinct instruction signature,
equal instructions sharing it, the entry point a list of calls; the kernels compiled to
objects in parallel processes give the same code and numbers as compiled serially."""

from __future__ import annotations

import numpy as np
from onnx import helper
from xdsl.dialects import func

import glow_mlir
from glow_mlir.conversion.glow_ir_to_loops.functions import regions_of
from glow_mlir.targets.cpu import jit
from onnx_testing import make_model, rand, run_onnxruntime


def _convs(n_equal: int = 2):
    """x -> `n_equal` equal 3x3 convolutions (4 -> 4 channels, 8x8, other weights each),
    then a stride-2 one: another shape."""
    nodes, inits, prev = [], {}, "x"
    for i in range(n_equal):
        inits[f"w{i}"] = rand(4, 4, 3, 3, seed=i)
        inits[f"b{i}"] = rand(4, seed=10 + i)
        nodes.append(helper.make_node("Conv", [prev, f"w{i}", f"b{i}"], [f"c{i}"],
                                      pads=[1, 1, 1, 1]))
        prev = f"c{i}"
    inits["ws"] = rand(4, 4, 3, 3, seed=99)
    nodes.append(helper.make_node("Conv", [prev, "ws"], ["y"], pads=[1, 1, 1, 1],
                                  strides=[2, 2]))
    return make_model(nodes, {"x": ((1, 4, 8, 8), np.float32)}, ["y"], inits)


def _functions(compiled) -> tuple[list[str], list[str]]:
    """(kernel functions defined, callees of the entry point's calls) in the compiled
    loop IR."""
    module = compiled.executor.module
    defined = [f.sym_name.data for f in module.ops
               if isinstance(f, func.FuncOp) and f.body.blocks]
    entry = next(f for f in module.ops if isinstance(f, func.FuncOp)
                 and f.sym_name.data == compiled.executor.name)
    calls = [op.callee.string_value() for op in entry.walk() if isinstance(op, func.CallOp)]
    return [d for d in defined if d != compiled.executor.name], calls


def test_equal_convolutions_share_one_kernel_function():
    model = _convs(3)
    compiled = glow_mlir.compile(model, backend="cpu")
    kernels, calls = _functions(compiled)
    convs = [k for k in kernels if k.endswith("_convolution")]
    assert len(convs) == 2  # the three equal ones, the stride-2 one
    assert len([c for c in calls if c.endswith("_convolution")]) == 4
    assert calls.count(convs[0]) == 3 and calls.count(convs[1]) == 1
    x = rand(1, 4, 8, 8, seed=5)
    (want,) = run_onnxruntime(model, {"x": x})
    (got,) = compiled.run({"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_kernel_functions_have_internal_linkage_and_the_entry_point_only_calls():
    import llvmlite.binding as llvm

    from glow_mlir.conversion.glow_ir_to_loops.functions import KERNEL_ATTR

    compiled = glow_mlir.compile(_convs(2), backend="cpu")
    module = compiled.executor.module
    name = compiled.executor.name
    for f in module.ops:
        assert isinstance(f, func.FuncOp)
        if f.is_declaration:  # the pool's glow_pool_begin/end (native_runtime), not ours
            continue
        assert (KERNEL_ATTR in f.attributes) == (f.sym_name.data != name)
    entry = next(f for f in module.ops if f.sym_name.data == name)
    assert not any(op.regions for op in entry.walk() if op is not entry)  # no loops: calls
    linked = llvm.parse_assembly(jit.unoptimized_ir(module))  # one module (bundles)
    for f in linked.functions:
        if not f.is_declaration:
            kernel = f.name != name
            assert (f.linkage == llvm.Linkage.internal) == kernel
            assert ("noinline" in {a.decode() for a in f.attributes}) == kernel


def test_every_compiled_function_aligns_its_stack():
    """llvm_compile.STACK_ALIGN: the entry point, kernels and outlined parallel chunks
    (as outlining.py writes them: the pool's workers call these on their own stacks) all
    set up a 64-byte aligned frame, whatever the caller's stack pointer (AVX-512 spill
    slots: 1.8x on a grouped kernel called at 16 mod 32); declarations are left as they
    are, and 0 leaves the text alone."""
    from glow_mlir.targets.cpu import llvm_compile

    compiled = glow_mlir.compile(_convs(2), backend="cpu", num_threads=2, cache=False)
    text = jit.unoptimized_ir(compiled.executor.module) + (
        "define internal void @b(i64 %lo, i64 %hi, i64 %w) alwaysinline {\n  ret void\n}\n"
        "define internal void @c(ptr %ctx, i64 %lo, i64 %hi, i64 %worker) {\n"
        "  ret void\n}\n")
    defines = [line for line in text.splitlines() if line.startswith("define ")]
    assert len(defines) == 5  # the entry point, two kernels, a body and its chunk
    aligned = llvm_compile.aligned_stacks(text)
    got = [line for line in aligned.splitlines() if line.startswith("define ")]
    assert len(got) == len(defines) and all(g.endswith(" alignstack(64) {") for g in got)
    assert [line for line in aligned.splitlines() if line.startswith("declare ")] == \
        [line for line in text.splitlines() if line.startswith("declare ")]
    tm = llvm_compile.CompileSpec(*jit._host_cpu()).machine()
    optimized = str(llvm_compile.optimize(text, tm))
    assert "alignstack=64" in optimized or "alignstack(64)" in optimized
    monkey = llvm_compile.STACK_ALIGN
    try:
        llvm_compile.STACK_ALIGN = 0
        assert llvm_compile.aligned_stacks(text) == text
    finally:
        llvm_compile.STACK_ALIGN = monkey
    x = rand(1, 4, 8, 8, seed=5)
    (want,) = run_onnxruntime(_convs(2), {"x": x})
    np.testing.assert_allclose(compiled.run({"x": x})[0], want, rtol=1e-4, atol=1e-5)


def test_parallel_compile_gives_the_serial_code_and_numbers():
    from glow_mlir.dialects import glow_ir
    from glow_mlir.frontends.onnx import import_onnx
    from glow_mlir.runtime.compiled_model import optimize_graph
    from glow_mlir.targets.cpu.areas import Areas
    from glow_mlir.targets.cpu.executor import lower_to_llvm
    from glow_mlir.targets.instructions import lower_to_instructions

    module = optimize_graph(import_onnx(_convs(2)), "cpu")
    lower_to_instructions(module)
    fn = next(op for op in module.walk() if isinstance(op, glow_ir.FuncOp))
    name, areas = fn.sym_name.data, Areas(fn)
    lower_to_llvm(module)
    areas.fit_lowered(module, name)
    serial = jit.jit(module, name, jobs=1)
    parallel = jit.jit(module, name, jobs=2)
    assert parallel.jobs == 2 and len(serial.objects) == 2  # two convolution kernels
    assert serial.objects == parallel.objects  # deterministic: the same machine code
    x = rand(1, 4, 8, 8, seed=3)
    outs = []
    for entry in (serial, parallel):
        mutable, activations = areas.new_mutable([x]), areas.new_activations()
        assert entry(areas.constant.ctypes.data, mutable.ctypes.data,
                     activations.ctypes.data) == 0
        outs.append(areas.read_outputs(mutable)[0])
    np.testing.assert_array_equal(outs[0], outs[1])


def test_a_failing_worker_is_compiled_here(monkeypatch):
    from glow_mlir.targets.cpu import llvm_compile

    monkeypatch.setattr(llvm_compile.sys, "executable", "/nonexistent/python")
    text = 'define void @f(ptr noalias %p) {\n  store i8 0, ptr %p\n  ret void\n}\n'
    spec = llvm_compile.CompileSpec(*jit._host_cpu())
    assert (llvm_compile.compile_objects([text, text.replace("@f", "@g")], spec, 2)
            == llvm_compile.compile_serial([text, text.replace("@f", "@g")], spec))


def test_batches_balance_and_keep_every_index():
    from glow_mlir.targets.cpu.llvm_compile import batches

    parts = batches([5, 1, 4, 2, 3], 2)
    assert sorted(i for p in parts for i in p) == [0, 1, 2, 3, 4]
    assert parts == [[0, 3, 1], [2, 4]]


def test_regions_merge_overlapping_buffers_only():
    a, b = object(), object()
    regions, refs = regions_of([(a, 0, 16), (a, 8, 16), (a, 32, 8), (b, 0, 16), (a, 24, 8)])
    assert regions == [(a, 0, 24), (a, 32, 8), (b, 0, 16), (a, 24, 8)]
    assert refs == [(0, 0), (0, 8), (1, 0), (2, 0), (3, 0)]


def test_one_module_keeps_kernels_internal_and_apart():
    """The one-module form (bundles, --emit llvm-ir): kernels stay internal (a bundle
    exports its entry point only) and are not inlined into it (one huge function is
    what O3 is slow on)."""
    compiled = glow_mlir.compile(_convs(2), backend="cpu")
    text = jit.llvm_ir_text(compiled.executor.module)
    defines = [line for line in text.splitlines() if line.startswith("define ")]
    entry = [d for d in defines if f"@{compiled.executor.name}(" in d]
    assert len(entry) == 1 and len(defines) == 3
    assert all(d.startswith("define internal") for d in defines if d not in entry)
