"""The `glow_ir` dialect: Glow's low-level instruction IR on memrefs.

A `glow_ir.func` declares its global memory (weights: constants, inputs, outputs) and runs
a program: instructions in order, each on buffers marked @in/@out/@inout, activations
allocated and freed explicitly, views into buffers explicit. Every read and write is on the
page, so buffer sharing and memory planning are decisions a pass makes and a verifier and
the interpreter can check.
"""

from __future__ import annotations

from xdsl.ir import Dialect, Operation

from glow_mlir.dialects.glow_ir_ops.access import Access, InstrOp, access_attr
from glow_mlir.dialects.glow_ir_ops.compute import *  # noqa: F403 - the compute instructions
from glow_mlir.dialects.glow_ir_ops.compute import (
    COMPUTE_INSTRUCTIONS,
    INSTRUCTION_FOR,
    INSTRUCTION_OF,
    instruction_of,
)
from glow_mlir.dialects.glow_ir_ops.control_flow import (
    CONTROL_FLOW_INSTRUCTIONS,
    IfOp,
    LoopOp,
    outer_value,
)
from glow_mlir.dialects.glow_ir_ops.instructions import *  # noqa: F403 - public ops
from glow_mlir.dialects.glow_ir_ops.instructions import (
    DATA_INSTRUCTIONS,
    NOT_INSTRUCTIONS,
    GraphInstrOp,
    instruction_name,
    int_array,
    shadow_graph_op,
)
from glow_mlir.dialects.glow_ir_ops.memory import *  # noqa: F403
from glow_mlir.dialects.glow_ir_ops.memory import (
    AllocActivationOp,
    DeallocActivationOp,
    FuncOp,
    TensorViewOp,
    WeightOp,
    buffer_bytes,
    buffer_type,
    constant_weight_of,
    drop_plan,
    owning_func,
    root_buffer,
    view_byte_offset,
    weight_of,
)

MEMORY_OPS = (FuncOp, WeightOp, AllocActivationOp, DeallocActivationOp, TensorViewOp)
ALL_OPS: tuple[type[Operation], ...] = (*MEMORY_OPS, *DATA_INSTRUCTIONS, *COMPUTE_INSTRUCTIONS,
                                        *CONTROL_FLOW_INSTRUCTIONS)

GlowIR = Dialect("glow_ir", list(ALL_OPS), [])

__all__ = [
    "GlowIR",
    "ALL_OPS",
    "Access",
    "InstrOp",
    "GraphInstrOp",
    "access_attr",
    "FuncOp",
    "WeightOp",
    "AllocActivationOp",
    "DeallocActivationOp",
    "TensorViewOp",
    "INSTRUCTION_FOR",
    "INSTRUCTION_OF",
    "instruction_of",
    "NOT_INSTRUCTIONS",
    "instruction_name",
    "int_array",
    "shadow_graph_op",
    "buffer_bytes",
    "buffer_type",
    "root_buffer",
    "view_byte_offset",
    "weight_of",
    "constant_weight_of",
    "drop_plan",
    "owning_func",
    "COMPUTE_INSTRUCTIONS",
    "DATA_INSTRUCTIONS",
    "CONTROL_FLOW_INSTRUCTIONS",
    "IfOp",
    "LoopOp",
    "outer_value",
]
