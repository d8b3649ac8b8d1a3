"""Runs an accelerator program (`glow_accel` ops in a `glow_ir.func`) with numpy, checks
it and counts what it costs.

Main memory is exactly the instruction interpreter's (`InstrExecutor`, which this class
extends): a buffer per weight, one arena at the planned offsets, views, poisoning at
alloc and dealloc. Next to it, the scratchpad is one byte array of the target's
`scratchpad_bytes`, each tile a view of it at its planned `offset`, poisoned (0xFF) at the
start of a run and at every `scratchpad_free`, so two tiles the planner wrongly put on the
same bytes, or a tile read after its free, give wrong numbers (NaN) rather than lucky
stale values.

A `dma_start` copies its box when it is issued; that is only right because the checks
(hazards.py) reject every program whose result could depend on when a transfer really
happens. A compute op runs the graph evaluator's kernel of the `glow_ir` instruction it
stands for (`op.instruction_on`) on views of its tiles; an accumulating matmul / conv adds
the kernel's result (without the fused activation, with a zero bias when the conv has
none) to the destination, then applies the activation.

The program is straight-line: checks, cycles and bytes do not depend on the data, so they
are all done once, when the simulator is built (`report` is ready before any run), and a
run only executes the prepared copies and kernels.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.utils.test_value import create_ssa_value

from glow_mlir.analysis.instr_buffers import value_name
from glow_mlir.dialects import glow_accel, glow_ir
from glow_mlir.dialects.glow_ops.types import QuantizedType
from glow_mlir.ir.element_types import numpy_dtype
from glow_mlir.ir.gc_pause import paused_gc
from glow_mlir.semantics.graph_evaluator import evaluate_op
from glow_mlir.semantics.numerics import fused_activation, quantize
from glow_mlir.semantics.registry import EvaluationError, kernel_for
from glow_mlir.targets.accel import cost_model
from glow_mlir.targets.accel.errors import AccelSimulationError
from glow_mlir.targets.accel.hazards import HazardChecker, MainRegion, Transfer, box_of
from glow_mlir.targets.accel.report import AccelReport
from glow_mlir.targets.accel.timeline import Timeline
from glow_mlir.targets.interpreter.instr_interpreter import (
    InstrExecutor,
    _Memory,
    _read_only,
    instruction_step,
    op_where,
)


class AccelSimulator(InstrExecutor):
    """An accelerator program prepared once (memory, checks, cycles, kernels), run many
    times with `run(inputs)` (outputs in output-weight order). `report` is its
    `AccelReport`. Every run uses the same memory (main memory and the scratchpad), so
    concurrent runs are serialized by InstrExecutor's lock."""

    def __init__(self, module: ModuleOp, func_name: str | None = None):
        self.report = AccelReport()
        self._compiled: dict[tuple, tuple] = {}  # kernels shared by identical tile ops
        try:
            with paused_gc():  # preparing builds ~10 objects per op (see gc_pause)
                super().__init__(module, func_name)
        except AccelSimulationError:
            raise
        except EvaluationError as err:
            raise AccelSimulationError(str(err)) from None

    def run(self, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray]) -> list[np.ndarray]:
        """Outputs (copies) in the order the output weights are declared."""
        try:
            return super().run(inputs)
        except AccelSimulationError:
            raise
        except EvaluationError as err:
            raise AccelSimulationError(str(err)) from None

    # ------------------------------------------------------------------ preparation
    def _prepare(self) -> None:
        func = self.func
        target = glow_accel.target_of(func)
        if target is None:
            raise AccelSimulationError(
                f"@{func.sym_name.data} has no glow_accel.target (on the function or its "
                f"module): it is not an accelerator program")
        self.target = target
        capacity = target.value("scratchpad_bytes")
        self._scratchpad = _Memory(np.empty(capacity, np.uint8),
                                   f"the {capacity}-byte scratchpad")
        self._poison_each_run.append(self._scratchpad.raw)
        self._checker = HazardChecker(lambda op: op_where(op, func))
        self._timeline = Timeline()
        super()._prepare()
        self._checker.finish()
        self._finish_report()

    def _prepare_op(self, op: Operation) -> None:
        if isinstance(op, glow_accel.ScratchpadAllocOp):
            self._alloc(op)
        elif isinstance(op, glow_accel.ScratchpadFreeOp):
            self._checker.free(op, op.tile)
            self._steps.append((op, self._poison_step(op.tile)))
        elif isinstance(op, glow_accel.DmaStartOp):
            self._dma_start(op)
        elif isinstance(op, glow_accel.DmaWaitOp):
            done = max(self._checker.wait(op, tok).done for tok in op.tokens)
            self._timeline.wait(done)
        elif isinstance(op, glow_accel.TileOp):
            self._compute(op)
        elif isinstance(op, glow_ir.InstrOp):
            raise self._error(op, "is an instruction not converted to the accelerator (run "
                                  "convert-glow-ir-to-accel)")
        else:
            super()._prepare_op(op)
            if isinstance(op, glow_ir.AllocActivationOp):
                self._checker.poison(op, "allocates", value_name(op.result),
                                     self._region(op.result))
            elif isinstance(op, glow_ir.DeallocActivationOp):
                self._checker.poison(op, "frees", value_name(op.buffer),
                                     self._region(op.buffer))

    def _error(self, op: Operation, message: str) -> AccelSimulationError:
        """The error about `op` (its location, found only now: without one, finding the
        op's index walks the program)."""
        return AccelSimulationError(f"{op_where(op, self.func)} {message}")

    def _region(self, value: SSAValue, box=None) -> MainRegion:
        """The main-memory bytes of `value` (or of the box of it)."""
        memory, start, _ = self._where[value]
        t = value.type
        assert isinstance(t, MemRefType)
        shape = tuple(t.get_shape())
        return MainRegion(memory, start, shape, glow_ir.element_bytes(t),
                          box if box is not None else box_of([0] * len(shape), shape))

    def _alloc(self, op: glow_accel.ScratchpadAllocOp) -> None:
        offset = op.offset_value
        if offset is None:
            raise self._error(op, "has no offset: the scratchpad is not planned; run "
                                  "accel-plan-scratchpad")
        size, capacity = op.size_bytes, self._scratchpad.raw.size
        if offset < 0:
            raise self._error(op, f"puts tile {value_name(op.result)} at negative offset "
                                  f"{offset}")
        if offset + size > capacity:
            raise self._error(op, f"puts tile {value_name(op.result)} ({size} bytes at "
                                  f"offset {offset}) "
                                  f"{offset + size - capacity} bytes past the end of the "
                                  f"{capacity}-byte scratchpad")
        self._place(op.result, self._scratchpad, offset, op)
        self._checker.alloc(op, op.result, offset, size, tuple(op.result.type.get_shape()))
        self.report.scratchpad_peak_bytes = max(self.report.scratchpad_peak_bytes,
                                                offset + size)

    def _dma_start(self, op: glow_accel.DmaStartOp) -> None:
        src_value, dst_value = op.operands  # (xDSL's operand accessors are slow)
        src_box, dst_box = op.src_box, op.dst_box
        for what, value, (offs, sizes) in (("source", src_value, src_box),
                                           ("destination", dst_value, dst_box)):
            shape = self._views[value].shape
            if len(offs) != len(shape) or len(sizes) != len(shape) or any(
                    o < 0 or n <= 0 or o + n > d for o, n, d in zip(offs, sizes, shape)):
                raise self._error(op, f"box {list(offs)} + {list(sizes)} is outside the "
                                      f"{what} {value_name(value)} of shape {list(shape)}")
        is_load, tile_value, main_value = op.is_load, op.tile, op.main
        src_elems, dst_elems = box_of(*src_box), box_of(*dst_box)
        tile_box, main_box = (dst_elems, src_elems) if is_load else (src_elems, dst_elems)
        if tile_value not in self._checker.tiles:
            raise self._error(op, f"uses {value_name(tile_value)}, which is not a "
                                  f"scratchpad_alloc result")
        nbytes = op.bytes
        done = self._timeline.dma(cost_model.dma_cycles(nbytes, self.target))
        self._checker.dma_start(Transfer(
            op, op.results[0], is_load, self._checker.tiles[tile_value], tile_box,
            value_name(main_value), self._region(main_value, main_box), done))
        if is_load:
            self.report.dma_bytes_in += nbytes
        else:
            self.report.dma_bytes_out += nbytes
        src = _read_only(self._views[src_value])[
            tuple(slice(lo, hi) for lo, hi in src_elems) or ...]
        # `...` keeps a rank-0 box a view (indexing with `()` gives a scalar copy).
        dst = self._views[dst_value][tuple(slice(lo, hi) for lo, hi in dst_elems) or ...]

        def copy() -> None:
            dst[...] = src
        self._steps.append((op, copy))

    def _compute(self, op: glow_accel.TileOp) -> None:
        operands = list(op.operands)
        for v in operands:
            if v not in self._checker.tiles:
                raise self._error(op, f"uses {value_name(v)}, which is not a tile")
        self._checker.compute(op, operands[0], operands[1:], op.accumulates)
        self._timeline.compute(cost_model.compute_cycles(op, self.target))
        try:
            step = self._compute_step(op)
        except EvaluationError as err:
            raise self._error(op, str(err)) from None
        self._steps.append((op, step))

    def _compute_step(self, op: glow_accel.TileOp) -> Callable[[], None]:
        key = (op.name, op.kind, op.accumulates, tuple(v.type for v in op.operands),
               tuple(sorted(op.attributes.items(), key=lambda kv: kv[0])))
        compiled = self._compiled.get(key)
        if compiled is None:  # building detached ops is slow: once per distinct op
            compiled = self._compiled[key] = _compile(op)
        kind, full, plain, zero_bias = compiled
        views = [self._views[v] for v in op.operands]
        if zero_bias is not None:
            views.append(zero_bias)
        if kind == "data":
            return instruction_step(full, views)
        dest, srcs = views[0], [_read_only(v) for v in views[1:]]
        if not op.accumulates:
            def compute() -> None:
                (result,) = evaluate_op(full, srcs)
                dest[...] = result
            return compute

        def accumulate() -> None:
            (partial,) = evaluate_op(plain, srcs)
            with np.errstate(all="ignore"):
                dest[...] = fused_activation(full, partial + dest)
        return accumulate

    def _finish_report(self) -> None:
        r, t, func = self.report, self._timeline, self.func
        r.dma_bytes = r.dma_bytes_in + r.dma_bytes_out
        bound = func.attributes.get(glow_accel.DMA_LOWER_BOUND_ATTR)
        r.dma_lower_bound_bytes = bound.value.data if isinstance(bound, IntegerAttr) else 0
        r.cycles, r.compute_cycles = t.cycles, t.compute_cycles
        r.dma_cycles, r.overlap_cycles = t.dma_cycles, t.overlap_cycles
        r.scratchpad_bytes = self._scratchpad.raw.size


