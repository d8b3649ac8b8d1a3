"""`Device`: one device the runtime runs networks on (Glow's DeviceInfo / DeviceConfig),
and the roofline the partitioner costs its ops with.

- `kind="accel"`: one accelerator, run by its own simulator (`targets/accel`): several
  accel devices are several simulators. An op's cost is the simulator's cycles for it
  (`runtime/accel_costs.py`: its unit compiled alone, counted by the simulator's cost
  model), in cycles of `clock_hz`, so the partitioner's estimate and the simulated
  cycles rank parts alike; an op outside a graph, or one that cannot run alone, falls
  back to the roofline of that cost model (`work_cycles` for compute, `dma_cycles` for
  memory). `peak_macs_per_s` and `memory_bytes_per_s` report that machine (256 MACs and
  32 bytes a cycle).
- `kind="cpu"`: this host's native code (`backend="cpu"`, or `"interpreter"` for the
  numpy interpreter). Several cpu devices share this host's cores: a configuration for
  tests and for measuring the runtime itself, not a way to get more compute.

`link_bytes_per_s` is the bandwidth of the link a part's inputs cross when another
device computed them (PCIe 3 x16 by default); the runtime reports transfer time with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from glow_mlir.ir.errors import UserError

if TYPE_CHECKING:
    from xdsl.ir import Operation

KINDS = {"cpu": ("cpu", "interpreter"), "accel": ("accel",)}
"""Device kinds and the backends a device of the kind may run."""

ACCEL_MACS_PER_CYCLE = 256
ACCEL_DMA_BYTES_PER_CYCLE = 32


class DeviceError(UserError):
    """A device description that cannot be (a kind, a size or a rate out of range)."""


def _positive(name: str, value: object, kind: type = int) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
    if not ok or (kind is int and not isinstance(value, int)):
        what = "a positive whole number" if kind is int else "a positive number"
        raise DeviceError(f"Device {name} must be {what}, got {value!r}")



def article(word: str) -> str:
    """'a' or 'an' before `word` (as messages name device kinds: an 'accel' device)."""
    return "an" if word[:1].lower() in "aeiou" else "a"

@dataclass(frozen=True)
class Device:
    """One device: its kind, memory, and the roofline rates (module docstring)."""

    kind: str = "cpu"
    memory_bytes: int = 16 << 30
    scratchpad_kib: int = 256
    """The accelerator's scratchpad (accel only)."""
    backend: str = ""
    """The backend that compiles for it: the kind's first (`KINDS`) unless given."""
    clock_hz: float = 1e9
    peak_macs_per_s: float = 0.0
    """Peak multiply-accumulates a second (default: accel 256 a cycle; cpu 32e9)."""
    memory_bytes_per_s: float = 0.0
    """Memory bandwidth (default: accel 32 bytes a cycle; cpu 20e9)."""
    link_bytes_per_s: float = 16e9
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise DeviceError(f"Device kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        backend = self.backend or KINDS[self.kind][0]
        if backend not in KINDS[self.kind]:
            raise DeviceError(f"{article(self.kind)} '{self.kind}' device runs backend "
                              f"{' or '.join(KINDS[self.kind])}, not {backend!r}")
        object.__setattr__(self, "backend", backend)
        _positive("memory_bytes", self.memory_bytes)
        _positive("scratchpad_kib", self.scratchpad_kib)
        for rate in ("clock_hz", "link_bytes_per_s"):
            _positive(rate, getattr(self, rate), float)
        accel = self.kind == "accel"
        for rate, default in (("peak_macs_per_s", ACCEL_MACS_PER_CYCLE * self.clock_hz
                               if accel else 32e9),
                              ("memory_bytes_per_s", ACCEL_DMA_BYTES_PER_CYCLE * self.clock_hz
                               if accel else 20e9)):
            value = getattr(self, rate)
            if value == 0.0:
                object.__setattr__(self, rate, default)
            else:
                _positive(rate, value, float)

    @property
    def backend_options(self) -> dict[str, object]:
        return {"scratchpad_kib": self.scratchpad_kib} if self.backend == "accel" else {}

    def label(self, index: int) -> str:
        """`device I (kind, backend B, M MiB)`: one pair of brackets in a message."""
        return (f"device {index} ({self.kind}, backend {self.backend}, "
                f"{self.memory_bytes / 2**20:.1f} MiB)")

    def describe(self) -> str:
        mib = self.memory_bytes / 2**20
        return f"{self.kind} ({self.backend}, {mib:.1f} MiB)"

    # ------------------------------------------------------------------ partitioner
    def runs(self, op: Operation) -> bool:
        """Does this device's backend run `op` as it is (its isOpSupported)?"""
        from glow_mlir.backends import get_backend

        return get_backend(self.backend).runs(op)

    def cost(self, op: Operation) -> float:
        """The op's time in seconds: on an accel device its simulated cycles (module
        docstring), else the roofline, the slower of compute and memory."""
        from glow_mlir.analysis.node_work import node_work

        if self.kind == "accel":
            from glow_mlir.runtime.accel_costs import op_cycles

            cycles = op_cycles(op, self.scratchpad_kib)
            if cycles is not None:
                return cycles / self.clock_hz
        work = node_work(op)
        if self.kind == "accel":  # an op outside a graph, or one that cannot run alone
            from glow_mlir.targets.accel.cost_model import dma_cycles, work_cycles

            target = _accel_target(self.scratchpad_kib)
            cycles = max(work_cycles(work.macs, work.elements, target),
                         dma_cycles(work.bytes, target))
            return cycles / self.clock_hz
        return max((work.macs or work.elements) / self.peak_macs_per_s,
                   work.bytes / self.memory_bytes_per_s)

    def constant_form(self, op: Operation, index: int) -> tuple[str, int] | None:
        """(form, bytes) a constant operand of `op` takes once this device's backend
        repacks it at compile time (the cpu's Winograd filters and gemm panels), None
        when stored as it is: the partitioner counts a part's weights so."""
        if self.backend != "cpu":
            return None
        from glow_mlir.targets.cpu.packed_weights import packed_form

        return packed_form(op, index)

    def transfer_seconds(self, nbytes: int) -> float:
        """Time to move `nbytes` over this device's link."""
        return nbytes / self.link_bytes_per_s


_TARGETS: dict[int, object] = {}


def _accel_target(scratchpad_kib: int):
    """The simulator's target description for a scratchpad size (built once)."""
    t = _TARGETS.get(scratchpad_kib)
    if t is None:
        from glow_mlir.dialects import glow_accel

        t = _TARGETS[scratchpad_kib] = glow_accel.TargetAttr.make(
            scratchpad_bytes=scratchpad_kib * 1024, macs_per_cycle=ACCEL_MACS_PER_CYCLE,
            dma_bytes_per_cycle=ACCEL_DMA_BYTES_PER_CYCLE)
    return t


__all__ = ["Device", "DeviceError", "KINDS"]
