"""`glow_loops.prefetch` (dialects/glow_loops.py): parsed and printed, lowered to a void
`llvm.prefetch.p0` call at the element's address by the one-walk translation and the
dialect route alike (the same LLVM IR), and changing nothing the function computes."""

from __future__ import annotations

import re

import llvmlite.binding as llvm
import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from glow_mlir.conversion.loops_to_llvm_ir import split_texts
from glow_mlir.dialects.context import make_context
from glow_mlir.ir.text import parse_module
from glow_mlir.targets.cpu import jit
from llvm_ir_check import assert_same_llvm_ir

TRIPLE = "x86_64-unknown-linux-gnu"

COPY = """
func.func private @k(%a: memref<4x64xf32> {llvm.noalias}, %b: memref<4x64xf32> {llvm.noalias})
    attributes {glow.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c4 step %c1 {
    glow_loops.prefetch %a[%i, %c64_minus] {locality = 3 : i32} : memref<4x64xf32>
    glow_loops.prefetch %b[%i, %c0] {locality = 1 : i32, write} : memref<4x64xf32>
    scf.for %j = %c0 to %c64 step %c1 {
      %x = memref.load %a[%i, %j] : memref<4x64xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %b[%i, %j] : memref<4x64xf32>
    }
  }
  func.return
}
func.func @main(%cw: memref<1xi8> {llvm.noalias}, %mw: memref<2048xi8> {llvm.noalias},
                %act: memref<1xi8> {llvm.noalias}) -> i32
    attributes {glow.activations_size = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1024 = arith.constant 1024 : index
  %in = memref.view %mw[%c0][] : memref<2048xi8> to memref<4x64xf32>
  %out = memref.view %mw[%c1024][] : memref<2048xi8> to memref<4x64xf32>
  func.call @k(%in, %out) : (memref<4x64xf32>, memref<4x64xf32>) -> ()
  %z = arith.constant 0 : i32
  func.return %z : i32
}
""".replace("%c64_minus", "%c48").replace("%c64 = arith.constant 64 : index",
                                          "%c64 = arith.constant 64 : index\n"
                                          "  %c48 = arith.constant 48 : index")


def _module(text: str = COPY):
    return parse_module(make_context(), text)


def test_prefetch_prints_and_parses_back():
    module = _module()
    again = parse_module(make_context(), str(module))
    assert str(again) == str(module)
    assert re.search(r"glow_loops.prefetch %\w+\[%\w+, %\w+\] \{locality = 1 : i32, write\}"
                     r" : memref<4x64xf32>", str(module))


def test_prefetch_checks_its_indices_and_locality():
    with pytest.raises(VerifyException, match="indices"):
        _module(COPY.replace("%a[%i, %c48]", "%a[%i]")).verify()
    with pytest.raises(VerifyException, match="locality"):
        _module(COPY.replace("locality = 3", "locality = 4")).verify()


def test_prefetch_is_a_void_intrinsic_call_at_the_elements_address():
    _, (kernel,) = split_texts(_module(), "main", TRIPLE)
    assert "declare void @llvm.prefetch.p0(ptr, i32, i32, i32)" in kernel
    # a[i, 48]: i * 64 + 48, one inbounds GEP, read, locality 3, data cache
    m = re.search(r"(%v\d+) = getelementptr inbounds float, ptr %v1, i64 %v\d+\n"
                  r"  call void @llvm.prefetch.p0\(ptr \1, i32 0, i32 3, i32 1\)", kernel)
    assert m, kernel
    # b[i, 0], for a write, locality 1
    assert re.search(r"call void @llvm.prefetch.p0\(ptr %v\d+, i32 1, i32 1, i32 1\)", kernel)
    llvm.parse_assembly(kernel).verify()
    # LLVM keeps it through -O3 (it would drop a call it thought had no effect)
    assert "@llvm.prefetch.p0(" in jit.llvm_ir_text(_module(), optimized=True)


def test_prefetch_lowers_the_same_both_routes_and_computes_nothing():
    module = _module()
    assert_same_llvm_ir(module, "main")
    x = np.arange(256, dtype=np.float32).reshape(4, 64)
    mutable = np.zeros(2048, np.uint8)
    mutable[:1024] = x.reshape(-1).view(np.uint8)
    one = np.zeros(64, np.uint8)
    entry = jit.jit(module, "main")
    assert entry(one.ctypes.data, mutable.ctypes.data, one.ctypes.data) == 0
    np.testing.assert_array_equal(mutable[1024:].view(np.float32).reshape(4, 64), 2 * x)


def test_upstream_reads_it_as_memref_prefetch():
    """The upstream reference path (targets/cpu/upstream.py) spells it `memref.prefetch`:
    mlir-opt lowers it to the same two calls."""
    from glow_mlir.targets.cpu.upstream import have_tools, upstream_llvm_ir

    if not have_tools():
        pytest.skip("mlir-opt-22 / mlir-translate-22 not installed")
    text = upstream_llvm_ir(_module())
    assert re.search(r"call void @llvm.prefetch.p0\(ptr %\d+, i32 0, i32 3, i32 1\)", text)
    assert re.search(r"call void @llvm.prefetch.p0\(ptr %\d+, i32 1, i32 1, i32 1\)", text)
