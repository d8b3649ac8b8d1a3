"""The memory report of a glow_ir function: the five numbers, before and after planning."""

from __future__ import annotations

import json

import numpy as np
import pytest

from glow_mlir.analysis.instr_memory import MemoryReport, memory_report, unshared_bytes
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects.context import make_context
from glow_mlir.ir.text import parse_module
from instr_testing import FC_WEIGHTS, parse, program

# Weights: x 2x3 f32 (24 B, input), w 3x4 f32 (48 B), b 4 f32 (16 B), y 2x4 f32 (32 B,
# output). Activations: %a (32 B) and %b (32 B) live together, %c (100 B of i8) after %a is
# freed, %d (4 B) never freed.
TEXT = (
    FC_WEIGHTS
    + """
  %a = glow_ir.alloc_activation : memref<2x4xf32>
  glow_ir.fully_connected @out %a, @in %x, @in %w, @in %b : memref<2x4xf32>, memref<2x3xf32>, memref<3x4xf32>, memref<4xf32>
  %b2 = glow_ir.alloc_activation : memref<2x4xf32>
  glow_ir.relu @out %b2, @in %a : memref<2x4xf32>
  glow_ir.dealloc_activation %a : memref<2x4xf32>
  %c = glow_ir.alloc_activation : memref<100xi8>
  %d = glow_ir.alloc_activation : memref<f32>
  glow_ir.copy @out %y, @in %b2 : memref<2x4xf32>
  glow_ir.dealloc_activation %c : memref<100xi8>
  glow_ir.dealloc_activation %b2 : memref<2x4xf32>
}
"""
)


def module():
    return parse(TEXT, {"w": np.ones((3, 4), np.float32), "b": np.ones(4, np.float32)},
                 verify=False)


def test_unplanned_report():
    r = memory_report(module())
    assert r.constant_bytes == 48 + 16
    assert r.mutable_bytes == 24 + 32
    # every alloc apart, each rounded to 64: a, b2, c (100 -> 128), d
    assert r.unshared_bytes == r.activations_bytes == 64 + 64 + 128 + 64
    # live together at most: b2 + c + d (a is freed before c is allocated)
    assert r.peak_live_bytes == 64 + 128 + 64
    assert r.efficiency == pytest.approx(256 / 320)


def test_planned_report_reaches_the_bound():
    m = module()
    before = unshared_bytes(m)
    run_pipeline(m, "plan-memory")
    r = memory_report(m)
    assert r.activations_bytes == r.peak_live_bytes == 256
    assert r.efficiency == 1.0
    assert r.unshared_bytes == before == 320  # the allocs are still all there
    assert memory_report(m, unshared_bytes=1000).unshared_bytes == 1000


def test_alignment_of_the_plan_is_used():
    m = module()
    run_pipeline(m, "plan-memory{alignment=4}")
    r = memory_report(m)
    assert r.peak_live_bytes == 32 + 100 + 4 == r.activations_bytes
    assert r.unshared_bytes == 32 + 32 + 100 + 4


def test_no_activations():
    m = parse(program("glow_ir.relu @out %y, @in %x : memref<4xf32>"), verify=False)
    run_pipeline(m, "plan-memory")
    r = memory_report(m)
    assert r == MemoryReport(0, 32, 0, 0, 0)
    assert r.efficiency == 1.0


def test_as_dict_and_json():
    r = MemoryReport(1, 2, 4, 3, 8)
    assert r.as_dict() == {"constant_bytes": 1, "mutable_bytes": 2, "activations_bytes": 4,
                           "peak_live_bytes": 3, "unshared_bytes": 8}
    assert r.efficiency == 0.75
    assert json.loads(r.to_json(model="m.onnx")) == {**r.as_dict(), "efficiency": 0.75,
                                                     "model": "m.onnx"}


def test_no_function_is_an_error():
    with pytest.raises(KeyError, match="no glow_ir.func"):
        memory_report(parse_module(make_context(), "builtin.module {}"))
