"""The glow_accel dialect's Python API, which the passes, the simulator and the native
lowering rely on: the target attribute's fields, tile types, what a DMA moves, and the
glow_ir instruction each compute op stands for (its semantics)."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import MemRefType, f32
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from glow_mlir.dialects import glow_accel, glow_ir
from glow_mlir.dialects.context import make_context
from glow_mlir.ir.text import parse_module

TARGET = ("#glow_accel.target<scratchpad_bytes = 4096, dma_bytes_per_cycle = 16, "
          "dma_latency = 10, macs_per_cycle = 64, vector_width = 8, alignment = 64>")


def test_target_fields_and_defaults():
    t = glow_accel.TargetAttr.make(scratchpad_bytes=4096, dma_bytes_per_cycle=16,
                                   dma_latency=10, macs_per_cycle=64, vector_width=8)
    assert [t.value(f) for f in glow_accel.TARGET_FIELDS] == [4096, 16, 10, 64, 8, 64]
    t.verify()
    with pytest.raises(VerifyException, match="alignment must be a power of two, got 24"):
        glow_accel.TargetAttr.make(alignment=24).verify()


def test_tile_types_are_memory_space_one():
    t = glow_accel.tile_type(f32, [4, 8])
    assert glow_accel.in_scratchpad(t)
    assert not glow_accel.in_scratchpad(MemRefType(f32, [4, 8]))
    assert glow_accel.main_memory_type(t) == MemRefType(f32, [4, 8])


def _program(body: str, args: str = "%a", weights: str = "") -> glow_ir.FuncOp:
    text = (f"glow_ir.func @f declare {{\n{weights}\n}} program({args}) {{\n{body}\n}} "
            f"attributes {{glow_accel.target = {TARGET}}}")
    module = parse_module(make_context(), text, "test")
    module.verify()
    return next(op for op in module.walk() if isinstance(op, glow_ir.FuncOp))


def test_dma_knows_its_direction_tile_and_bytes():
    fn = _program(
        """
      %t = glow_accel.scratchpad_alloc {offset = 64 : i64} : memref<2x3xf32, 1>
      %k = glow_accel.dma_start %a[1, 2] -> %t[0, 0] sizes [2, 3] : memref<4x8xf32> -> memref<2x3xf32, 1>
      glow_accel.dma_wait %k
      %s = glow_accel.dma_start %t[0, 0] -> %a[0, 0] sizes [1, 3] : memref<2x3xf32, 1> -> memref<4x8xf32>
      glow_accel.dma_wait %s
      glow_accel.scratchpad_free %t : memref<2x3xf32, 1>""",
        weights="glow_ir.weight @a mutable input : memref<4x8xf32>",
    )
    alloc, load, _, store, *_ = fn.body.ops
    assert alloc.offset_value == 64 and alloc.size_bytes == 24
    assert glow_accel.target_of(alloc).value("scratchpad_bytes") == 4096
    assert load.is_load and load.tile is alloc.result and load.main is fn.body.args[0]
    assert load.bytes == 24 and load.src_box == ((1, 2), (2, 3))
    assert not store.is_load and store.tile is alloc.result and store.bytes == 12


def test_compute_ops_stand_for_glow_ir_instructions():
    tiles = [create_ssa_value(glow_accel.tile_type(f32, s)) for s in ([1, 4, 4, 4], [1, 2, 6, 6],
                                                                     [4, 2, 3, 3])]
    conv = glow_accel.ConvOp.make_tile(tiles, accumulate=True, kernels=[3, 3], strides=[1, 1],
                                       pads=[0, 0, 0, 0], dilation=[1, 1], group=1,
                                       fused_activation="relu")
    conv.verify()
    assert conv.kind == "convolution" and conv.accumulates and not conv.has_bias
    types = conv.plain_operand_types()
    assert types[-1] == MemRefType(f32, [4])  # a conv without bias gets one of Cout
    instr = conv.instruction_on([create_ssa_value(t) for t in types])
    assert isinstance(instr, glow_ir.ConvolutionOp)
    assert "accumulate" not in instr.attributes and "kind" not in instr.attributes
    assert instr.attributes["fused_activation"].data == "relu"

    a, b = (create_ssa_value(glow_accel.tile_type(f32, [8])) for _ in range(2))
    add = glow_accel.ElementwiseOp.make_tile([a, a, b], kind="element_add")
    add.verify()
    assert add.kind == "element_add" and add.reads() == [a, b] and add.writes() == [a]
    assert isinstance(add.instruction_on([create_ssa_value(MemRefType(f32, [8]))] * 3),
                      glow_ir.ElementAddOp)


def test_a_compute_op_checks_its_shapes_with_the_instruction_verifier():
    c, x, y = (create_ssa_value(glow_accel.tile_type(f32, s)) for s in ([2, 3], [2, 4], [5, 3]))
    with pytest.raises(VerifyException, match="lhs columns 4 must equal rhs rows 5"):
        glow_accel.MatmulOp.make_tile([c, x, y]).verify()
