"""The `glow_loops` dialect: what the CPU backend's loop IR needs beyond xDSL's upstream
dialects. One op so far, `glow_loops.prefetch`, MLIR's `memref.prefetch` (xDSL 0.74 has
none): a hint that `memref[indices]` is read (or written) soon, lowered to
`llvm.prefetch.p0(ptr, rw, locality, 1)` (a data-cache prefetch). It changes no value,
so kernels may emit it behind a switch and stay bit-identical.

    glow_loops.prefetch %x[%c, %p] {locality = 3 : i32} : memref<32x12544xf32>
"""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, UnitAttr, i32
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class PrefetchOp(IRDLOperation):
    """Prefetch the cache line holding `memref[indices]` (`write`: for a store;
    `locality` 0-3, LLVM's: 3 keeps it in every cache level)."""

    name = "glow_loops.prefetch"

    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    locality = prop_def(IntegerAttr)
    write = opt_prop_def(UnitAttr)

    assembly_format = "$memref `[` $indices `]` attr-dict `:` type($memref)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, memref: SSAValue, indices: list[SSAValue], locality: int = 3,
                 write: bool = False):
        props: dict[str, Attribute] = {"locality": IntegerAttr(locality, i32)}
        if write:
            props["write"] = UnitAttr()
        super().__init__(operands=[memref, indices], properties=props)

    def verify_(self) -> None:
        t = self.memref.type
        assert isinstance(t, MemRefType)
        if len(self.indices) != len(t.get_shape()):
            raise VerifyException(f"{len(self.indices)} indices into {t}")
        if not 0 <= self.locality.value.data <= 3:
            raise VerifyException("locality is 0 to 3")


GlowLoops = Dialect("glow_loops", [PrefetchOp], [])

__all__ = ["GlowLoops", "PrefetchOp"]
