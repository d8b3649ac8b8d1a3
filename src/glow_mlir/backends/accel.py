"""The accelerator backend: an on-chip scratchpad fed by a DMA engine, with four compute
units (README: The accelerator). What it runs is what those units and the DMA engine do:

- matmul/conv tile: mat_mul and single-group convolution; the tile's write-back stage can
  apply a relu, so a relu fuses into a convolution (nothing else does);
- element-wise unit: arithmetic, min/max, the usual unary math, batched_add (the slice is
  re-read for every batch row);
- pooling unit: max_pool, avg_pool;
- reduction unit: sum, mean, max, min over axes;
- DMA engine: constants and splats, slices, concats, insertions, reshapes, transposes and
  broadcasts (strided copies between memory and the scratchpad).

Which unit runs an op is its trait `OnAccelUnit` (dialects/glow_ops/traits.py). Compute
units work on f32, and on per-tensor 8-bit quantized tensors for convolution,
fully_connected, add, relu, max pool and the quantize / dequantize / rescale edges
(`runs_int8`); the DMA engine moves any element type. Everything `lower-graph` can lower
is lowered, except fully_connected, kept for `quantize-graph` and then lowered to mat_mul
+ batched_add (float) or made a 1x1 convolution (int8) by `transform_post_lowering`;
group convolution per group,
batch_mat_mul per batch, soft-max to exp/reduce/div, normalizations and composite
activations to element-wise ops, constant pads to splat + insert_tensor, tiles to concat.

Compiling: after the instruction pipeline (IRGen, Glow's IR optimizer, activation planning
in main memory), `convert-glow-ir-to-accel` tiles every instruction to the scratchpad with
blocking DMAs (element-wise epilogues fused into convolutions and matmuls),
`accel-insert-dma` makes them asynchronous, `accel-double-buffer` overlaps each tile step
with the next, `accel-plan-scratchpad` fixes every tile's offset. The two scheduling
passes may be disabled (`disable_passes`); tiling and planning may not (nothing could run
without them). The planned program runs on the simulator (`targets.accel.simulator`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

from glow_mlir.backends.base import Backend, BackendOption, NodeInfo
from glow_mlir.backends.common import fused_activation_ok
from glow_mlir.ir.errors import UserError

if TYPE_CHECKING:
    import numpy as np
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Attribute, Operation

    from glow_mlir.analysis.memory_report import MemoryReport


DEFAULT_SCRATCHPAD_KIB = 256
SCHEDULING_PASSES = ("accel-insert-dma", "accel-double-buffer")
ACCEL_PASS_NAMES = ("convert-glow-ir-to-accel", *SCHEDULING_PASSES, "accel-plan-scratchpad")


def check_scratchpad_kib(kib: object) -> int:
    """A positive number of KiB the simulator can allocate (it holds the scratchpad as one
    array: a size beyond this machine's memory would be a bare MemoryError)."""
    from glow_mlir.ir.memory_limits import exceeds_memory

    if isinstance(kib, bool) or not isinstance(kib, int) or kib <= 0:
        raise UserError(f"scratchpad_kib must be a positive whole number of KiB, got {kib!r}")
    problem = exceeds_memory(kib * 1024)
    if problem:
        raise UserError(f"a scratchpad of {kib} KiB {problem}: the simulator holds it in memory")
    return kib


def check_fuse_epilogues(value: object) -> bool:
    if not isinstance(value, bool):
        raise UserError(f"fuse_epilogues must be True or False, got {value!r}")
    return value


class AccelBackend(Backend):
    name: ClassVar[str] = "accel"
    options: ClassVar[tuple[BackendOption, ...]] = (
        BackendOption("scratchpad_kib", DEFAULT_SCRATCHPAD_KIB, check_scratchpad_kib,
                      "the scratchpad's size in KiB"),
        BackendOption("fuse_epilogues", True, check_fuse_epilogues,
                      "an element-wise instruction after a unit's runs in its epilogue "
                      "(False: each alone, to measure what the fusion buys)"),
    )
    lowering_steps: ClassVar[tuple[str, ...]] = ACCEL_PASS_NAMES
    optional_steps: ClassVar[tuple[str, ...]] = SCHEDULING_PASSES
    lowering_title: ClassVar[str] = "the accelerator pipeline"

    # ------------------------------------------------------------------ graph hooks
    def should_lower(self, kind: type[Operation]) -> bool:
        """Everything, except fully_connected: kept whole until quantization has seen it,
        then `transform_post_lowering` lowers it (float) or makes it a 1x1 convolution
        (int8)."""
        from glow_mlir.dialects import glow

        return kind is not glow.FullyConnectedOp

    def transform_post_lowering(self, module: ModuleOp) -> bool:
        """fully_connected to what the units run (`fully_connected_for_accel`), then what
        that made lowered as `lower-graph` would have (a fused clip to max/min)."""
        from glow_mlir.transforms.graph.fully_connected_for_accel import (
            fully_connected_for_accel,
        )
        from glow_mlir.transforms.graph.lower_graph import LowerOp
        from glow_mlir.transforms.graph.utils import apply_patterns

        if not fully_connected_for_accel(module):
            return False
        apply_patterns(module, [LowerOp(self)])
        return True

    def supports_fused_activation(self, producer: type[Operation], activation: str,
                                  element_type: Attribute) -> bool:
        from xdsl.dialects.builtin import f32

        from glow_mlir.dialects import glow

        return (issubclass(producer, glow.ConvolutionOp) and activation == "relu"
                and element_type == f32)

    def is_op_supported(self, info: NodeInfo) -> bool:
        """What a unit or the DMA engine does (the op's trait `OnAccelUnit`): compute on
        f32, or on per-tensor 8-bit quantized tensors for the int8 kinds (`runs_int8`;
        group convolutions and the other ops `lower-graph` removes are not asked:
        `Backend.runs`)."""
        from xdsl.dialects.builtin import f32

        from glow_mlir.dialects.glow_ops.traits import AccelUnit, accel_unit

        unit = accel_unit(info.kind)
        if unit is AccelUnit.DMA:
            return True
        if any(t != f32 for t in info.element_types()):
            return runs_int8(info)
        if unit is None:
            return False
        return fused_activation_ok(self, info)

    # ------------------------------------------------------------------ compiling
    def step_with_options(self, step: str, options: Mapping[str, object]) -> str:
        if step != "convert-glow-ir-to-accel":
            return step
        fusion = "" if options.get("fuse_epilogues", True) else " fuse-epilogues=false"
        return f"convert-glow-ir-to-accel{{scratchpad-kib={options['scratchpad_kib']}{fusion}}}"

    def lower(self, module: ModuleOp, disable: Sequence[str] = (),
              print_ir_after_each: bool = False, **options: object) -> MemoryReport:
        """A planned accelerator program, in place. `fuse_epilogues=False` converts each
        element-wise instruction alone (to measure what the fusion buys)."""
        options = self.check_options(options)
        instr_disabled, steps_disabled = self.split_disabled(disable)
        steps = self.lowering_pipeline(steps_disabled, **options)  # checked first
        refuse_instructions_without_unit(module)  # a glow_ir program made for another backend
        report = self.lower_to_instructions(module, instr_disabled, print_ir_after_each)
        refuse_empty_tensors(module)
        self.run_lowering(module, steps, print_ir_after_each)
        return report

    def executor(self, module: ModuleOp, memory: MemoryReport,
                 **options: object) -> AccelExecutor:
        return AccelExecutor(module, memory)


def _int8_kinds() -> tuple[type[Operation], ...]:  # a constant, made lazily: no xDSL at import
    """The ops the accelerator runs on 8-bit quantized tiles: the matmul/conv unit's
    convolution (i32 accumulation, requantized at write-back), the element-wise unit's
    add, relu and the edges (quantize, dequantize, rescale), the pooling unit's max pool
    (it compares stored values: input and output share a scale), and fully_connected, as
    a 1x1 convolution (`transform_post_lowering`)."""
    from glow_mlir.dialects import glow

    return (glow.ConvolutionOp, glow.FullyConnectedOp, glow.AddOp, glow.ReluOp,
            glow.MaxPoolOp, glow.QuantizeOp, glow.DequantizeOp, glow.RescaleQuantizedOp)


def runs_int8(info: NodeInfo) -> bool:
    """Whether the accelerator runs `info` with its quantized types: an int8 kind whose
    every non-float tensor is per-tensor quantized with 8-bit storage, except a
    convolution's or fully_connected's bias, plain i32 (of scale s_in * s_w); per-channel kinds have
    no unit at all. A quantized op without a fused activation (the requantizing
    write-back applies none)."""
    from xdsl.dialects.builtin import f32, i32

    from glow_mlir.dialects.glow_ops.types import QuantizedType

    if not issubclass(info.kind, _int8_kinds()):
        return False
    if info.fused_activation != "none":
        return False
    types = list(info.element_types())
    for i, t in enumerate(types):
        if t == f32 or (t == i32 and i == 2 and _is_dense(info)):  # (x, w, bias)
            continue
        if not isinstance(t, QuantizedType) or t.storage.width.data != 8:
            return False
    return True


def _is_dense(info: NodeInfo) -> bool:
    from glow_mlir.dialects import glow

    return issubclass(info.kind, (glow.ConvolutionOp, glow.FullyConnectedOp))


def refuse_instructions_without_unit(module: ModuleOp) -> None:
    """A `glow_ir` program given as it is (a `.mlir` file) skips this backend's graph
    pipeline, which lowers the ops no unit runs; one made for the cpu backend keeps
    fully_connected, soft_max and others. Say which, where, in one line, before any
    pass runs (the tiling pass would report each at its instruction, as a pass does)."""
    from collections import Counter

    from glow_mlir.analysis.instr_memory import glow_ir_funcs
    from glow_mlir.conversion.glow_ir_to_accel import without_unit
    from glow_mlir.ir.text import location_text

    found = [op for fn in glow_ir_funcs(module) for op in without_unit(fn)]
    if not found:
        return
    counts = Counter(op.name for op in found)
    first: dict[str, str | None] = {}
    for op in found:
        first.setdefault(op.name, location_text(op))
    source = next((loc.rsplit(":", 2)[0] for loc in first.values() if loc), None)

    def kind(name: str) -> str:
        n, at = counts[name], first[name]
        line = at.rsplit(":", 2)[1] if at else None
        if line is None:
            return name if n == 1 else f"{name} ({n} times)"
        return f"{name} (line {line})" if n == 1 else f"{name} ({n} times, first at line {line})"

    kinds = ", ".join(kind(name) for name in counts)
    raise UserError(f"{source + ': ' if source else ''}backend 'accel' cannot run this glow_ir "
                    f"program: no accelerator unit runs {kinds}; compile the model for "
                    f"backend 'accel' (its graph pipeline lowers these ops), or run this "
                    f"program on backend 'cpu' or 'interpreter'")


def refuse_empty_tensors(module: ModuleOp) -> None:
    """The accelerator tiles every tensor into steps; a tensor with no elements (a batch
    bound to 0) has no tile, so it is refused by name rather than met deep in tiling."""
    from glow_mlir.dialects.glow_ops.types import fmt_shape

    for op in module.walk():
        values = [*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)]
        for v in values:
            shape = getattr(v.type, "get_shape", None)
            if shape is not None and 0 in shape():
                name = f"'{v.name_hint}'" if v.name_hint else f"a value of {op.name}"
                raise UserError(f"the accel backend cannot run tensors without elements: "
                                f"{name} has shape {fmt_shape(shape())} (use backend 'cpu' "
                                f"or 'interpreter')")


def lower_to_accel(module: ModuleOp, scratchpad_kib: int = DEFAULT_SCRATCHPAD_KIB,
                   disable: Sequence[str] = (), print_ir_after_each: bool = False,
                   fuse_epilogues: bool = True) -> MemoryReport:
    """`AccelBackend.lower`: `module` (an optimized graph) in place to a planned
    accelerator program; returns the main-memory `MemoryReport`."""
    from glow_mlir.backends.registry import get_backend

    return get_backend("accel").lower(module, disable, print_ir_after_each,
                                      fuse_epilogues=fuse_epilogues,
                                      scratchpad_kib=scratchpad_kib)


class AccelExecutor:
    """The planned accelerator program on the simulator: numbers, checks, and the cycle and
    traffic report (`report`: static, the program has no branches, so it is known before
    the first run and the same for every run)."""

    def __init__(self, module: ModuleOp, memory: MemoryReport | None = None):
        from glow_mlir.targets.accel.simulator import AccelSimulator

        self.memory = memory
        self.module = module
        self._simulator = AccelSimulator(module)

    @property
    def report(self):
        return self._simulator.report

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        return self._simulator.run(list(inputs))
