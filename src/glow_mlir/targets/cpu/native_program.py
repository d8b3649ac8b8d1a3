"""`NativeProgram`: a compiled entry point and the memory areas it runs on. What the cpu
backend (`executor.CpuExecutor`), the accelerator's native path and a loaded saved model
run; numpy and ctypes only, so a saved model runs without the compiler imported."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from glow_mlir.targets.cpu import area_plan

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from glow_mlir.analysis.memory_report import MemoryReport
    from glow_mlir.targets.cpu.area_plan import AreaPlan
    from glow_mlir.targets.cpu.engine import NativeEntry
    from glow_mlir.targets.cpu.trace import Tracer

_MAKING_STATE = threading.Lock()  # one state area per program, even when two runs start


class NativeProgram:
    """Entry point `name` (`entry`, its engine) and its `areas`: each call runs on a
    mutable area (inputs in, the rest zeroed) and an activation area of its own, so calls
    may run in parallel; the areas of a finished call are kept for the next (`_spare`),
    as onnxruntime keeps its arena: fresh ones, as large allocations, are fresh pages
    that every kernel writing one first faults in (whisper_encoder's 115 MB of
    activations: 533 ms of CPU time per call against 500 ms on the same areas). A program
    with state (`areas.state_slots`) has one of each, and calls take a lock.
    `memory` is the plan's `MemoryReport`; `module` the LLVM-dialect module when the
    code was compiled in this process (None for a saved model)."""

    name: str
    areas: AreaPlan
    entry: NativeEntry
    memory: MemoryReport | None = None
    module: ModuleOp | None = None
    num_threads: int | None = None
    """The threads the code was compiled for (None: unknown, a model saved without it)."""
    tracer: Tracer | None = None
    """With `compile(..., trace=True)`: the kernel times of every run (`trace.py`)."""

    def __init__(self, name: str, areas: AreaPlan, entry: NativeEntry,
                 memory: MemoryReport | None = None):
        self.name, self.areas, self.entry, self.memory = name, areas, entry, memory

    _state: tuple[np.ndarray, np.ndarray, threading.Lock] | None = None

    def _stateful(self) -> tuple[np.ndarray, np.ndarray, threading.Lock]:
        """A program with state runs on one mutable area (and one activation area) for its
        life: the state stays in it between calls, nothing is copied in or out."""
        with _MAKING_STATE:
            if self._state is None:
                self._state = (self.areas.new_state_area(), self.areas.new_activations(),
                               threading.Lock())
        return self._state

    def state(self) -> dict[str, np.ndarray]:
        """The state weights by name: live views of the mutable area (empty without)."""
        if not self.areas.state_slots:
            return {}
        return self.areas.state_views(self._stateful()[0])

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        if self.areas.state_slots:
            mutable, activations, lock = self._stateful()
            with lock:
                self.areas.fill_inputs(mutable, inputs)
                return self._call(mutable, activations)
        if not BOUND_AREAS:
            mutable, activations = self._take_areas(inputs)
            try:
                return self._call(mutable, activations)
            finally:
                with self._spare_lock:
                    self._spare.append((mutable, activations))
        bound = self._take_bound(inputs)
        try:
            status = self.entry(self._constant_address(), *bound.addresses)
            if status != 0:
                raise RuntimeError(f"@{self.name} returned {status}")
            if self.tracer is not None:
                self.tracer.record(bound.activations)
            return [view.copy() for view in bound.outputs]
        finally:
            with self._spare_lock:
                self._spare.append(bound)

    def _call(self, mutable: np.ndarray, activations: np.ndarray) -> list[np.ndarray]:
        """The entry point on these areas (inputs already in `mutable`): its outputs."""
        status = self.entry(self.areas.constant.ctypes.data, mutable.ctypes.data,
                            activations.ctypes.data)
        if status != 0:
            raise RuntimeError(f"@{self.name} returned {status}")
        if self.tracer is not None:
            self.tracer.record(activations)
        return self.areas.read_outputs(mutable)

    _SPARE_MAX = 2
    """Areas kept between calls at most (one per call that ran at the same time)."""
    _spare: list[BoundAreas | tuple[np.ndarray, np.ndarray]]
    _spare_lock: threading.Lock

    def _spares(self) -> list[BoundAreas | tuple[np.ndarray, np.ndarray]]:
        if "_spare" not in self.__dict__:
            with _MAKING_STATE:
                if "_spare" not in self.__dict__:
                    self._spare_lock = threading.Lock()
                    self._spare = []
        return self._spare

    def _take_areas(self, inputs: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """A mutable area holding `inputs` (the rest zeroed, as `new_mutable` makes it)
        and an activation area: a finished call's, or new ones."""
        spares = self._spares()
        with self._spare_lock:
            spare = spares.pop() if spares else None
            del spares[self._SPARE_MAX - 1:]  # at most _SPARE_MAX with this call's
        if spare is None:
            return self.areas.new_mutable(inputs), self.areas.new_activations()
        mutable, activations = (spare.mutable, spare.activations) \
            if isinstance(spare, BoundAreas) else spare
        self.areas.refill(mutable, inputs)
        return mutable, activations

    def _take_bound(self, inputs: Sequence[np.ndarray]) -> BoundAreas:
        """`_take_areas` as a `BoundAreas`: a finished call's, refilled, or new ones."""
        spares = self._spares()
        with self._spare_lock:
            spare = spares.pop() if spares else None
            del spares[self._SPARE_MAX - 1:]
        if spare is None:
            return BoundAreas(self.areas, self.areas.new_mutable(inputs),
                              self.areas.new_activations())
        if not isinstance(spare, BoundAreas):  # left by `_take_areas` (the switch off)
            spare = BoundAreas(self.areas, *spare)
        spare.refill(inputs)
        return spare

    def _constant_address(self) -> int:
        constant = self.areas.constant
        known = self.__dict__.get("_constant")
        if known is None or known[0] is not constant:
            known = self._constant = (constant, constant.ctypes.data)
        return known[1]


