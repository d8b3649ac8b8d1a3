"""glow-compile --emit partitions: the device partitioner's DAG for N devices of
`--backend`'s kind, each with `--device-memory-kib` of memory (README: The runtime)."""

from __future__ import annotations

import argparse
import sys

from glow_mlir.ir.errors import UserError

INCOMPATIBLE = ("emit_bundle", "accel_report", "memory_report", "network_name", "cpu",
                "cpu_features", "disable_pass", "print_ir_after_each")


def emit_partitions(args: argparse.Namespace) -> None:
    from xdsl.dialects import func

    from glow_mlir.runtime.devices import Device
    from glow_mlir.runtime.partitioned import format_plan, optimized_graph, plan, steps
    from glow_mlir.transforms.partition import split

    for name in INCOMPATIBLE:
        if getattr(args, name, None):
            flag = "--" + name.replace("_", "-")
            raise UserError(f"{flag} does not go with --emit partitions")
    backend = args.backend or "cpu"
    kind = "accel" if backend == "accel" else "cpu"
    if args.scratchpad_kib is not None and kind != "accel":
        raise UserError("--scratchpad-kib is an option of the accel backend: give "
                        "--backend accel")
    memory = (args.device_memory_kib or 16 << 20) * 1024
    device = Device(kind=kind, backend=backend, memory_bytes=memory,
                    scratchpad_kib=args.scratchpad_kib or 256)
    module = optimized_graph(args.model, [device], dict(args.input_shape) or None)
    # the devices are alike: a part holds an op at least, so no more than the graph's ops
    # are made (at --num-devices 10^7 making them all took 35 s and 2.5 GB)
    count = args.num_devices or 1
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    devices = [device] * min(count, max(1, steps(fn)))
    the_plan = plan(module, devices, args.partition or "memory")
    dag = split(the_plan)
    text = format_plan(the_plan, dag, str(args.model), device_count=count)
    if args.dump_graph_dag:
        from glow_mlir.analysis.graph_dot import graph_to_dot

        part_of = {op: p.index for p in the_plan.parts for op in p.ops}
        with open(args.dump_graph_dag, "w") as f:
            f.write(graph_to_dot(module, part_of))
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
