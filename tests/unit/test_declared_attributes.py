"""Instructions and accelerator ops declare their attributes on the class (issue 15 item
1): the data instructions' `offsets`/`count`/`axis` and the tile ops' `kind`/`accumulate`
are xDSL attribute definitions, verified by xDSL and read back through the declaration; a
compute instruction's attributes are its graph op's declarations (checked on the shadow
graph op), so an attribute its graph op does not declare is refused."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, MemRefType, StringAttr, f32, i64
from xdsl.utils.exceptions import VerifyException

from glow_mlir.dialects import glow, glow_accel, glow_ir
from glow_mlir.dialects.glow_ops.attrs import GlowAttr, declared_attributes
from glow_mlir.ir.values import detached_values


def _buffers(*shapes: list[int]):
    return detached_values(MemRefType(f32, s) for s in shapes)


def test_data_instructions_declare_their_attributes():
    for cls, names in ((glow_ir.ExtractTensorOp, ["offsets"]),
                       (glow_ir.InsertTensorOp, ["offsets", "count", "axis"])):
        defs = cls.get_irdl_definition().attributes
        assert list(defs) == names
        assert all(isinstance(d.constr, GlowAttr) and d.constr.name == n
                   for n, d in defs.items())


def test_an_insert_reads_its_declared_defaults_and_kinds():
    big, small = _buffers([8], [2])
    insert = glow_ir.InsertTensorOp.make([big, small], offsets=[2])
    insert.verify()
    assert (insert.offsets(), insert.count(), insert.axis()) == ((2,), 1, 0)
    insert.attributes["count"] = FloatAttr(2.0, f32)
    with pytest.raises(VerifyException, match="attribute 'count' must be an integer"):
        insert.verify()


def test_an_extract_without_offsets_is_refused():
    small, big = _buffers([2], [8])
    with pytest.raises(VerifyException, match="requires attribute 'offsets'"):
        glow_ir.ExtractTensorOp.make([small, big]).verify()


def test_a_compute_instruction_takes_its_graph_ops_attributes_only():
    assert "alpha" in declared_attributes(glow.LeakyReluOp)
    out, x = _buffers([4], [4])
    leaky = glow_ir.LeakyReluOp.make([out, x], alpha=0.5)
    leaky.verify()
    assert leaky.attributes["alpha"] == FloatAttr(0.5, f32)  # built as its declared kind
    relu = glow_ir.ReluOp.make([out, x])
    relu.attributes["alpha"] = FloatAttr(0.5, f32)
    with pytest.raises(VerifyException, match="unknown attribute 'alpha'"):
        relu.verify()


def test_tile_ops_declare_kind_and_accumulate():
    for cls in glow_accel.COMPUTE_OPS:
        assert list(cls.get_irdl_definition().attributes) == ["kind", "accumulate"]
    a, b = detached_values(glow_accel.tile_type(f32, [8]) for _ in range(2))
    add = glow_accel.ElementwiseOp.make_tile([a, a, b], kind="element_add")
    assert add.kind_attr == StringAttr("element_add") and add.accumulate_attr is None
    add.attributes["kind"] = IntegerAttr(1, i64)
    with pytest.raises(VerifyException, match="should be of base attribute string"):
        add.verify()
