"""Passes that can lengthen an activation's life (peephole, optimize-inserts-extracts,
share-buffers) on an already planned function: they plan it again, so two activations live
at the same time never end up on the same bytes; verify-instr checks any plan it sees."""

from __future__ import annotations

import numpy as np
import pytest

from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects.context import make_context
from glow_mlir.ir.text import OpDiagnostic, parse_module
from instr_testing import assert_same_outputs, run_spec

# Planned with %a and %e on the same bytes (their lives are disjoint); forwarding the copy
# %d <- %a makes the add read %a, stretching its life over %e's.
PROGRAM = """
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
  glow_ir.weight @z mutable output : memref<4xf32>
} program(%x, %y, %z) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.relu @out %a, @in %x : memref<4xf32>
  %d = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.copy @out %d, @in %a : memref<4xf32>
  glow_ir.element_abs @out %z, @in %a : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
  %e = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_neg @out %e, @in %x : memref<4xf32>
  %f = glow_ir.alloc_activation : memref<4xf32>
  glow_ir.element_add @out %f, @in %d, @in %e : memref<4xf32>
  glow_ir.dealloc_activation %d : memref<4xf32>
  glow_ir.dealloc_activation %e : memref<4xf32>
  glow_ir.copy @out %y, @in %f : memref<4xf32>
  glow_ir.dealloc_activation %f : memref<4xf32>
}
"""

X = np.array([-1.0, 2.0, -3.0, 4.0], np.float32)


def _run(spec: str):
    return run_spec(PROGRAM, spec, [X], verify=False)


@pytest.mark.parametrize("spec", ["plan-memory,peephole", "plan-memory,share-buffers",
                                  "plan-memory,optimize-inserts-extracts",
                                  "plan-memory,peephole,share-buffers,verify-instr"])
def test_a_pass_after_planning_keeps_the_numbers(spec):
    want = _run("plan-memory")
    assert_same_outputs(_run(spec), want)
    np.testing.assert_array_equal(want[0], np.maximum(X, 0) - X)


def test_verify_instr_rejects_an_overlapping_plan():
    text = PROGRAM.replace("%a = glow_ir.alloc_activation :",
                           "%a = glow_ir.alloc_activation {offset = 0 : i64} :")
    for name, offset in (("%d", 64), ("%e", 64), ("%f", 0)):
        text = text.replace(f"{name} = glow_ir.alloc_activation :",
                            f"{name} = glow_ir.alloc_activation {{offset = {offset} : i64}} :")
    text = text.replace("\n}\n", "\n} attributes {activations_size = 128 : i64, "
                                  "alignment = 64 : i64}\n")
    module = parse_module(make_context(), text)
    with pytest.raises(OpDiagnostic, match="overlap an activation live at the same time"):
        run_pipeline(module, "verify-instr")
