"""LLVM's spelling of what the loop IR holds: types (`type_text`), float constants
(`float_literal`), global names, flag sets, intrinsic suffixes, function signatures and
the text of a translated function (`FunctionText`)."""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    NoneAttr,
    UnitAttr,
    VectorType,
)
from xdsl.dialects.utils.bit_enum_attribute import BitEnumAttribute
from xdsl.ir import Attribute, Operation


class Untranslatable(Exception):
    """This walk cannot translate `op` (the function goes the dialect route)."""

    def __init__(self, op: Operation | None, why: str):
        super().__init__(f"{op.name if op is not None else 'module'}: {why}")
        self.op = op


# ------------------------------------------------------------------------ types
_FLOAT_TEXT: dict[type[Attribute], str] = {
    Float16Type: "half", Float32Type: "float", Float64Type: "double"}


def type_text(t: Attribute, op: Operation | None = None) -> str:
    """LLVM's spelling of loop-IR type `t`: index -> i64, a static identity-layout memref
    -> ptr (bare pointer), integers and f16/f32/f64 as themselves. What xDSL's
    `convert_type` does not translate (bf16, n-d vectors, dynamic memrefs) is Untranslatable:
    the dialect route then reports it as it always did."""
    text = _TYPES.get(t)
    if text is None:
        if isinstance(t, IndexType):
            text = "i64"
        elif isinstance(t, IntegerType):
            text = f"i{t.width.data}"
        elif type(t) in _FLOAT_TEXT:
            text = _FLOAT_TEXT[type(t)]
        elif (isinstance(t, MemRefType) and isinstance(t.layout, NoneAttr)
              and all(d >= 0 for d in t.get_shape())
              and not isinstance(t.get_element_type(), VectorType)):  # the dialect route's
            text = "ptr"
        elif (isinstance(t, VectorType) and t.get_num_dims() == 1
              and not t.get_num_scalable_dims()):
            # 1-d vectors: only the int8 kernels' VNNI products hold them
            # (`vector_ops`); every other loop stays scalar for LLVM's vectorizer
            text = f"<{t.get_shape()[0]} x {type_text(t.get_element_type(), op)}>"
        else:
            raise Untranslatable(op, f"type {t}")
        _TYPES[t] = text
    return text


_TYPES: dict[Attribute, str] = {}


def float_literal(value: float, t: str) -> str:
    """A float constant as llvmlite spells it (the double's bits in hex, the value first
    rounded to the type), so the text parses to the same constant."""
    key = (struct.pack("<d", value), t)  # by bits: -0.0 == 0.0, nan != nan
    text = _FLOATS.get(key)
    if text is None:
        import llvmlite.ir as ir

        ty = {"half": ir.HalfType, "float": ir.FloatType, "double": ir.DoubleType}[t]()
        text = _FLOATS[key] = ty.format_constant(value)
    return text


_FLOATS: dict[tuple[bytes, str], str] = {}

FLOAT_SUFFIX = {"half": "f16", "float": "f32", "double": "f64"}


def suffix(t: str) -> str:
    """LLVM's type mangling of an intrinsic name: f32, i8."""
    return FLOAT_SUFFIX.get(t, t)


# ------------------------------------------------------------------------ names
_PLAIN_NAME = re.compile(r"[-a-zA-Z$._][-a-zA-Z$._0-9]*")


def global_name(name: str) -> str:
    """`@name`, quoted and escaped where LLVM needs it."""
    if _PLAIN_NAME.fullmatch(name):
        return f"@{name}"
    escaped = "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}"
                      for b in name.encode())
    return f'@"{escaped}"'


def sorted_flags(op: Operation, name: str) -> str:
    """The names in flag set property `name` of `op` (fast-math or overflow flags),
    sorted, each followed by a space ('' for none)."""
    attr = op.properties.get(name)
    if attr is None:
        return ""
    if not isinstance(attr, BitEnumAttribute):
        raise Untranslatable(op, f"{name} = {attr} is not a set of flags")
    names = sorted(str(f) for f in attr.data)
    return "".join(f"{n} " for n in names)


# --------------------------------------------------------------- function texts
@dataclass
class FunctionText:
    """One function in LLVM IR: `define(linkage, noinline)` its definition (None for a
    declaration), `declaration` its `declare` line, `decls` what its body calls
    (name -> `declare` line)."""

    name: str
    kernel: bool
    declaration: str
    render: Callable[[str, bool], str] | None
    decls: dict[str, str] = field(default_factory=dict)

    def define(self, linkage: str = "", noinline: bool = False) -> str:
        assert self.render is not None
        return self.render(linkage, noinline)


def signature(f: func.FuncOp) -> tuple[str, list[str], list[str]]:
    """(result type, argument types, argument attributes) of `f` in LLVM."""
    ftype = f.function_type
    outs = list(ftype.outputs.data)
    if len(outs) > 1:
        raise Untranslatable(f, "several results")
    result = type_text(outs[0], f) if outs else "void"
    args = [type_text(t, f) for t in ftype.inputs.data]
    attrs = [""] * len(args)
    if f.arg_attrs is not None:
        for i, d in enumerate(f.arg_attrs.data):
            words: list[str] = []
            for key, value in d.data.items():
                if key == "llvm.noalias" and isinstance(value, UnitAttr):
                    words.append("noalias")
                else:  # xDSL's translator knows a few more; the dialect route has them
                    raise Untranslatable(f, f"argument attribute {key}")
            attrs[i] = "".join(f" {w}" for w in words)
    return result, args, attrs


def declaration_of(f: func.FuncOp) -> str:
    result, args, _ = signature(f)
    return f"declare {result} {global_name(f.sym_name.data)}({', '.join(args)})"
