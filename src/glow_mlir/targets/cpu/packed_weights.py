"""The bytes a graph op's constant operand takes once the cpu backend repacks it at
compile time (Winograd's U, `winograd_filters`; VNNI rows, `vnni_filters`; gemm panels,
`gemm_panels`; transposed grouped filters, `grouped_filters`), asked of the *graph* op,
before anything is compiled: the partitioner's estimate of a part's weights
(`transforms/partition/plan.py`) must not fall below the compiled part's constant area,
which holds the packed form instead of (or, when another op reads the weight as it is,
besides) the weight.

An upper bound: the packing passes decide on the lowered instruction and may keep the
plain form (a scratch too large, a host without VNNI, pads above 1); then the estimate
is a little high, never low. Each form is keyed so that two readers of one weight in
the same form count it once, as the passes share it."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import AnyFloat, ContainerType, IntegerType, ShapedType, f32
from xdsl.ir import Operation, SSAValue

from glow_mlir.analysis.graph_memory import tensor_bytes
from glow_mlir.conversion.glow_ir_to_loops import gemm_micro, kernels_grouped
from glow_mlir.conversion.glow_ir_to_loops import kernels_winograd as wg
from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.shapes import image_dims
from glow_mlir.semantics import vnni_layout


def _shape(v: SSAValue) -> tuple[int, ...]:
    t = v.type
    return tuple(t.get_shape()) if isinstance(t, ShapedType) else ()


def _elem(v: SSAValue):
    t = v.type
    return t.get_element_type() if isinstance(t, ContainerType) else None


def _ints(op: Operation, name: str, default: tuple[int, ...]) -> tuple[int, ...]:
    a = op.attributes.get(name)
    return tuple(getattr(a, "get_values", lambda: default)()) if a is not None else default


def packed_form(op: Operation, index: int) -> tuple[str, int] | None:
    """(form, bytes) of operand `index` of graph op `op` as the cpu backend may store
    it, or None when it is stored as it is."""
    if index != 1 or len(op.operands) < 2:
        return None
    w = op.operands[1]
    if isinstance(op, glow.ConvolutionOp):
        return _conv(op, w)
    if isinstance(op, (glow.FullyConnectedOp, glow.MatMulOp)):
        return _dense(op, w)
    return None


def _conv(op: Operation, w: SSAValue) -> tuple[str, int] | None:
    shape = _shape(w)
    if len(shape) != 4 or not op.results:
        return None
    layout = getattr(op.attributes.get("layout"), "data", "NCHW")
    value = getattr(op.attributes.get("group"), "value", None)
    group = value.data if value is not None else 1
    o = shape[0]
    _, c, _, _ = image_dims(_shape(op.operands[0]), layout)
    _, _, oh, ow = image_dims(_shape(op.results[0]), layout)
    if group != 1:
        return _grouped(op, w, group, layout, (o, c, oh, ow))
    if isinstance(_elem(w), IntegerType):  # int8 rows for vpdpbusd, [O, K] K = taps x C/4
        taps = math.prod(shape) // (o * c)
        k = taps * -(-c // vnni_layout.GROUP) * vnni_layout.GROUP
        return "vnni", math.prod(vnni_layout.packed_shape(o, k))
    if not isinstance(_elem(w), AnyFloat) or layout != "NCHW" or wg.WINOGRAD == "never":
        return None
    if _ints(op, "kernels", ()) != (3, 3) or _ints(op, "strides", (1, 1)) != (1, 1) \
            or _ints(op, "dilation", (1, 1)) != (1, 1):
        return None
    if wg.WINOGRAD != "always" and (min(c, o) < wg.MIN_CHANNELS
                                    or oh * ow < wg.MIN_OUTPUT_PIXELS):
        return None
    big = oh * ow >= wg.MIN_OUTPUT_PIXELS_4 and min(c, o) >= wg.MIN_CHANNELS_4
    m = 4 if wg.WINOGRAD_4 == "always" or (wg.WINOGRAD_4 != "never" and big) else 2
    return f"winograd{m}", (m + 2) ** 2 * o * c * _elem_bytes(w)  # U [O, (m+2)^2, C]


def _grouped(op: Operation, w: SSAValue, group: int, layout: str,
             dims: tuple[int, int, int, int]) -> tuple[str, int] | None:
    """Each group's filters transposed, [group, K, wide] (`grouped_filters`), where the
    grouped kernel would take that form."""
    o, c, oh, ow = dims
    if _elem(w) != f32 or layout != "NCHW" or c // group < kernels_grouped.MIN_GROUP_CHANNELS:
        return None
    kernels = _ints(op, "kernels", ())
    k = c // group * math.prod(kernels)
    wide = kernels_grouped.transposed_width(k, o // group, oh, ow)
    return (f"grouped{wide}", group * k * wide * 4) if wide else None


def _dense(op: Operation, w: SSAValue) -> tuple[str, int] | None:
    shape = _shape(w)
    if len(shape) != 2:
        return None
    k, m = shape
    if isinstance(_elem(w), IntegerType):
        return "vnni", math.prod(vnni_layout.packed_shape(m, k))
    if not isinstance(_elem(w), AnyFloat) or _elem_bytes(w) != 4:
        return None
    nr = gemm_micro.width()
    if m < nr:
        return None
    return "panels", -(-m // nr) * nr * k * 4


def _elem_bytes(w: SSAValue) -> int:
    return tensor_bytes(w.type) // max(1, math.prod(_shape(w)))
