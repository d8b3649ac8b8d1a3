"""The compute instruction classes in glow_ir_ops/compute.py are generated: the file must be
what the generator writes today, and a class must be named as its graph op says."""

from typing import ClassVar

import pytest

from glow_mlir.dialects import glow, glow_ir
from glow_mlir.dialects.glow_ir_ops import generate
from glow_mlir.dialects.glow_ir_ops.instructions import GraphInstrOp


def test_compute_py_is_up_to_date():
    text = generate.PATH.read_text()
    assert generate.render(text) == text, (
        "run python -m glow_mlir.dialects.glow_ir_ops.generate")
    assert generate.main(["--check"]) == 0


def test_a_stale_compute_py_is_noticed_and_rewritten():
    text = generate.PATH.read_text()
    stale = text.replace("    name = \"glow_ir.relu\"\n    GRAPH_OP: ClassVar = glow.ReluOp\n", "")
    assert stale != text
    assert generate.render(stale) == text


def test_every_graph_op_with_an_instruction_has_its_class():
    want = {op for op in glow.ALL_OPS if op.name not in glow_ir.NOT_INSTRUCTIONS}
    assert set(glow_ir.INSTRUCTION_OF) == want
    for op, cls in glow_ir.INSTRUCTION_OF.items():
        assert cls.name == glow_ir.instruction_name(op)
        assert getattr(glow_ir, cls.__name__) is cls  # a public name of the dialect module


def test_a_misnamed_instruction_class_is_refused():
    with pytest.raises(TypeError, match="the instruction of glow.relu is named 'glow_ir.relu'"):
        class Wrong(GraphInstrOp):  # noqa: F841
            name = "glow_ir.rectify"
            GRAPH_OP: ClassVar = glow.ReluOp


def test_derived_fields_follow_the_graph_op():
    assert glow_ir.ReluOp.ACCESS == (glow_ir.Access.OUT, glow_ir.Access.IN)
    assert glow_ir.ReluOp.INPLACE == ((0, 1),)
    assert glow_ir.ElementAddOp.ACCESS == (glow_ir.Access.OUT,) + (glow_ir.Access.IN,) * 2
