"""`convert-glow-ir-to-loops`: a planned `glow_ir.func` becomes the entry point

    func.func @NET(%constantWeight: memref<Cxi8>, %mutableWeight: memref<Mxi8>,
                   %activations: memref<Axi8>) -> i32

(Glow's bundle API; returns 0), whose body computes every instruction with loop nests
(`scf`, `arith`, `math`, `memref`) on `memref.view`s of those three areas at compile-time
offsets (`layout.py`). Each instruction kind has a generator, registered with
`@lowers("glow_ir.kind")` in a module of this package by concept; a program with kinds
that have none fails once, naming every missing kind and how often it occurs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.builder import Builder, InsertPoint
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter, bytes_type
from glow_mlir.conversion.glow_ir_to_loops.layout import (
    ACTIVATIONS,
    CONSTANT,
    MUTABLE,
    weight_layout,
)
from glow_mlir.dialects import glow_ir

Generator = Callable[[glow_ir.InstrOp, Emitter], None]
GENERATORS: dict[str, Generator] = {}

AREAS = (CONSTANT, MUTABLE, ACTIVATIONS)
ARG_NAMES = ("constantWeight", "mutableWeight", "activations")


def lowers(*names: str) -> Callable[[Generator], Generator]:
    """Register the loop-nest generator of instruction kinds `names`."""
    def register(fn: Generator) -> Generator:
        for name in names:
            if name in GENERATORS:
                raise ValueError(f"two loop generators for {name}")
            GENERATORS[name] = fn
        return fn

    return register


def _load_generators() -> None:
    import importlib
    import pkgutil

    import glow_mlir.conversion.glow_ir_to_loops as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("kernels_"):
            importlib.import_module(f"{pkg.__name__}.{info.name}")


def missing_kernels(fn: glow_ir.FuncOp) -> Counter:
    _load_generators()
    return Counter(op.name for op in fn.body.ops
                   if isinstance(op, glow_ir.InstrOp) and op.name not in GENERATORS)


def convert_function(fn: glow_ir.FuncOp) -> func.FuncOp:
    """The entry point computing `fn` (which must be planned)."""
    layout = weight_layout(fn)
    sizes = (layout.constant_size, layout.mutable_size, layout.activations_size)
    entry = Block(arg_types=[bytes_type(s) for s in sizes])
    for arg, name in zip(entry.args, ARG_NAMES):
        arg.name_hint = name
    base = dict(zip(AREAS, entry.args))
    em = Emitter(Builder(InsertPoint.at_end(entry)))
    for w, arg in fn.weight_values():
        place = layout.weights[w.sym_name.data]
        em.place(arg, base[place.area], place.offset)
    for op in fn.body.ops:
        if isinstance(op, glow_ir.AllocActivationOp):
            em.place(op.result, base[ACTIVATIONS], op.offset.value.data)
        elif isinstance(op, glow_ir.TensorViewOp):
            root_base, root_offset = em.places[glow_ir.root_buffer(op.result)]
            em.place(op.result, root_base, root_offset + glow_ir.view_byte_offset(op.result))
        elif isinstance(op, glow_ir.InstrOp):
            GENERATORS[op.name](op, em)
    zero = em.value(arith.ConstantOp(IntegerAttr(0, i32)))
    em.op(func.ReturnOp(zero))
    ftype = FunctionType.from_lists([a.type for a in entry.args], [i32])
    noalias = DictionaryAttr({"llvm.noalias": UnitAttr()})
    out = func.FuncOp(fn.sym_name.data, ftype, Region(entry),
                      arg_attrs=ArrayAttr([noalias, noalias, noalias]))
    for name, size in zip(("constant", "mutable", "activations"), sizes):
        out.attributes[f"glow.{name}_size"] = IntegerAttr(size, i64)
    return out


@dataclass(frozen=True)
class ConvertGlowIRToLoopsPass(ModulePass):
    """Planned glow_ir to loop nests on the three memory areas (see module docstring)."""

    name = "convert-glow-ir-to-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        funcs = [f for f in op.walk() if isinstance(f, glow_ir.FuncOp)]
        missing: Counter = Counter()
        for f in funcs:
            missing += missing_kernels(f)
            if f.activations_size is None:
                raise PassFailedException(
                    f"convert-glow-ir-to-loops: @{f.sym_name.data} has no memory plan; "
                    f"run plan-memory first")
        if missing:
            kinds = ", ".join(f"{k} ({n})" for k, n in sorted(missing.items()))
            raise PassFailedException(
                f"convert-glow-ir-to-loops: no loop generator for {kinds}")
        for f in funcs:
            new = convert_function(f)
            parent = f.parent_block()
            assert parent is not None
            parent.insert_op_before(new, f)
            f.detach()
            f.erase()
