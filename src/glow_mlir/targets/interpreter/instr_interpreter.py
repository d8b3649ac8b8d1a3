"""Runs a `glow_ir` function with numpy on the memory compiled code would use.

This is the reference for the instruction IR and its memory decisions. Activations live in
ONE byte arena (`activations_size` bytes), each `alloc_activation` a view of it at its
planned `offset`, so two buffers a pass or the planner wrongly put on the same bytes really
do overwrite each other. To make such a mistake show up as wrong numbers rather than as a
lucky stale value, memory that holds no live data is poisoned (every byte 0xFF: NaN for
floats, -1 or the maximum for integers): the arena and the outputs at the start of a run,
an activation's bytes at its alloc and again at its dealloc. Weights get a buffer each
(constants read-only, inputs copied in). A function that is not planned yet (no offsets)
gives each alloc a buffer of its own, so IR straight out of `lower-to-instr` runs too.

A compute instruction runs the graph evaluator's kernel on its tensor-typed shadow
(`shadow_graph_op`, built once) and stores each result into its destination, so the two
IRs cannot disagree on what an op computes. `InstrExecutor` does every static step once
(views, shadows, checks): which destination may overlap which source (only an in-place
pair on exactly the same bytes) and that every buffer lies inside its memory. A violation
is an `EvaluationError` naming the instruction and its location.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from glow_mlir.analysis.instr_buffers import aliasing_conflict
from glow_mlir.analysis.instr_buffers import value_name as _name
from glow_mlir.analysis.instr_memory import find_func
from glow_mlir.dialects import glow_ir
from glow_mlir.ir.element_types import numpy_dtype
from glow_mlir.ir.resources import resource_value
from glow_mlir.ir.text import location_text
from glow_mlir.semantics.graph_evaluator import evaluate_op
from glow_mlir.semantics.registry import DataError, EvaluationError, kernel_for

POISON = 0xFF


def op_where(op: Operation, func: glow_ir.FuncOp) -> str:
    """`file:line:col: error: 'name' op` (or the op's index in the function when it has
    no location): how every message about one op of a program starts."""
    loc = location_text(op)
    if loc is not None:
        return f"{loc}: error: '{op.name}' op"
    index = list(func.body.ops).index(op) if op.parent_block() is func.body else -1
    return f"error: '{op.name}' op (#{index} in @{func.sym_name.data})"




class _Memory:
    """One piece of memory (the arena, one weight or one unplanned alloc) and its name."""

    def __init__(self, raw: np.ndarray, what: str):
        self.raw = raw
        self.what = what


class InstrExecutor:
    """A `glow_ir.func` prepared once (memory, views, kernels, checks), run many times.

    Thread-safe by a lock, not by per-call memory: every run uses the same arena and
    weight buffers, because the prepared steps are closures bound to views of them (and
    the poisoning that makes a wrong memory plan visible needs the memory to itself). Two
    threads running at once would overwrite each other's activations, so `run` holds
    `self._lock` from binding the inputs to copying the outputs; concurrent calls are
    serialized. Per-call memory would mean preparing the views and steps again for every
    call (more than a whole run costs on small models), for little gain: the numpy
    kernels hold the GIL for most of their work. The cpu backend's native code, which
    releases the GIL, does get its own areas per call (targets/cpu/executor.py).
    """

    def __init__(self, module: ModuleOp, func_name: str | None = None):
        try:
            self.func = find_func(module, func_name)
        except KeyError as err:
            raise EvaluationError(str(err.args[0])) from None
        self.module = module  # keeps the constants' arrays alive
        self._where: dict[SSAValue, tuple[_Memory, int, int]] = {}  # memory, start, bytes
        self._views: dict[SSAValue, np.ndarray] = {}
        self._poison_each_run: list[np.ndarray] = []
        self.inputs: list[tuple[glow_ir.WeightOp, np.ndarray]] = []
        self.outputs: list[tuple[glow_ir.WeightOp, np.ndarray]] = []
        self.state: dict[str, np.ndarray] = {}  # mutable weights with a value, by name
        self._steps: list[tuple[Operation, Callable[[], None]]] = []
        self._lock = threading.Lock()  # one run at a time on the shared memory
        self._prepare()

    # ------------------------------------------------------------------ running
    def run(self, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray]) -> list[np.ndarray]:
        """Outputs (copies) in the order the output weights are declared."""
        values = self._input_list(inputs)
        with self._lock:
            return self._run_locked(values)

    def _run_locked(self, values: list) -> list[np.ndarray]:
        for raw in self._poison_each_run:
            raw.fill(POISON)
        for (weight, view), value in zip(self.inputs, values):
            view[...] = self._bind(weight, view, value)
        op: Operation | None = None
        try:
            for op, step in self._steps:  # noqa: B007 (`op` names the failing step below)
                step()
        except EvaluationError as err:
            assert op is not None
            where = op_where(op, self.func)
            if isinstance(err, DataError):  # the tools print "error:" themselves
                raise DataError(f"{where.removeprefix('error: ')} {err}") from err
            raise EvaluationError(f"{where} {err}") from err
        return [view.copy() for _, view in self.outputs]

    def _input_list(self, inputs) -> list:
        if isinstance(inputs, Mapping):
            names = [w.sym_name.data for w, _ in self.inputs]
            missing = [n for n in names if n not in inputs]
            if missing:
                raise EvaluationError(f"@{self.func.sym_name.data}: no value for input(s) "
                                      f"{', '.join(missing)}")
            return [inputs[n] for n in names]
        values = list(inputs)
        if len(values) != len(self.inputs):
            raise EvaluationError(f"@{self.func.sym_name.data} takes {len(self.inputs)} "
                                  f"inputs, got {len(values)}")
        return values

    def _bind(self, weight: glow_ir.WeightOp, view: np.ndarray, value) -> np.ndarray:
        """As the graph evaluator binds inputs: exact shape, dtype converted within its kind."""
        arr = np.asarray(value)
        where = f"@{self.func.sym_name.data} input @{weight.sym_name.data}"
        if arr.shape != view.shape:
            raise EvaluationError(f"{where} has shape {arr.shape}, expected {view.shape} "
                                  f"({weight.type})")
        if arr.dtype != view.dtype and arr.dtype.kind != view.dtype.kind:
            raise EvaluationError(f"{where} has dtype {arr.dtype}, expected {view.dtype} "
                                  f"({weight.type})")
        return arr

    # ------------------------------------------------------------------ memory
    def _prepare(self) -> None:
        func = self.func
        for weight, arg in func.weight_values():
            self._place(arg, self._weight_memory(weight), 0)
            if weight.role_name == "input":
                self.inputs.append((weight, self._views[arg]))
            elif weight.role_name == "output":
                self.outputs.append((weight, self._views[arg]))
                self._poison_each_run.append(self._where[arg][0].raw)
            elif weight.is_state:
                self.state[weight.sym_name.data] = self._views[arg]
        self._arena_memory = self._arena()
        for op in func.body.ops:
            self._prepare_op(op)

    def _prepare_op(self, op: Operation) -> None:
        """Place the memory `op` defines and append its run step (a subclass running a
        dialect of its own on the same main memory handles its ops first)."""
        func, arena = self.func, self._arena_memory
        if isinstance(op, glow_ir.AllocActivationOp):
            if arena is None:
                memory = _Memory(np.empty(op.size_bytes, np.uint8), "its own buffer")
                self._poison_each_run.append(memory.raw)
                self._place(op.result, memory, 0, op)
            else:
                assert op.offset is not None  # _arena checked every alloc
                self._place(op.result, arena, op.offset.value.data, op)
            self._steps.append((op, self._poison_step(op.result)))
        elif isinstance(op, glow_ir.DeallocActivationOp):
            self._steps.append((op, self._poison_step(op.buffer)))
        elif isinstance(op, glow_ir.TensorViewOp):
            mem, start, _ = self._where[glow_ir.root_buffer(op.result)]
            self._place(op.result, mem, start + glow_ir.view_byte_offset(op.result), op)
        elif isinstance(op, glow_ir.IfOp):
            self._check_overlaps(op)
            self._steps.append((op, self._if(op)))
        elif isinstance(op, glow_ir.LoopOp):
            self._check_overlaps(op)
            self._steps.append((op, self._loop(op)))
        elif isinstance(op, glow_ir.InstrOp):
            self._check_overlaps(op)
            self._steps.append((op, self._instruction(op)))
        else:
            raise EvaluationError(f"{op_where(op, func)} is not an instruction the "
                                  f"interpreter runs")

    def _program(self, op: Operation, block: Block) -> list[tuple[Operation, Callable]]:
        """The steps of a program of `op` (a branch, a loop body) whose arguments view the
        memory of the operands they stand for."""
        for arg, outer in zip(block.args, op.operands):
            memory, start, _ = self._where[outer]
            self._place(arg, memory, start)
        saved, self._steps = self._steps, []
        try:
            for inner in block.ops:
                self._prepare_op(inner)
            return self._steps
        finally:
            self._steps = saved

    def _loop(self, op: glow_ir.LoopOp) -> Callable[[], None]:
        """The step running the body while the number is below the trip count and the
        condition holds, the number written before each iteration."""
        steps = self._program(op, op.block)
        number = self._views[op.number].reshape(-1)
        cond_out = self._views[op.cond_out].reshape(-1)
        limit = self._views[op.max_trips].reshape(-1)
        first = self._views[op.cond].reshape(-1)

        def run_loop() -> None:
            i, go = 0, bool(first[0])
            while i < limit[0] and go:
                number[0] = i
                for _, step in steps:
                    step()
                go = bool(cond_out[0])
                i += 1
        return run_loop

    def _if(self, op: glow_ir.IfOp) -> Callable[[], None]:
        """The step running the branch the condition picks: each branch's arguments view
        the memory of the operands they stand for, its ops are prepared as the program's."""
        then_steps, else_steps = (self._program(op, block) for block in op.branches())
        cond = self._views[op.cond].reshape(-1)

        def run_if() -> None:
            for _, step in then_steps if cond[0] else else_steps:
                step()
        return run_if

    def _weight_memory(self, weight: glow_ir.WeightOp) -> _Memory:
        what = f"weight @{weight.sym_name.data}"
        dtype = numpy_dtype(weight.type.get_element_type())
        if weight.value is None:
            return _Memory(np.empty(glow_ir.buffer_bytes(weight.type), np.uint8), what)
        array = resource_value(weight.value, weight)
        if weight.is_state:  # its own copy, kept (and updated) between runs
            return _Memory(np.array(array, dtype=dtype).reshape(-1).view(np.uint8), what)
        raw = np.ascontiguousarray(array, dtype=dtype).reshape(-1).view(np.uint8).view()
        raw.flags.writeable = False  # the verifier forbids writes; a kernel bug must not
        return _Memory(raw, what)

    def _arena(self) -> _Memory | None:
        """The activation arena if the function is planned, else None."""
        func = self.func
        allocs = [op for op in func.body.walk() if isinstance(op, glow_ir.AllocActivationOp)]
        planned = [op for op in allocs if op.offset is not None]
        if func.activations_size is None and not planned:
            return None
        for op in allocs:
            if op.offset is None:
                raise EvaluationError(f"{op_where(op, func)} has no offset, but the function "
                                      f"is planned (other allocs or activations_size)")
        if func.activations_size is not None:
            size = func.activations_size.value.data
        else:
            size = max(op.offset.value.data + op.size_bytes  # type: ignore[union-attr]
                       for op in allocs)
        arena = _Memory(np.empty(size, np.uint8), f"the {size}-byte activation arena")
        self._poison_each_run.append(arena.raw)
        return arena

    def _place(self, value: SSAValue, memory: _Memory, start: int,
               op: Operation | None = None) -> None:
        t = value.type
        assert isinstance(t, MemRefType)
        nbytes = glow_ir.buffer_bytes(t)
        if start < 0 or start + nbytes > memory.raw.size:
            raise EvaluationError(
                f"{op_where(op, self.func) if op is not None else 'error:'} puts "
                f"{nbytes} bytes at byte {start}, outside {memory.what} "
                f"({memory.raw.size} bytes)")
        dtype = numpy_dtype(t.get_element_type())
        view = memory.raw[start:start + nbytes].view(dtype).reshape(tuple(t.get_shape()))
        self._where[value] = (memory, start, nbytes)
        self._views[value] = view

    def _poison_step(self, value: SSAValue) -> Callable[[], None]:
        mem, start, nbytes = self._where[value]
        raw = mem.raw[start:start + nbytes]
        return lambda: raw.fill(POISON)

    # ------------------------------------------------------------------ instructions
    def _check_overlaps(self, op: glow_ir.InstrOp) -> None:
        """A destination may share bytes with a source only as an in-place pair covering
        exactly the same bytes; two destinations never."""
        def place(k: int) -> tuple[_Memory, int, int]:
            mem, start, nbytes = self._where[op.operands[k]]
            return mem, start, start + nbytes

        conflict = aliasing_conflict(op, place)
        if conflict is None:
            return
        w, r = conflict
        wv, rv = op.operands[w], op.operands[r]
        (mem, ws, wn), (_, rs, rn) = self._where[wv], self._where[rv]
        role = "destination" if op.kinds()[r].writes else "source"
        raise EvaluationError(
            f"{op_where(op, self.func)} destination #{w} ({_name(wv)}, bytes "
            f"[{ws}, {ws + wn})) overlaps {role} #{r} ({_name(rv)}, bytes "
            f"[{rs}, {rs + rn})) in {mem.what}")

    def _instruction(self, op: glow_ir.InstrOp) -> Callable[[], None]:
        try:
            return instruction_step(op, [self._views[v] for v in op.operands])
        except EvaluationError as err:
            raise EvaluationError(f"{op_where(op, self.func)} {err}") from None


