"""Regressions found by fuzz/fuzz_mlir.py whose inputs are easier to build than to write
down (the others are FileCheck cases: tests/filecheck/tools/fuzz-regressions.mlir and the
passes' own files). Each used to end in `glow-opt: internal error` or a hang; now it is a
located error with status 1."""

from __future__ import annotations

import pytest

from glow_mlir.tools.glow_opt import main

FUNC = """func.func @f(%x: tensor<4xf32>) {
  %0 = glow.relu %x : tensor<4xf32>
  func.return
}
"""


def run(tmp_path, text, *flags, capsys):
    path = tmp_path / "in.mlir"
    path.write_text(text)
    try:
        main([str(path), *flags])
        code = 0
    except SystemExit as stop:
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("text", [
    "builtin.module {\n" * 2000 + FUNC + "}\n" * 2000,
    FUNC.replace("tensor<4xf32>)", "tensor<" * 2000 + "f32" + ">" * 2000 + ")"),
    FUNC.replace("%0 =", "%c = glow.constant dense<" + "[" * 2000 + "1.0" + "]" * 2000
                 + "> : tensor<1xf32>\n  %0 ="),
], ids=["regions", "types", "dense"])
def test_deep_nesting_is_a_located_parse_error(tmp_path, text, capsys):
    # Was: internal error, RecursionError (xDSL's parser is recursive descent).
    code, _, err = run(tmp_path, text, capsys=capsys)
    assert code == 1
    assert "in.mlir:" in err and "error: input nested too deeply" in err
    assert "internal error" not in err and "Traceback" not in err


ACCUMULATE = """glow_ir.func @source_still_read declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  %b = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_exp @out %b, @in %a : memref<4xf32>
  %c = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_add @out %c, @in %a, @in %b : memref<4xf32>
  glow_ir.copy @out %y, @in %c : memref<4xf32>
  glow_ir.dealloc_activation %c : memref<4xf32>
  glow_ir.dealloc_activation %b : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}
"""


def test_verify_instr_knows_tile_ops_in_place_pairs(tmp_path, capsys):
    # convert-glow-ir-to-accel adds into a source's tile (`elementwise @out %t, @in %t,
    # @in %u`), which element_add allows; verify-instr used to reject it (operand #0
    # overlaps operand #1), without a location since the op is new.
    code, out, err = run(tmp_path, ACCUMULATE, "-p", "convert-glow-ir-to-accel,verify-instr",
                         capsys=capsys)
    assert code == 0, err
    assert any("glow_accel.elementwise @out" in ln for ln in out.splitlines())