BOUND_AREAS = True
"""Switch (A/B): `NativeProgram.run` keeps with each pair of areas what every call on them
needs (`BoundAreas`) instead of making it per call (`_take_areas`, `_call`). mlp's run()
took ~25 us of thread CPU time, ~11 of them outside its kernels: three `.ctypes.data`
2.9 us, the inputs' copy 1.3 (0.3 into a typed view), the outputs' 1.2 (0.2).
`python benchmarks/run_overhead.py --models mlp,lenet,eltwise_chain,bert_layer` (one
thread, CPU time, against onnxruntime in the same run): mlp 1.11 -> 0.79, lenet 0.93 ->
0.70, eltwise_chain 0.52 -> 0.50, bert_layer 0.920 -> 0.915."""


class BoundAreas:
    """A mutable and an activation area of one call and what every call on them needs,
    made once: their addresses, typed views of the inputs and outputs in the mutable
    area, and of the bytes no input covers (zeroed before each call, `AreaPlan.refill`)."""

    __slots__ = ("mutable", "activations", "addresses", "inputs", "outputs", "uncovered")

    def __init__(self, plan: AreaPlan, mutable: np.ndarray, activations: np.ndarray):
        self.mutable, self.activations = mutable, activations
        self.addresses = (mutable.ctypes.data, activations.ctypes.data)
        self.inputs = [plan.slot_view(mutable, s) for s in plan.input_slots]
        self.outputs = [plan.slot_view(mutable, s) for s in plan.output_slots]
        self.uncovered = [mutable[a:b] for a, b in plan.uncovered()]

    def refill(self, inputs: Sequence[np.ndarray]) -> None:
        """What `AreaPlan.refill` does to the mutable area."""
        if area_plan.ZERO_ALL_ON_REFILL:
            self.mutable.fill(0)
        else:
            for zeros in self.uncovered:
                zeros.fill(0)
        for view, x in zip(self.inputs, inputs):
            if getattr(x, "shape", None) != view.shape:  # same elements, another shape
                x = np.reshape(np.asarray(x), view.shape)
            view[...] = x  # numpy's assignment casts as `fill_inputs`' astype does
