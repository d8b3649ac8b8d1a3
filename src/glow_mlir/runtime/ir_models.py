"""Models written as IR rather than ONNX: a `.mlir` file (what glow-opt reads and writes,
what `glow-compile --emit graph|optimized-graph|instr` prints) or a parsed module, run
by `compile()` and glow-run like an ONNX model.

A module to run holds one function, either

- a `glow` graph: a `func.func` of `glow` ops, which goes through the graph and
  instruction pipelines as an imported ONNX model does; or
- a `glow_ir` program: a `glow_ir.func`. A planned one (`plan-memory` set its arena
  size and offsets) runs as it is, after `verify-instr` checks its rules; an unplanned
  one (written by hand) goes through the instruction pipeline, which plans it.

Anything else is refused where it is, `file:line:col: error: ...`, before any pass runs:
a pass would otherwise fail on a foreign op somewhere far from the user's mistake.
Weights are the module's `dense_resource` blobs (`{-# dialect_resources #-}`).
"""

from __future__ import annotations

import os

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation

from glow_mlir.dialects import glow_ir
from glow_mlir.ir.errors import UserError, read_bytes
from glow_mlir.ir.text import OpDiagnostic

_WHAT_RUNS = ("a module to run holds one func.func of glow ops (a graph) or one "
              "glow_ir.func (a program)")


def is_mlir_path(model: object) -> bool:
    return isinstance(model, (str, os.PathLike)) and os.fspath(model).endswith(".mlir")


def load_mlir(path: str | os.PathLike) -> ModuleOp:
    """Parse and verify a `.mlir` file; every op located at file:line:col."""
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.text import parse_module, verify_module

    name = os.fspath(path)
    raw = read_bytes(name)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UserError(f"'{name}' is not UTF-8 text (byte 0x{raw[err.start]:02x} at "
                        f"offset {err.start}): a model in IR is a .mlir text file") from None
    module = parse_module(make_context(), text, name)
    verify_module(module)
    return module


def runnable_function(module: ModuleOp, source: str | None = None) -> func.FuncOp | glow_ir.FuncOp:
    """The module's one function, a `glow` graph or a `glow_ir` program; an OpDiagnostic at
    the first op that is not (another dialect's op, a second function), or a UserError for
    a module without a function (naming `source`, the file, when there is one)."""
    found: func.FuncOp | glow_ir.FuncOp | None = None
    for op in module.ops:
        if not isinstance(op, (func.FuncOp, glow_ir.FuncOp)):
            raise OpDiagnostic(op, f"is not a function of the glow or glow_ir dialect: "
                                   f"{_WHAT_RUNS}")
        if found is not None:
            raise OpDiagnostic(op, f"is a second function (after @{found.sym_name.data}): "
                                   f"{_WHAT_RUNS}")
        found = op
    if found is None:
        where = f"{source}: " if source else ""
        raise UserError(f"{where}the module has no function to run: {_WHAT_RUNS}")
    if isinstance(found, func.FuncOp):
        _check_graph(found)
    else:
        _check_program(found)
    return found


def _check_graph(fn: func.FuncOp) -> None:
    if not fn.body.blocks:
        raise OpDiagnostic(fn, "has no body: a graph to run is a function with glow ops")
    for i, t in enumerate((*fn.function_type.inputs.data, *fn.function_type.outputs.data)):
        if not isinstance(t, TensorType):
            n = len(fn.function_type.inputs.data)
            what = f"argument #{i}" if i < n else f"result #{i - n}"
            raise OpDiagnostic(fn, f"{what} has type {t}: a graph's inputs and outputs "
                                   f"are tensors")
    _check_dialect(fn.body.ops, "glow.", "a graph to run is made of glow ops",
                   allowed=(func.ReturnOp,))


def _check_program(fn: glow_ir.FuncOp) -> None:
    _check_dialect(fn.body.ops, "glow_ir.", "a program to run is made of glow_ir "
                                            "instructions")


def _check_dialect(ops, prefix: str, why: str, allowed: tuple[type[Operation], ...] = ()) -> None:
    for op in ops:
        if not op.name.startswith(prefix) and not isinstance(op, allowed):
            raise OpDiagnostic(op, f"is not in the {prefix[:-1]} dialect: {why}")
