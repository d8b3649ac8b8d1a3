"""`partition{num-devices=N device-memory-kib=M strategy=memory|load-balance}`: the device
partitioner as a glow-opt pass. It does not split the module (the runtime does, with
`split.py`); it marks each op of every graph function with its part (`glow.part`) and
that part's device (`glow.device`), and the function with each part's device, bytes and
roofline cost in nanoseconds (`glow.part_devices`, `glow.part_bytes`,
`glow.part_cost_ns`), so a FileCheck test reads the plan in the IR.

The pass's devices are alike accelerators of `device-memory-kib` each, costed with the
accelerator's rates (`macs-per-cycle`, `dma-bytes-per-cycle` at 1 GHz: the runtime's
`Device(kind="accel")` defaults) over `analysis/node_work.py`'s counts, without the
simulator's fixed per-op overheads (those need `targets`, a layer above this one); they
run every op. Constants are not marked: each part that reads one gets a copy.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from glow_mlir.analysis.node_work import node_work
from glow_mlir.dialects import glow_ir
from glow_mlir.ir.text import DiagnosticError, OpDiagnostic

PART_ATTR = "glow.part"
DEVICE_ATTR = "glow.device"
PART_DEVICES_ATTR = "glow.part_devices"
PART_BYTES_ATTR = "glow.part_bytes"
PART_COST_ATTR = "glow.part_cost_ns"
STRATEGIES = ("load-balance", "memory")


@dataclass(frozen=True)
class RooflineDevice:
    """An accelerator as the partitioner sees it (module docstring)."""

    memory_bytes: int
    macs_per_s: float = 256e9
    bytes_per_s: float = 32e9
    kind: str = "accel"

    def runs(self, op: Operation) -> bool:
        return True

    def cost(self, op: Operation) -> float:
        work = node_work(op)
        compute = work.macs / self.macs_per_s if work.macs else work.elements / self.macs_per_s
        return max(compute, work.bytes / self.bytes_per_s)


@dataclass(frozen=True)
class PartitionPass(ModulePass):
    """Mark every graph function's ops with their part and device (module docstring)."""

    name: ClassVar[str] = "partition"

    num_devices: int = 1
    device_memory_kib: int = 16 << 20
    strategy: str = "memory"
    """As glow-compile's and HostManager's default: the fewest parts that fit."""
    macs_per_cycle: int = 256
    dma_bytes_per_cycle: int = 32
    report: bool = False
    """Print `partition: @f N part(s) ...` per function to stderr."""

    def __post_init__(self) -> None:
        # a ValueError here is a bad pass option to xDSL's pipeline parser: glow-opt says
        # so before reading any IR
        for field in ("num_devices", "device_memory_kib", "macs_per_cycle",
                      "dma_bytes_per_cycle"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{self.name}: {field.replace('_', '-')} must be a whole "
                                 f"number >= 1, got {value!r}")
        if self.strategy not in STRATEGIES:
            raise ValueError(f"{self.name}: strategy must be {' or '.join(STRATEGIES)}, got "
                             f"{self.strategy!r}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from glow_mlir.transforms.partition import load_balanced_plan, memory_plan

        dev = RooflineDevice(self.device_memory_kib * 1024, self.macs_per_cycle * 1e9,
                             self.dma_bytes_per_cycle * 1e9)
        devices = [dev] * self.num_devices
        make = load_balanced_plan if self.strategy == "load-balance" else memory_plan
        programs = [o for o in op.walk() if isinstance(o, glow_ir.FuncOp)]
        if programs:  # a planned program has no ops to place: it would pass unmarked
            raise DiagnosticError([OpDiagnostic(
                fn, f"{self.name} needs a `glow` graph (a func.func of glow ops), and "
                    f"@{fn.sym_name.data} is an instruction program: partition the graph "
                    f"before lower-to-instr") for fn in programs])
        for fn in [o for o in op.walk() if isinstance(o, func.FuncOp)]:
            if len(fn.body.blocks) != 1:  # declarations; control flow is not graph IR
                continue
            plan = make(fn, devices)
            for part in plan.parts:
                for o in part.ops:
                    o.attributes[PART_ATTR] = IntegerAttr(part.index, i64)
                    o.attributes[DEVICE_ATTR] = IntegerAttr(part.device, i64)
            fn.attributes[PART_DEVICES_ATTR] = DenseArrayBase.from_list(
                i64, [p.device for p in plan.parts])
            fn.attributes[PART_BYTES_ATTR] = DenseArrayBase.from_list(
                i64, [p.bytes for p in plan.parts])
            fn.attributes[PART_COST_ATTR] = DenseArrayBase.from_list(
                i64, [round(p.cost * 1e9) for p in plan.parts])
            if self.report:
                print(f"partition: @{fn.sym_name.data} {len(plan.parts)} part(s) on "
                      f"{len({p.device for p in plan.parts})} device(s), "
                      f"{plan.transfer_bytes()} bytes between parts", file=sys.stderr)


__all__ = ["PartitionPass", "RooflineDevice"]
