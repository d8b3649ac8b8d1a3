"""A model as a DAG of compiled parts across devices: import, the graph pipeline, the
partitioner (`transforms/partition`), then each part compiled for its device's backend.

The whole graph is optimized once, by the graph pipeline of the first device's backend
(Glow's backend priority: the devices' order), with its unsupported-op check off; the
partitioner then gives each op to the first device kind that runs it. The parts are
compiled as they are (no second graph pipeline), so each op computes what it computes in
the unpartitioned model: on one kind of device, a partitioned model's outputs are the
single device's bit for bit (tests/unit/test_runtime_partition.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from glow_mlir.ir.errors import UserError
from glow_mlir.ir.gc_pause import paused_gc
from glow_mlir.runtime.devices import Device

if TYPE_CHECKING:
    from onnx import ModelProto
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ModuleOp

    from glow_mlir.runtime.compiled_model import CompiledModel
    from glow_mlir.transforms.partition import PartitionDag, PartitionPlan

Partition = str | Mapping[str, int]
"""`"memory"` (the default: the fewest parts that fit, one when the model fits a
device), `"load-balance"` (the busiest device's cost smallest: a part per device,
or several when memory shapes the cut; transforms/partition/balance.py), or op name -> device."""

STRATEGIES = ("memory", "load-balance")


@dataclass
class PartitionedModel:
    """The plan, its DAG of sub-functions, and each part compiled for its device."""

    plan: PartitionPlan
    dag: PartitionDag
    parts: list[CompiledModel]


def optimized_graph(model: ModelProto | str | os.PathLike | bytes | ModuleOp,
                    devices: Sequence[Device],
                    input_shapes: Mapping[str, Sequence[int] | int] | None = None) -> ModuleOp:
    """The model imported and optimized for the first device's backend, every op kept
    (a device of another kind may run what that backend does not)."""
    from glow_mlir.runtime.compiled_model import _import, optimize_graph

    if not devices:
        raise UserError("a model needs at least one device, got none")
    module, is_graph = _import(model, input_shapes)
    if not is_graph:
        raise UserError("the partitioner takes a graph (an ONNX model or a glow graph), "
                        "not a glow_ir program")
    return optimize_graph(module, devices[0].backend, check_supported=False)


def plan(module: ModuleOp, devices: Sequence[Device], partition: Partition = "memory",
         order: Sequence[int] | None = None) -> PartitionPlan:
    """The partition of the optimized graph in `module` (see `Partition`). `order` (the
    host's devices, emptiest first) is the order a strategy takes the devices in; a
    user's partition names the devices itself."""
    from xdsl.dialects import func

    from glow_mlir.transforms import partition as part

    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    if not isinstance(partition, Mapping) and len(devices) > steps(fn):
        # a part holds one op at least: devices beyond the op count per kind are never
        # used, and looking at them all cost minutes and gigabytes at 10^7 devices
        keep = _useful(devices, steps(fn), order)
        few = plan(module, [devices[i] for i in keep], partition)
        for p in few.parts:
            p.device = keep[p.device]
        few.devices = devices
        return few
    if order is not None and not isinstance(partition, Mapping):
        permuted = plan(module, [devices[i] for i in order], partition)
        for p in permuted.parts:
            p.device = order[p.device]
        permuted.devices = devices
        return permuted
    if isinstance(partition, Mapping):
        return part.user_plan(fn, devices, partition)
    if partition == "memory":
        return part.memory_plan(fn, devices)
    if partition == "load-balance":
        return part.load_balanced_plan(fn, devices)
    raise UserError(f"partition must be {' or '.join(map(repr, STRATEGIES))} or a dict of "
                    f"op name -> device index, got {partition!r}")


def steps(fn: func.FuncOp) -> int:
    """The ops of a graph function a partition cuts (not its constants nor its return):
    the most parts, so the most devices, a strategy can use."""
    from xdsl.traits import ConstantLike

    from glow_mlir.analysis.graph_memory import body_ops

    return sum(not op.has_trait(ConstantLike) for op in body_ops(fn)[0])


def _useful(devices: Sequence[Device], n: int, order: Sequence[int] | None) -> list[int]:
    """At most `n` devices of each kind, in `order` (else the most memory first, as the
    strategies take them), kinds in their first order."""
    ranked = list(order) if order is not None else sorted(
        range(len(devices)), key=lambda i: -devices[i].memory_bytes)
    taken: dict[str, int] = {}
    keep = []
    for i in ranked:
        kind = devices[i].kind
        if taken.get(kind, 0) < n:
            taken[kind] = taken.get(kind, 0) + 1
            keep.append(i)
    return sorted(keep) if order is None else keep


def compile_partitioned(model: ModelProto | str | os.PathLike | bytes | ModuleOp,
                        devices: Sequence[Device], partition: Partition = "memory",
                        input_shapes: Mapping[str, Sequence[int] | int] | None = None
                        ) -> PartitionedModel:
    """Import, optimize, partition, split and compile each part for its device."""
    from glow_mlir.ir.text import verify_module
    from glow_mlir.runtime.compiled_model import CompiledModel
    from glow_mlir.transforms.partition import split

    with paused_gc():  # as compile_model: the compile makes and drops many IR objects
        module = optimized_graph(model, devices, input_shapes)
        the_plan = plan(module, devices, partition)
        dag = split(the_plan)
        parts = []
        for sub in dag.parts:
            dev = devices[sub.device]
            verify_module(sub.module)
            parts.append(CompiledModel(sub.module, dev.backend,
                                       backend_options=dev.backend_options))
    return PartitionedModel(the_plan, dag, parts)


__all__ = ["Partition", "PartitionedModel", "STRATEGIES", "compile_partitioned", "format_plan",
           "optimized_graph", "plan"]


def format_plan(the_plan: PartitionPlan, dag: PartitionDag, title: str = "",
                device_count: int | None = None) -> str:
    """The DAG as text (`glow-compile --emit partitions`): each part's device, ops, bytes
    (weights, inputs and outputs, activations), roofline cost, and what it reads;
    `device_count`: the devices there are, when `the_plan` was given only those it
    could use."""
    from glow_mlir.transforms.partition.plan import fmt_bytes

    devices = the_plan.devices
    used = sorted({p.device for p in the_plan.parts})
    lines = [f"// {title}{': ' if title else ''}{len(the_plan.parts)} part(s) on "
             f"{len(used)} of {device_count or len(devices)} device(s), "
             f"{the_plan.strategy} partition"]
    for p, sub in zip(the_plan.parts, dag.parts):
        dev = devices[p.device]
        backend = getattr(dev, "backend", dev.kind)
        reads = ", ".join(f"part {d}" for d in p.deps) or "the graph's inputs"
        lines.append(
            f"part {p.index}: device {p.device} ({dev.kind}/{backend}), {len(p.ops)} ops, "
            f"{fmt_bytes(p.bytes)} = weights {p.weight_bytes:,} + inputs {p.input_bytes:,} + "
            f"activations and outputs {p.activation_bytes:,}; cost {p.cost * 1e6:.2f} us; "
            f"reads {reads}")
        lines.append(f"  inputs: {', '.join(sub.input_names)}")
        lines.append(f"  outputs: {', '.join(sub.output_names)}")
    for d in used:
        nbytes = the_plan.device_bytes()[d]
        lines.append(f"device {d}: {nbytes:,} of {devices[d].memory_bytes:,} bytes")
    costs = [p.cost for p in the_plan.parts]
    total = sum(costs)
    if costs:
        lines.append(f"transfer between parts: {the_plan.transfer_bytes():,} bytes per run; "
                     f"largest part {max(costs) * 1e6:.2f} us of {total * 1e6:.2f} us total "
                     f"({max(costs) / (total / len(costs)) if total else 1.0:.2f}x the mean)")
    return "\n".join(lines) + "\n"
