"""The CPU backend: glow_ir compiled to loops and kernels through the LLVM dialect.

Kept as they are, because a shape-specialized kernel does them better than their lowered
forms:
- convolution of any group: one kernel loops over the groups; per-group slicing would copy
  every input channel once more (and make a depthwise convolution C separate convolutions);
- fully_connected: kept rather than lowered to mat_mul + batched_add. A fast GEMM kernel adds
  the bias and applies the fused activation in its epilogue, while each output tile is still
  in registers; the lowered form writes the [N, M] product to memory and reads it back for the
  bias and again for the activation. Keeping it is also what lets `fuse-activations` fuse
  into it, and the constant [K, M] weights can be packed once for the kernel;
- batch_mat_mul: one kernel with a batch loop instead of B slices, reshapes and a concat;
- soft_max, log_soft_max: one stable kernel (max, exp-sum, scale per row) instead of six
  ops and five intermediate tensors;
- layer_normalization: one kernel whose three passes (sum, squared deviations, output)
  stay in the row while it is in cache, instead of two reductions, two broadcasts and four
  element-wise passes over the whole tensor (BERT-base's 128x768: 0.21 ms lowered, 0.04
  ms kept, `benchmarks/cpu_kernels.py --cases bert_add_ln`);
- gelu: one element-wise instruction (straight-line f32 erf), which the epilogue of the
  product before it computes (BERT's feed-forward layer); lowered, it is a diamond that
  reads x twice, which epilogues do not take;
- swish (SiLU, x * sigmoid(x)): the same, after EfficientNet's convolutions (and
  `fuse-self-gated` makes torch.onnx's Sigmoid-then-Mul one swish again);
- clip and leaky_relu: they are fusable activations (`fuse-activations` runs after lowering
  in Glow's order, so lowering them to max/min would forbid the fusion), and a lone one is a
  one-line loop anyway.

Lowered: batch normalization, prelu, constant pads and tiles (plain
element-wise loops and copies after lowering).

Fused activations: relu, clip, leaky_relu, sigmoid and tanh on float convolution and
fully_connected (the kernels' epilogue applies them).

Compiling: the instruction pipeline (it needs the memory plan: its code addresses every
buffer at a planned offset), then `convert-glow-ir-to-loops` (every instruction kind
without a loop generator reported at once, each at its instruction), then
`targets.cpu`: the loop IR translated to LLVM IR, compiled at O3 and linked by MCJIT.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

from glow_mlir.backends import interpreter
from glow_mlir.backends.base import Backend, BackendOption, NodeInfo
from glow_mlir.backends.common import fused_activation_ok
from glow_mlir.ir.errors import UserError

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Attribute, Operation

    from glow_mlir.analysis.memory_report import MemoryReport
    from glow_mlir.targets.cpu.executor import CpuExecutor


INT8_KERNELS = True
"""Whether quantized convolution, fully_connected and the matrix products run on the int8
kernels (`conversion/glow_ir_to_loops/kernels_qdense.py`; False: conv and fully_connected
through the float kernels, the matrix products float; `benchmarks/int8_kernels.py`
compares both)."""


def kept(kind: type[Operation]) -> bool:
    """Ops `lower-graph` could lower that the CPU runs as they are: the interpreter's, plus
    the activations it fuses (every op with the trait `FusableActivation`), layer
    normalization, gelu and swish (module docstring)."""
    from glow_mlir.dialects import glow
    from glow_mlir.dialects.glow_ops.traits import FusableActivation

    return (interpreter.kept(kind) or kind.has_trait(FusableActivation)
            or issubclass(kind, (glow.LayerNormalizationOp, glow.GeluOp, glow.SwishOp)))


class ThreadCountError(UserError):
    """A thread count that is not a whole number from 1 to MAX_THREADS."""


class OversubscribedWarning(UserWarning):
    """A thread count above the cores this process may run on."""


def warn_if_oversubscribed(threads: int) -> None:
    """Warn when `threads` is more than `default_threads()`: the code is still right (the
    same bits), but every parallel region then waits for threads that wait for a core
    (ResNet-18 at 99 threads on 2 cores ran 3-5x slower than at 2). Not an error: a model
    saved or bundled here may run on a larger machine."""
    import warnings

    cores = default_threads()
    if threads > cores:
        warnings.warn(f"{threads} threads are more than the {cores} core"
                      f"{'s' if cores > 1 else ''} this process may run on: the parallel "
                      f"kernels will wait for threads that wait for a core (slower than "
                      f"{cores} thread{'s' if cores > 1 else ''})", OversubscribedWarning,
                      stacklevel=4)


def default_threads() -> int:
    """The cores this process may run on (its CPU affinity, which `taskset` and container
    limits set; not the machine's core count)."""
    import os

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def check_num_threads(value: object, what: str = "num_threads") -> int | None:
    """`value` if it is a thread count the cpu backend can compile for (None: the
    default, `default_threads`), else a ThreadCountError naming `what`."""
    import numbers

    from glow_mlir.ir.native_runtime import MAX_THREADS

    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ThreadCountError(f"{what} must be a whole number of threads from 1 to "
                               f"{MAX_THREADS}, got {value!r} ({type(value).__name__})")
    if not 1 <= int(value) <= MAX_THREADS:
        raise ThreadCountError(f"{what} must be from 1 to {MAX_THREADS} threads, got "
                               f"{int(value)}")
    return int(value)


def check_trace(value: object) -> bool:
    if not isinstance(value, bool):
        raise UserError(f"trace must be True or False, got {value!r}")
    return value


class CpuBackend(Backend):
    name: ClassVar[str] = "cpu"
    lowering_steps: ClassVar[tuple[str, ...]] = ("convert-glow-ir-to-loops",)
    saves_code: ClassVar[bool] = True
    options: ClassVar[tuple[BackendOption, ...]] = (
        BackendOption("num_threads", None, check_num_threads,
                      "threads the large kernels split their outer loops over (default: "
                      "the cores this process may use; the same bits for any count)"),
        BackendOption("trace", False, check_trace,
                      "time every kernel call (model.trace, model.write_trace)"),
    )

    def keyed_options(self, options: Mapping[str, object]) -> dict[str, object]:
        """The thread count resolved (the model cache keys what is compiled); `trace`
        only when on."""
        out = dict(options)
        threads = out.get("num_threads") or default_threads()
        assert isinstance(threads, int)  # check_num_threads
        warn_if_oversubscribed(threads)
        out["num_threads"] = threads
        if not out.get("trace"):
            out.pop("trace", None)
        return out

    def step_with_options(self, step: str, options: Mapping[str, object]) -> str:
        """`convert-glow-ir-to-loops{num-threads=N trace=true}` (as it was without
        options for one thread, untraced)."""
        threads = options.get("num_threads") or default_threads()
        trace = " trace=true" if options.get("trace") else ""
        if threads == 1 and not trace:
            return step
        return f"{step}{{num-threads={threads}{trace}}}"

    def should_lower(self, kind: type[Operation]) -> bool:
        return not kept(kind)

    def supports_fused_activation(self, producer: type[Operation], activation: str,
                                  element_type: Attribute) -> bool:
        """Every `fused_activation` the dialect has (the kernels' epilogue applies each)
        on a float `FusableProducer`."""
        from glow_mlir.dialects.glow_ops.nn import ACTIVATION_OPS
        from glow_mlir.dialects.glow_ops.traits import FusableProducer
        from glow_mlir.dialects.glow_ops.types import is_float

        return (producer.has_trait(FusableProducer) and activation in ACTIVATION_OPS
                and is_float(element_type))

    def post_lowering_fusions(self) -> tuple[str, ...]:
        """Layer normalizations as older exporters decompose them made one op again, which
        the cpu keeps (`transforms/graph/fuse_layer_norm.py`), and so are exact GELUs
        (`fuse_gelu.py`) and x * sigmoid(x) (`fuse_self_gated.py`): its kernels run them
        in one pass or in a product's epilogue."""
        return ("fuse-layer-norm", "fuse-gelu", "fuse-self-gated")

    def transform_post_lowering(self, module: ModuleOp) -> bool:
        """Quantized convolution and fully_connected on the int8 kernels where they take
        the op's types (`kernels_qdense.runs_int8`), else through the float kernels, the
        int8 ops around them kept (`transforms/graph/dense_through_float.py`). The
        per-channel quantized ones go through the float kernels too
        (`channelwise_through_float.py`), and max pools of integers (a QOperator model's:
        `integer_pools_through_float.py`). Transposes feeding a batch matmul (attention's
        heads) folded into it: its kernel reads them strided
        (`transforms/graph/fold_transposes_into_batch_matmul.py`). Depthwise convolutions
        between transposes from and back to NHWC (ConvNeXt's) run in NHWC where the lanes
        kernel takes them (`depthwise_channels_last.py`). The decomposed layer
        norms, GELUs and swishes were made whole before it (`post_lowering_fusions`)."""
        from glow_mlir.conversion.glow_ir_to_loops.kernels_depthwise_lanes import (
            takes_channels_last,
        )
        from glow_mlir.conversion.glow_ir_to_loops.kernels_qdense import runs_int8
        from glow_mlir.transforms.graph import fold_transposes_into_batch_matmul as fold
        from glow_mlir.transforms.graph.channelwise_through_float import channelwise_through_float
        from glow_mlir.transforms.graph.dense_through_float import dense_through_float
        from glow_mlir.transforms.graph.depthwise_channels_last import depthwise_channels_last
        from glow_mlir.transforms.graph.integer_pools_through_float import (
            integer_pools_through_float,
        )

        per_channel = channelwise_through_float(module)
        pools = integer_pools_through_float(module)
        dense = dense_through_float(module,
                                    native=runs_int8 if INT8_KERNELS else lambda op: False)
        channels_last = depthwise_channels_last(module, takes_channels_last)
        changed = dense | per_channel | pools | channels_last
        return (fold.FOLD and fold.fold_transposes_into_batch_matmul(module)) or changed

    def is_op_supported(self, info: NodeInfo) -> bool:
        """Every glow op with a fused activation it supports (those `lower-graph` removes
        are not asked: `Backend.runs`), except quantized pools of other than one 8-bit
        type: their float loop generators refuse them (`kernels_common.require_float`),
        so `quantize-graph` leaves them float on cpu. max_pool of one 8-bit type in and
        out runs on the stored integers (`kernels_pool.runs_stored`), and so do global
        avg_pool and adaptive_avg_pool (`stored_average_pays`; sums in i32,
        `kernels_qpool`); windowed averages stay float, which is faster
        (`kernels_pool.WINDOWED_STORED_AVERAGES`).
        Quantized matrix products run on the int8 kernels when all their types are 8-bit
        (`kernels_qdense`)."""
        from glow_mlir.conversion.glow_ir_to_loops.kernels_pool import (
            runs_stored,
            stored_average_pays,
        )
        from glow_mlir.dialects import glow
        from glow_mlir.dialects.glow_ops.types import QuantizedType, is_quantized

        types = list(info.element_types())
        if info.kind is glow.MaxPoolOp and INT8_KERNELS and runs_stored(types):
            return fused_activation_ok(self, info)
        if (info.kind in (glow.AvgPoolOp, glow.AdaptiveAvgPoolOp) and INT8_KERNELS
                and runs_stored(types)
                and stored_average_pays(info.result_types[0])):
            return fused_activation_ok(self, info)
        if info.kind in _FLOAT_ONLY() and any(is_quantized(t) for t in types):
            eight = all(isinstance(t, QuantizedType) and t.storage.width.data == 8
                        for t in types)
            if not (INT8_KERNELS and eight
                    and info.kind in (glow.MatMulOp, glow.BatchMatMulOp)):
                return False
        return info.name.startswith("glow.") and fused_activation_ok(self, info)

    def lower(self, module: ModuleOp, disable: Sequence[str] = (),
              print_ir_after_each: bool = False, **options: object) -> MemoryReport:
        """The planned program (in place) as loop IR: the entry point and its kernels
        (`glow-compile --emit llvm` goes on to the LLVM dialect)."""
        from glow_mlir.targets.instructions import require_memory_plan

        require_memory_plan(disable, "the cpu backend")
        return super().lower(module, disable, print_ir_after_each, **options)

    def run_lowering(self, module: ModuleOp, steps: Sequence[str],
                     print_ir_after_each: bool = False) -> None:
        from glow_mlir.targets.cpu.executor import lower_to_loops

        lower_to_loops(module, steps)

    def compile(self, module: ModuleOp, disable: Sequence[str] = (),
                **options: object) -> CpuExecutor:
        """Native code: the memory areas are laid out from the planned program, before
        it is lowered to loops (`targets.cpu.executor.CpuExecutor`)."""
        from glow_mlir.targets.cpu.executor import CpuExecutor  # llvmlite only when used
        from glow_mlir.targets.instructions import check_fits_in_memory, require_memory_plan

        options = self.check_options(options)
        require_memory_plan(disable, "the cpu backend")
        instr_disabled, steps_disabled = self.split_disabled(disable)
        steps = self.lowering_pipeline(steps_disabled, **options)
        memory = self.lower_to_instructions(module, instr_disabled)
        check_fits_in_memory(module, memory)
        from glow_mlir.targets.cpu import jit
        from glow_mlir.targets.cpu.weight_forms import rewrite_weight_forms

        with jit.kernel_switches(*jit.target()):  # the JIT's CPU (`jit.TARGET`)
            changed = rewrite_weight_forms(module)  # Winograd's U, VNNI rows, gemm panels
            if changed and memory is not None:
                import dataclasses

                from glow_mlir.analysis.instr_memory import memory_report

                memory = dataclasses.replace(  # the constant area holds U / packed weights
                    memory, constant_bytes=memory_report(module).constant_bytes)
            threads = options["num_threads"]
            assert threads is None or isinstance(threads, int)  # as check_num_threads
            return CpuExecutor(module, memory, steps,
                               num_threads=threads or default_threads(),
                               trace=bool(options["trace"]))


def _FLOAT_ONLY() -> tuple[type[Operation], ...]:  # noqa: N802 - a constant, made lazily
    """Ops whose cpu loop generators refuse quantized types (no xDSL at import here)."""
    from glow_mlir.dialects import glow

    return (glow.MaxPoolOp, glow.AvgPoolOp, glow.AdaptiveAvgPoolOp, glow.MatMulOp,
            glow.BatchMatMulOp, glow.LayerNormalizationOp)
