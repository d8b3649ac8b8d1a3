"""The three memory areas of a compiled entry point as plain data (Glow's bundle API):
the constant area's bytes, the mutable area's size and where each input and output sits
in it, the activation area's size. What a call needs, without the IR: `Areas` builds one
from a planned `glow_ir.func`, a saved model (`runtime/saved_model.py`) from its manifest,
which is why this module imports numpy only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Slot:
    """An input or output in the mutable area: its array and its bytes."""

    dtype: np.dtype
    shape: tuple[int, ...]
    offset: int
    size: int

    def as_dict(self) -> dict:
        return {"dtype": self.dtype.name, "shape": list(self.shape), "offset": self.offset,
                "size": self.size}

    @classmethod
    def from_dict(cls, d: dict) -> Slot:
        return cls(dtype_named(d["dtype"]), tuple(int(n) for n in d["shape"]),
                   int(d["offset"]), int(d["size"]))


def dtype_named(name: str) -> np.dtype:
    """The numpy dtype called `name`, ml_dtypes' low-precision ones included (bfloat16,
    float8_*: numpy does not know their names until ml_dtypes registers them)."""
    try:
        return np.dtype(name)
    except TypeError:
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))


ZERO_ALL_ON_REFILL = False
"""Switch (A/B): `AreaPlan.refill` zeroes the whole mutable area before copying the
inputs in (the former code), not only the bytes the inputs leave."""


class AreaPlan:
    """The constant area (filled), and the sizes and slots to make a mutable area and an
    activation area per call. `state_slots` (name -> slot and initial bytes) are the
    mutable weights with a value, kept between calls: a program with state has one
    mutable area for its life (`new_state_area`), not one per call."""

    def __init__(self, constant: np.ndarray, constant_size: int, mutable_size: int,
                 activations_size: int, alignment: int, input_slots: Sequence[Slot],
                 output_slots: Sequence[Slot],
                 state_slots: Mapping[str, tuple[Slot, np.ndarray]] | None = None):
        self.constant = constant
        self.constant_size = constant_size
        self.mutable_size = mutable_size
        self.activations_size = activations_size
        self.alignment = alignment
        self.input_slots = list(input_slots)
        self.output_slots = list(output_slots)
        self.state_slots = dict(state_slots or {})

    def new_state_area(self) -> np.ndarray:
        """A mutable area holding the state's initial values (inputs and outputs zeroed)."""
        area = np.zeros(max(self.mutable_size, 1), np.uint8)
        for s, data in self.state_slots.values():
            area[s.offset:s.offset + s.size] = data
        return area

    def state_views(self, area: np.ndarray) -> dict[str, np.ndarray]:
        """The state weights in mutable area `area`, by name (views: writable, live)."""
        return {n: area[s.offset:s.offset + s.size].view(s.dtype).reshape(s.shape)
                for n, (s, _) in self.state_slots.items()}

    def fill_inputs(self, area: np.ndarray, inputs: Sequence[np.ndarray]) -> None:
        for s, x in zip(self.input_slots, inputs):
            area[s.offset:s.offset + s.size] = \
                np.ascontiguousarray(x, dtype=s.dtype).reshape(-1).view(np.uint8)

    def refill(self, area: np.ndarray, inputs: Sequence[np.ndarray]) -> None:
        """Make a used mutable area what `new_mutable(inputs)` makes: the bytes no input
        covers zeroed (`uncovered`), the inputs copied in. Zeroing all of it first
        (`ZERO_ALL_ON_REFILL`) wrote the inputs' bytes twice: an element-wise chain on
        a 1x256x56x56 input spent ~1/3 of its call outside the kernel, serial."""
        if ZERO_ALL_ON_REFILL:
            area.fill(0)
        else:
            for start, end in self.uncovered():
                area[start:end] = 0
        self.fill_inputs(area, inputs)

    def uncovered(self) -> list[tuple[int, int]]:
        """The byte ranges [start, end) of the mutable area that no input slot covers
        (outputs, padding, inputs that are also outputs excepted), in order."""
        ranges = self.__dict__.get("_uncovered")
        if ranges is None:
            ranges, at = [], 0
            for s in sorted(self.input_slots, key=lambda s: s.offset):
                if s.offset > at:
                    ranges.append((at, s.offset))
                at = max(at, s.offset + s.size)
            size = max(self.mutable_size, 1)
            if at < size:
                ranges.append((at, size))
            self._uncovered = ranges
        return ranges

    def new_mutable(self, inputs: Sequence[np.ndarray]) -> np.ndarray:
        """A mutable area holding `inputs` (in input order), outputs zeroed."""
        area = np.zeros(max(self.mutable_size, 1), np.uint8)
        self.fill_inputs(area, inputs)
        return area

    def new_activations(self) -> np.ndarray:
        return np.empty(max(self.activations_size, 1), np.uint8)

    @staticmethod
    def slot_view(area: np.ndarray, s: Slot) -> np.ndarray:
        """Slot `s` of mutable area `area` as its array (a view: writable, live)."""
        return area[s.offset:s.offset + s.size].view(s.dtype).reshape(s.shape)

    def read_outputs(self, mutable: np.ndarray) -> list[np.ndarray]:
        """Copies of the outputs (in output order) out of a mutable area."""
        return [mutable[s.offset:s.offset + s.size].view(s.dtype).reshape(s.shape).copy()
                for s in self.output_slots]

    def sizes(self) -> dict[str, int]:
        return {"constant_size": self.constant_size, "mutable_size": self.mutable_size,
                "activations_size": self.activations_size, "alignment": self.alignment}