def _compile(op: glow_accel.TileOp) -> tuple:
    """(kind, op, plain, zero bias) for the tile op, on detached values:
    ('graph', graph op, the graph op without the fused activation if `op` accumulates,
    the zero bias of a conv without one) for a kernel, ('data', glow_ir instruction, None,
    None) for copy / insert / extract."""
    types = op.plain_operand_types()
    values = [create_ssa_value(t) for t in types]
    instr = op.instruction_on(values)
    zero_bias = _zero(types[3]) if isinstance(op, glow_accel.ConvOp) and not op.has_bias \
        else None
    if not isinstance(instr, glow_ir.GraphInstrOp):
        return "data", instr, None, None
    full = glow_ir.shadow_graph_op(instr)
    if kernel_for(full) is None:
        raise EvaluationError(f"has no kernel ({full.name})")
    plain = None
    if op.accumulates:
        if isinstance(types[0].get_element_type(), QuantizedType):
            raise EvaluationError("accumulates into a quantized tile, which the simulator "
                                  "does not support")
        plain = glow_ir.shadow_graph_op(op.instruction_on(values, fused_activation=False))
    return "graph", full, plain, zero_bias


def _zero(t: MemRefType) -> np.ndarray:
    """A bias that adds nothing (a quantized zero is its offset)."""
    elem = t.get_element_type()
    zeros = np.zeros(tuple(t.get_shape()), np.float64)
    if isinstance(elem, QuantizedType):
        return quantize(zeros, elem)
    return zeros.astype(numpy_dtype(elem))


def simulate(module: ModuleOp, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
             func_name: str | None = None) -> tuple[list[np.ndarray], AccelReport]:
    """Run `func_name` (default: the first `glow_ir.func`) once: outputs and report."""
    sim = AccelSimulator(module, func_name)
    return sim.run(inputs), sim.report


__all__ = ["AccelSimulator", "AccelSimulationError", "simulate"]
