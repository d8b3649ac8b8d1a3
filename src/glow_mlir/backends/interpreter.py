"""The interpreter backend: the numpy reference that runs the instruction IR.

It has a kernel for every `glow` op kind, so it could run any graph. It keeps the heavy ops
whose direct kernels are both simpler and more accurate than their lowered forms
(convolution of any group, fully_connected, batch_mat_mul, soft_max and log_soft_max, whose
kernel is stable by construction) and lowers the composite ones (normalizations, gelu, swish,
clip, leaky_relu, prelu, constant pads, tiles), so that the instruction passes and the other
targets meet the same primitive ops it checks them with.

It fuses no activations (Glow's interpreter neither): a separate activation keeps every
intermediate observable. It still runs a fused activation it is given (an imported or
hand-written graph), as its numpy kernels apply it.

Compiling is the instruction pipeline alone; `targets.interpreter.instr_interpreter` runs
the planned program on one byte arena at the planned offsets, so a wrong buffer-sharing
or planning decision shows up as wrong numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from glow_mlir.backends.base import Backend, NodeInfo

if TYPE_CHECKING:
    import numpy as np
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Operation

    from glow_mlir.analysis.memory_report import MemoryReport


def kept(kind: type[Operation]) -> bool:
    """Ops `lower-graph` could lower that the interpreter runs as they are (the classes are
    named here, not at module level: naming a backend imports no xDSL)."""
    from glow_mlir.dialects import glow

    return issubclass(kind, (glow.ConvolutionOp, glow.FullyConnectedOp, glow.BatchMatMulOp,
                             glow.SoftMaxOp, glow.LogSoftMaxOp))


class InterpreterBackend(Backend):
    name: ClassVar[str] = "interpreter"

    def should_lower(self, kind: type[Operation]) -> bool:
        return not kept(kind)

    def is_op_supported(self, info: NodeInfo) -> bool:
        """Every glow op (those `lower-graph` removes are not asked: `Backend.runs`)."""
        return info.name.startswith("glow.")

    def executor(self, module: ModuleOp, memory: MemoryReport,
                 **options: object) -> InterpreterExecutor:
        return InterpreterExecutor(module, memory)


class InterpreterExecutor:
    """The instruction interpreter on a planned instruction IR program."""

    def __init__(self, module: ModuleOp, memory: MemoryReport | None = None):
        from glow_mlir.targets.interpreter.instr_interpreter import InstrExecutor

        self.memory = memory
        self.module = module
        self._run = InstrExecutor(module)

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        return self._run.run(list(inputs))

    def state(self) -> dict[str, np.ndarray]:
        """The state weights by name: the live arrays the runs update."""
        return dict(self._run.state)
