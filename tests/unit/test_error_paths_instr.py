"""Bad input to `lower-to-instr` and `convert-glow-ir-to-loops`: each error path gives
its message."""

from __future__ import annotations

import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FloatAttr, ModuleOp, f32
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import PassFailedException

from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects.context import make_context
from glow_mlir.ir.text import parse_module


def _fails(module: ModuleOp, spec: str, message: str) -> None:
    with pytest.raises(PassFailedException, match=message):
        run_pipeline(module, spec, verify=False)


def test_function_without_body():
    _fails(ModuleOp([func.FuncOp.external("f", [], [])]), "lower-to-instr",
           "^error: 'func.func' op has no body; a glow function is one block$")


def test_function_without_return():
    block = Block([arith.ConstantOp(FloatAttr(1.0, f32))])
    _fails(ModuleOp([func.FuncOp("g", ([], []), Region(block))]), "lower-to-instr",
           "'func.func' op does not end in func.return")


def test_op_without_instruction():
    module = parse_module(make_context(), "func.func @h() -> tensor<2xf32> {\n"
                          "  %0 = arith.constant dense<1.0> : tensor<2xf32>\n"
                          "  func.return %0 : tensor<2xf32>\n}")
    _fails(module, "lower-to-instr", "<stdin>:2:8: error: 'arith.constant' op has no instruction")


def test_function_with_a_non_tensor_result():
    module = parse_module(make_context(), "func.func @s(%x: f32) -> f32 {\n"
                          "  func.return %x : f32\n}", "s.mlir")
    _fails(module, "lower-to-instr",
           "s.mlir:1:1: error: 'func.func' op argument #0 has type f32; only tensors lower to "
           "buffers")


def test_nothing_to_compile(tmp_path):
    from glow_mlir.ir.errors import UserError
    from glow_mlir.runtime.bundle import write_bundle
    from glow_mlir.targets.instructions import lower_to_instructions

    with pytest.raises(UserError, match="the module has no function to compile"):
        lower_to_instructions(ModuleOp([]))
    with pytest.raises(UserError, match="the module has no function to compile"):
        write_bundle(ModuleOp([]), tmp_path / "b", "net")