def instruction_step(op: glow_ir.InstrOp, views: list[np.ndarray]) -> Callable[[], None]:
    """The run step of instruction `op` on `views` of its operands (destination first):
    shared with the accelerator simulator, whose compute ops run the same kernels.
    `EvaluationError` (without the op's location) when nothing runs `op`."""
    if isinstance(op, glow_ir.GraphInstrOp):
        return _compute(op, views)
    dest, src = views
    src = _read_only(src)
    if isinstance(op, glow_ir.CopyOp):
        def copy() -> None:
            dest[...] = src
        return copy
    if isinstance(op, glow_ir.ExtractTensorOp):
        box = tuple(slice(o, o + n) for o, n in zip(op.offsets(), dest.shape))

        def extract() -> None:
            dest[...] = src[box]
        return extract
    if isinstance(op, glow_ir.InsertTensorOp):
        axis, boxes = op.axis(), []
        for k in range(op.count()):
            boxes.append(tuple(
                slice(o + (k * n if i == axis else 0), o + (k * n if i == axis else 0) + n)
                for i, (o, n) in enumerate(zip(op.offsets(), src.shape))))

        def insert() -> None:
            for box in boxes:
                dest[box] = src
        return insert
    raise EvaluationError("is not an instruction the interpreter runs")


def _compute(op: glow_ir.GraphInstrOp, views: list[np.ndarray]) -> Callable[[], None]:
    shadow = glow_ir.shadow_graph_op(op)
    if kernel_for(shadow) is None:
        raise EvaluationError(f"has no kernel ({shadow.name})")
    dests = views[: op.RESULTS]
    srcs = [_read_only(v) for v in views[op.RESULTS:]]

    def compute() -> None:
        for dest, result in zip(dests, evaluate_op(shadow, srcs)):
            dest[...] = result
    return compute


def _read_only(view: np.ndarray) -> np.ndarray:
    """A view a kernel cannot write through (sources are @in)."""
    v = view.view()
    v.flags.writeable = False
    return v


def run_instr_module(module: ModuleOp, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
                     func_name: str | None = None) -> list[np.ndarray]:
    """Run `func_name` (default: the first `glow_ir.func`) once on `inputs` (positional in
    input-weight order, or by weight name); outputs in output-weight order."""
    return InstrExecutor(module, func_name).run(inputs)


__all__ = ["InstrExecutor", "run_instr_module", "instruction_step", "op_where", "POISON"]
