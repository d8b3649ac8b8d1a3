"""`convert-glow-ir-to-accel{scratchpad-kib=N}`: every compute instruction of a planned
`glow_ir.func` becomes tiled accelerator code in its place.

Main memory stays `glow_ir` (weights, planned activations, views); each instruction is
replaced by tile steps (`steps.py`): scratchpad tiles, blocking DMA loads, the compute
unit's op on the tiles, blocking stores, frees. Each step's tiles fit half the scratchpad
(a matmul's accumulator counts once and only its streamed A and B chunks twice), so
`accel-double-buffer` can overlap two steps, and the tile sizes of each instruction
family keep its DMA bytes near the fewest possible in few transfers (`tiling.py`: within
10% of the fewest bytes, the least DMA engine time counting the target's per-transfer
latency). One module per family:

    matmul.py       mat_mul: output-stationary tiles, k-chunks accumulated
    windows.py      convolution, max_pool, avg_pool: output tiles with input halos and
                    per-tile pads, input-channel chunks accumulated
    elementwise.py  element-wise kinds, batched_add, copy: 1-D chunks / row blocks
    data.py         transpose, broadcast, splat, insert/extract (DMA boxes), reductions,
                    and the whole-buffer step for what cannot be split
    epilogue.py     a convolution or matmul with the element-wise instructions after it
                    (analysis.epilogue_fusion) finished on its output tiles before their
                    store; `fuse-epilogues=false` converts each instruction alone

A function without instructions is left alone. Any other gets `glow_accel.target`
(from the option when it has none, nor its module) and `glow_accel.dma_lower_bound` (the sum of `analysis.accel_traffic`'s bound
over its instructions). Instructions the accelerator has no unit for, and instructions
whose smallest step does not fit, fail the pass naming the instruction.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from glow_mlir.analysis.accel_traffic import function_lower_bound
from glow_mlir.analysis.epilogue_fusion import epilogues, is_window_tileable
from glow_mlir.analysis.instr_memory import glow_ir_funcs
from glow_mlir.conversion.glow_ir_to_accel import data, elementwise, matmul, windows
from glow_mlir.conversion.glow_ir_to_accel.epilogue import convert_fused
from glow_mlir.conversion.glow_ir_to_accel.errors import PASS, unsupported
from glow_mlir.conversion.glow_ir_to_accel.steps import Converter, Inserter, emit_steps
from glow_mlir.conversion.glow_ir_to_accel.tiling import Budget
from glow_mlir.dialects import glow, glow_accel, glow_ir
from glow_mlir.dialects.glow_ops.traits import AccelUnit, accel_unit
from glow_mlir.ir.gc_pause import paused_gc
from glow_mlir.ir.text import DiagnosticError, Diagnostics


def _windowed(tiled: Converter) -> Converter:
    """Window tiling for NCHW single-group ops, whole buffers otherwise."""
    def convert(instr, at, budget):
        return (tiled if is_window_tileable(instr) else data.convert_whole)(instr, at, budget)

    return convert


_I = glow_ir.instruction_of

CONVERTERS: dict[type[glow_ir.InstrOp], Converter] = {
    _I(glow.MatMulOp): matmul.convert_mat_mul,
    _I(glow.ConvolutionOp): _windowed(windows.convert_convolution),
    _I(glow.BatchedAddOp): elementwise.convert_batched_add,
    glow_ir.CopyOp: elementwise.convert_copy,
    _I(glow.TransposeOp): data.convert_transpose,
    _I(glow.BroadcastOp): data.convert_broadcast,
    _I(glow.SplatOp): data.convert_splat,
    glow_ir.ExtractTensorOp: data.convert_extract,
    glow_ir.InsertTensorOp: data.convert_insert,
}
"""The converters of particular instructions; the others by their unit (`BY_UNIT`)."""

BY_UNIT: dict[AccelUnit, Converter] = {
    AccelUnit.ELEMENTWISE: elementwise.convert_elementwise,
    AccelUnit.POOL: _windowed(windows.convert_pool),
    AccelUnit.REDUCE: data.convert_reduce,
}
"""An instruction's converter by its op's trait `OnAccelUnit`."""


NO_UNIT = ("has no accelerator unit (the accel backend's graph pipeline lowers it, or it "
           "should not reach this pass)")


def without_unit(fn: glow_ir.FuncOp) -> list[glow_ir.InstrOp]:
    """The instructions of `fn` that no accelerator unit runs (no converter): the accel
    backend's graph pipeline lowers their ops, so they come from a program made for
    another backend."""
    return [op for op in fn.body.ops if isinstance(op, glow_ir.InstrOp)
            and not isinstance(op, glow_accel.TileOp) and _converter(op) is None]


def _converter(instr: glow_ir.InstrOp) -> Converter | None:
    """The instruction's own converter, else its unit's; None when no unit runs it."""
    conv = CONVERTERS.get(type(instr))
    if conv is None:
        conv = BY_UNIT.get(accel_unit(instr))  # type: ignore[arg-type]
    return conv


def converter_for(instr: glow_ir.InstrOp) -> Converter:
    conv = _converter(instr)
    if conv is None:
        raise unsupported(instr, NO_UNIT)
    return conv


def target_for(fn: glow_ir.FuncOp, scratchpad_kib: int) -> glow_accel.TargetAttr:
    """The function's (or its module's) target, else one made from the option, which is
    then recorded on the function."""
    target = glow_accel.target_of(fn)
    if target is None:
        target = glow_accel.TargetAttr.make(scratchpad_bytes=scratchpad_kib * 1024)
        fn.attributes[glow_accel.TARGET_ATTR] = target
    return target


def convert_function(fn: glow_ir.FuncOp, scratchpad_kib: int,
                     fuse_epilogues: bool = True) -> None:
    """Convert every instruction of `fn` in place (see the module docstring). A
    function without instructions is left as it is (no target, no bound)."""
    instrs = [op for op in fn.body.ops if isinstance(op, glow_ir.InstrOp)
              and not isinstance(op, glow_accel.TileOp)]  # tile ops are converted already
    if not instrs:
        return
    problems = Diagnostics()  # every instruction must be convertible before anything changes
    for instr in without_unit(fn):
        problems.error(instr, NO_UNIT)
    problems.check()
    target = target_for(fn, scratchpad_kib)
    budget = Budget(target.value("scratchpad_bytes"), target.value("alignment"),
                    target.value("dma_latency") * target.value("dma_bytes_per_cycle"))
    found = epilogues(list(fn.body.ops)) if fuse_epilogues else {}
    fused: list = []
    inside: set = set()  # the instructions of the fused epilogues
    for instr in instrs:
        if instr in inside:
            continue  # it runs in its producer's tiles
        at = Inserter(instr)
        ep = found.get(instr)
        try:  # an instruction that does not fit is reported with all the others
            steps = convert_fused(ep, at, budget, converter_for, target) \
                if ep is not None else None
            if steps is not None:
                fused.append(ep)
                inside.update(ep.instrs)  # type: ignore[union-attr]
            else:  # no epilogue, or no room for one: the instruction alone
                steps = converter_for(instr)(instr, at, budget)
        except DiagnosticError as err:
            problems.errors += err.diagnostics
            continue
        emit_steps(at, steps)
    problems.check()
    fn.attributes[glow_accel.DMA_LOWER_BOUND_ATTR] = IntegerAttr(
        function_lower_bound(fn, target, fused), i64)
    for instr in instrs:
        instr.detach()
        instr.erase()


@dataclass(frozen=True)
class ConvertGlowIRToAccelPass(ModulePass):
    """Tile every instruction to the scratchpad (see the module docstring)."""

    name = "convert-glow-ir-to-accel"

    scratchpad_kib: int = 256
    fuse_epilogues: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.scratchpad_kib <= 0:
            raise PassFailedException(
                f"{PASS}: scratchpad-kib must be positive, got {self.scratchpad_kib}")
        with paused_gc():  # see gc_pause: collection is half the time on big programs
            for fn in glow_ir_funcs(op):
                convert_function(fn, self.scratchpad_kib, self.fuse_epilogues)
