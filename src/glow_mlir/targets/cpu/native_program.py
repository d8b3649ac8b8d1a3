"""`NativeProgram`: a compiled entry point and the memory areas it runs on. What the cpu
backend (`executor.CpuExecutor`), the accelerator's native path and a loaded saved model
run; numpy and ctypes only, so a saved model runs without the compiler imported."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

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
        mutable, activations = self._take_areas(inputs)
        try:
            return self._call(mutable, activations)
        finally:
            with self._spare_lock:
                self._spare.append((mutable, activations))

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
    _spare: list[tuple[np.ndarray, np.ndarray]]
    _spare_lock: threading.Lock

    def _take_areas(self, inputs: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """A mutable area holding `inputs` (the rest zeroed, as `new_mutable` makes it)
        and an activation area: a finished call's, or new ones."""
        if "_spare" not in self.__dict__:
            with _MAKING_STATE:
                if "_spare" not in self.__dict__:
                    self._spare_lock = threading.Lock()
                    self._spare = []
        with self._spare_lock:
            spare = self._spare.pop() if self._spare else None
            del self._spare[self._SPARE_MAX - 1:]  # at most _SPARE_MAX with this call's
        if spare is None:
            return self.areas.new_mutable(inputs), self.areas.new_activations()
        mutable, activations = spare
        mutable.fill(0)
        self.areas.fill_inputs(mutable, inputs)
        return mutable, activations
