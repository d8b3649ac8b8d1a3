"""Neural-network ops: convolution, pooling, dense layers, normalization, soft-max, resize."""

from __future__ import annotations

import math
from typing import ClassVar

from xdsl.dialects.builtin import TensorType, f32, i64
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def

from glow_mlir.dialects.glow_ops.attrs import (
    CoordinateMode,
    Layout,
    NearestMode,
    bool_attr,
    float_attr,
    floats_attr,
    int_attr,
    ints_attr,
    str_attr,
)
from glow_mlir.dialects.glow_ops.base import FUNCTIONAL_FORMAT, SAME_TYPE, GlowOp
from glow_mlir.dialects.glow_ops.elementwise import UNARY_OPS
from glow_mlir.dialects.glow_ops.shapes import image_dims, image_shape, spatial_out
from glow_mlir.dialects.glow_ops.traits import (
    ON_ELEMENTWISE_UNIT,
    ON_MATMUL_UNIT,
    ON_POOL_UNIT,
    QUANT_AS_INPUT,
    QUANT_DENSE,
    FusableActivation,
    FusableProducer,
    InPlace,
    MacCount,
    RequantizesSum,
    Windowed,
    conv_macs,
    matmul_macs,
)
from glow_mlir.dialects.glow_ops.types import (
    elem_of,
    fail,
    fmt_shape,
    is_float,
    is_int,
    is_quantized,
    normalize_axis,
    require,
    require_elem,
    require_rank,
    require_same_elem,
    require_shape,
    shape_of,
)
from glow_mlir.ir.input_checks import InputCheck

LAYOUTS = tuple(Layout)
ACTIVATION_OPS = {t.name: (op, t) for op in UNARY_OPS
                  if (t := op.get_trait(FusableActivation)) is not None}
"""`fused_activation` value -> (its op class, its trait): every `FusableActivation` op."""
FUSABLE_ACTIVATIONS = ("none", *ACTIVATION_OPS)


def _float_or_quantized(v) -> bool:
    return is_float(v) or is_quantized(v)


def _check_window(op: GlowOp, hw: tuple[int, int], with_dilation: bool) -> tuple:
    """Common checks of kernels/strides/pads(/dilation); returns them."""
    kernels = op.ints("kernels")
    strides = op.ints("strides")
    pads = op.ints("pads")
    dilation = op.ints("dilation") if with_dilation else (1, 1)
    require(len(kernels) == 2 and all(k > 0 for k in kernels),
            f"kernels must be 2 positive integers, got {list(kernels)}")
    require(len(strides) == 2 and all(s > 0 for s in strides),
            f"strides must be 2 positive integers, got {list(strides)}")
    require(len(pads) == 4 and all(p >= 0 for p in pads),
            f"pads must be 4 non-negative integers [top, left, bottom, right], got {list(pads)}")
    require(len(dilation) == 2 and all(d > 0 for d in dilation),
            f"dilation must be 2 positive integers, got {list(dilation)}")
    for i, axis in enumerate("HW"):
        span = hw[i] + pads[i] + pads[i + 2]
        need = dilation[i] * (kernels[i] - 1) + 1
        require(span >= need, f"kernel {axis} extent {need} exceeds the padded input {axis} {span}")
    return kernels, strides, pads, dilation


def _check_dense_elems(op: GlowOp, input, weights, bias, result, wname: str) -> None:
    """Convolution/fully-connected: one element type throughout, except quantized: the
    weights and the result quantized too, each with its own scale; the bias quantized,
    an integer (at scale input x weights, as Glow's Int32 bias) or a float."""
    if not is_quantized(elem_of(input)):
        for what, v in ((wname, weights), ("bias", bias), ("result", result)):
            require_same_elem(f"input and {what}", input, v)
    else:
        for what, v in ((wname, weights), ("result", result)):
            require_elem(what, v, is_quantized, "quantized (!glow.quant)")
        require_elem("bias", bias, lambda t: is_quantized(t) or is_int(t) or is_float(t),
                     "quantized (!glow.quant), integer or floating-point")


def _check_fused_activation(op: GlowOp) -> None:
    act = op.str_attr("fused_activation")
    args = op.floats("fused_activation_args")
    want = len(ACTIVATION_OPS[act][1].args) if act != "none" else 0
    require(len(args) == want,
            f"fused_activation '{act}' takes {want} argument(s), got {len(args)}")


@irdl_op_definition
class ConvolutionOp(GlowOp):
    """2-D convolution. NCHW input, OIHW filter (I = C / group) by default; NHWC with OHWI.

    `pads` is [top, left, bottom, right]. An activation fused by `fuse-activations` is
    named by `fused_activation` (with `fused_activation_args` for clip and leaky_relu).

    `winograd_filter` = m, 2 or 4 (set by the cpu backend on its planned program only,
    `targets/cpu/winograd_filters.py`): the filter operand is the 3x3 filter already
    transformed for Winograd F(m x m, 3x3), [O, (m+2)^2, C] with [o, (m+2)a+b, c] =
    (G g[o, c] G^T)[a, b]; NCHW, 3x3, one group. No reference kernel computes this form.

    `vnni_filter` = 1 (the cpu backend's too, for its int8 kernels on AVX-512 VNNI): the
    filter operand is the quantized filter as [O, K] (K = (kh, kw, c), c padded to a
    multiple of 4) packed for VNNI, `vnni_packed_shape` (`semantics/vnni_layout.py`);
    one group.

    `grouped_filter` = wide (the cpu backend's too, for its grouped kernel,
    `targets/cpu/grouped_filters.py`): the float filter of an NCHW convolution of more
    than one group transposed per group, [group, K, wide] (K = (c, kh, kw) of the
    group's C/group channels) with [g, k, j] = w[g*O/group + j, k] for j < O/group, 0 for
    the padding up to wide, a multiple of 8 (`semantics/grouped_filter.py`).
    """

    name = "glow.convolution"
    traits = traits_def(Windowed(dilation=True), FusableProducer(), MacCount(conv_macs),
                        ON_MATMUL_UNIT, QUANT_DENSE, RequantizesSum())
    kernels = ints_attr(required=True)
    strides = ints_attr((1, 1))
    pads = ints_attr((0, 0, 0, 0))
    dilation = ints_attr((1, 1))
    group = int_attr(1)
    layout = str_attr(Layout, Layout.NCHW)
    fused_activation = str_attr(FUSABLE_ACTIVATIONS, "none")
    fused_activation_args = floats_attr(())
    winograd_filter = int_attr(0)
    vnni_filter = int_attr(0)
    grouped_filter = int_attr(0)
    input = operand_def(TensorType)
    filter = operand_def(TensorType)
    bias = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = FUNCTIONAL_FORMAT

    def check(self) -> None:
        require_rank("input", self.input, 4)
        three = self.int_attr("winograd_filter") != 0 or self.int_attr("grouped_filter") != 0
        require_rank("filter", self.filter, 3 if three else 4)
        require_elem("input", self.input, _float_or_quantized, "floating-point or quantized")
        _check_dense_elems(self, self.input, self.filter, self.bias, self.result, "filter")
        o = check_conv_geometry(self, self.int_attr("winograd_filter"))
        require_shape("bias", self.bias, (o,), "one per output channel")
        _check_fused_activation(self)

    def is_depthwise(self) -> bool:
        """One input and one output channel per group (of several), a plain filter:
        the same filter bytes in either layout (OIHW [c, 1, kh, kw], OHWI [c, kh, kw, 1])."""
        layout = self.str_attr("layout")
        c = image_dims(shape_of(self.input), layout)[1]
        o = image_dims(shape_of(self.result), layout)[1]
        plain = not any(self.int_attr(k, 0) for k in ("winograd_filter", "vnni_filter",
                                                       "grouped_filter"))
        return plain and self.int_attr("group") == c == o > 1


def check_conv_geometry(op: GlowOp, winograd: int = 0) -> int:
    """The window, group, filter and result shapes of a 2-D convolution (`input`,
    `filter` and `result` operands; window, `group` and `layout` attributes), shared by
    the convolution ops; `winograd`: the filter is F(m x m, 3x3)'s transformed form.
    Returns the output channels."""
    layout = op.str_attr("layout")
    x, filt, result = op.operands[0], op.operands[1], op.results[0]
    n, c, h, w = image_dims(shape_of(x), layout)
    kernels, strides, pads, dilation = _check_window(op, (h, w), True)
    group = op.int_attr("group")
    require(group > 0, f"group must be positive, got {group}")
    require(c % group == 0, f"group {group} does not divide the {c} input channels")
    vnni = op.int_attr("vnni_filter", 0) != 0
    wide = op.int_attr("grouped_filter", 0)
    o = image_dims(shape_of(result), layout)[1] if vnni or wide else shape_of(filt)[0]
    require(o % group == 0, f"group {group} does not divide the {o} output channels")
    if winograd:
        require(winograd in (2, 4), f"winograd_filter is 2 or 4, got {winograd}")
        require(layout == "NCHW" and tuple(kernels) == (3, 3) and group == 1,
                "winograd_filter takes an NCHW 3x3 convolution of one group")
        require_shape("filter", filt, (o, (winograd + 2) ** 2, c),
                      f"{o} Winograd F({winograd}x{winograd}, 3x3) filters of {c} channels")
    elif wide:
        require(layout == "NCHW" and group > 1 and wide % 8 == 0 and wide >= o // group,
                f"grouped_filter takes an NCHW convolution of several groups, a multiple "
                f"of 8 at least its {o // group} output channels per group, got {wide}")
        require_elem("filter", filt, is_float, "floating-point (grouped_filter)")
        require_shape("filter", filt, (group, c // group * kernels[0] * kernels[1], wide),
                      f"{group} groups' transposed filters of {c // group} channels, "
                      f"kernels {list(kernels)}")
    elif vnni:
        require(group == 1, "vnni_filter takes a convolution of one group")
        require_shape("filter", filt, vnni_packed_shape(o, kernels[0] * kernels[1]
                                                         * -(-c // 4) * 4),
                      f"{o} filters of {c} channels, kernels {list(kernels)}, packed for VNNI")
    else:
        require_shape("filter", filt, image_shape(o, c // group, kernels[0], kernels[1], layout),
                      f"{o} filters of {c // group} channels, kernels {list(kernels)}")
    oh, ow = spatial_out((h, w), kernels, strides, pads, dilation)
    require_shape("result", result, image_shape(n, o, oh, ow, layout),
                  f"input {fmt_shape(shape_of(x))}, strides {list(strides)}, "
                  f"pads {list(pads)}, dilation {list(dilation)}")
    return o


def vnni_packed_shape(o: int, k: int) -> tuple[int, int, int, int]:
    """[O, K] 8-bit weights packed for VNNI's byte dot product: 16 output channels x 4 k
    per 64-byte row, one more row of i32 channel sums (`semantics/vnni_layout.py`)."""
    return (-(-o // 16), -(-k // 4) + 1, 16, 4)


class _PoolOp(GlowOp):
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    kernels = ints_attr(required=True)
    strides = ints_attr((1, 1))
    pads = ints_attr((0, 0, 0, 0))
    layout = str_attr(Layout, Layout.NCHW)

    def check(self) -> None:
        layout = self.str_attr("layout")
        require_rank("input", self.input, 4)
        require_same_elem("input and result", self.input, self.result)
        n, c, h, w = image_dims(shape_of(self.input), layout)
        kernels, strides, pads, _ = _check_window(self, (h, w), False)
        oh, ow = spatial_out((h, w), kernels, strides, pads)
        require_shape("result", self.result, image_shape(n, c, oh, ow, layout),
                      f"kernels {list(kernels)}, strides {list(strides)}, pads {list(pads)}")


@irdl_op_definition
class MaxPoolOp(_PoolOp):
    """2-D max pooling; padding never wins the max."""

    name = "glow.max_pool"
    traits = traits_def(Windowed(), ON_POOL_UNIT, QUANT_AS_INPUT)


@irdl_op_definition
class MaxPoolGradOp(GlowOp):
    """The gradient of `glow.max_pool` with respect to its input (Glow's MaxPoolGrad):
    each window's `grad` element added at the window's first maximum of `input` (row-major
    within the window; padding never wins). Made by `differentiate`: a max is not a
    composition of other ops that keeps ties exact and the work linear."""

    name = "glow.max_pool_grad"
    kernels = ints_attr(required=True)
    strides = ints_attr((1, 1))
    pads = ints_attr((0, 0, 0, 0))
    layout = str_attr(Layout, Layout.NCHW)
    input = operand_def(TensorType)
    grad = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = FUNCTIONAL_FORMAT

    def check(self) -> None:
        layout = self.str_attr("layout")
        require_rank("input", self.input, 4)
        require_elem("input", self.input, is_float, "floating-point")
        require_same_elem("input and grad", self.input, self.grad)
        n, c, h, w = image_dims(shape_of(self.input), layout)
        kernels, strides, pads, _ = _check_window(self, (h, w), False)
        oh, ow = spatial_out((h, w), kernels, strides, pads)
        require_shape("grad", self.grad, image_shape(n, c, oh, ow, layout),
                      "the max_pool result's shape")
        if self.result.type != self.input.type:
            fail(f"result type {self.result.type} must equal the input type {self.input.type}")


@irdl_op_definition
class AvgPoolOp(_PoolOp):
    """2-D average pooling; `count_include_pad` counts padding in the divisor."""

    name = "glow.avg_pool"
    traits = traits_def(Windowed(), ON_POOL_UNIT, QUANT_AS_INPUT)
    count_include_pad = bool_attr(False)


@irdl_op_definition
class AdaptiveAvgPoolOp(GlowOp):
    """Average pooling to the result's spatial size (PyTorch's adaptive windows)."""

    name = "glow.adaptive_avg_pool"
    traits = traits_def(QUANT_AS_INPUT)
    layout = str_attr(Layout, Layout.NCHW)
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def check(self) -> None:
        layout = self.str_attr("layout")
        require_rank("input", self.input, 4)
        require_rank("result", self.result, 4)
        require_same_elem("input and result", self.input, self.result)
        n, c, _, _ = image_dims(shape_of(self.input), layout)
        rn, rc, rh, rw = image_dims(shape_of(self.result), layout)
        require(
            (rn, rc) == (n, c),
            f"result batch and channels {rn}x{rc} must equal the input's {n}x{c}",
        )
        require(rh > 0 and rw > 0, "result spatial dims must be positive")


@irdl_op_definition
class FullyConnectedOp(GlowOp):
    """input[N, K] x weights[K, M] + bias[M] -> [N, M] (Glow's weight layout).

    Quantized: an integer (i32) bias has scale input_scale * weights_scale and offset 0,
    as in ONNX's QLinearMatMul/QLinearConv (also for glow.convolution). `vnni_filter` = 1:
    the weights transposed to [M, K] and packed for VNNI (as glow.convolution's).
    `gemm_panels` = nr (the cpu backend's, on its planned program only,
    `targets/cpu/gemm_panels.py`): the float weights packed in panels of nr columns,
    `gemm_panels_shape` (`semantics/gemm_panels.py`); 0: [K, M]."""

    name = "glow.fully_connected"
    traits = traits_def(FusableProducer(), MacCount(matmul_macs), QUANT_DENSE,
                        RequantizesSum())
    fused_activation = str_attr(FUSABLE_ACTIVATIONS, "none")
    fused_activation_args = floats_attr(())
    vnni_filter = int_attr(0)
    gemm_panels = int_attr(0)
    input = operand_def(TensorType)
    weights = operand_def(TensorType)
    bias = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = FUNCTIONAL_FORMAT

    def check(self) -> None:
        require_rank("input", self.input, 2)
        _check_dense_elems(self, self.input, self.weights, self.bias, self.result, "weights")
        n, k = shape_of(self.input)
        if self.int_attr("vnni_filter") != 0:  # packed (ConvolutionOp's docstring)
            m = shape_of(self.result)[1]
            require_shape("weights", self.weights, vnni_packed_shape(m, k),
                          f"[{k}, {m}] weights packed for VNNI")
            require(self.int_attr("gemm_panels") == 0,
                    "gemm_panels and vnni_filter exclude each other")
        elif self.int_attr("gemm_panels") != 0:
            m = shape_of(self.result)[1]
            check_gemm_panels(self, "weights", k, m)
        else:
            require_rank("weights", self.weights, 2)
            kw, m = shape_of(self.weights)
            require(k == kw, f"input columns {k} must equal weights rows {kw}")
        require_shape("bias", self.bias, (m,))
        require_shape("result", self.result, (n, m))
        _check_fused_activation(self)


def gemm_panels_shape(k: int, m: int, nr: int) -> tuple[int, int, int]:
    """[K, M] float weights packed in panels of `nr` columns, each K x nr contiguous, the
    last padded by zeros (`semantics/gemm_panels.py`)."""
    return (-(-m // nr), k, nr)


def check_gemm_panels(op: GlowOp, which: str, k: int, m: int) -> None:
    """Operand `which` of a [K] x [K, M] product with `gemm_panels` = nr set: float
    weights in `gemm_panels_shape`, nr a positive multiple of 8 (whole vectors)."""
    nr = op.int_attr("gemm_panels")
    require(nr > 0 and nr % 8 == 0,
            f"gemm_panels is a positive multiple of 8 (columns per panel), got {nr}")
    value = op.operands[1]  # fully_connected's weights, mat_mul's rhs
    require_elem(which, value, is_float, "floating-point (gemm_panels)")
    require_shape(which, value, gemm_panels_shape(k, m, nr),
                  f"[{k}, {m}] weights in panels of {nr} columns")


@irdl_op_definition
class MatMulOp(GlowOp):
    """lhs[N, K] x rhs[K, M] -> [N, M].

    `gemm_panels` = nr (the cpu backend's, as on glow.fully_connected): rhs is a constant
    packed in panels of nr columns, `gemm_panels_shape`."""

    name = "glow.mat_mul"
    traits = traits_def(MacCount(matmul_macs), ON_MATMUL_UNIT)
    gemm_panels = int_attr(0)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = FUNCTIONAL_FORMAT

    def check(self) -> None:
        require_rank("lhs", self.lhs, 2)
        n, k = shape_of(self.lhs)
        if self.int_attr("gemm_panels") != 0:
            require_rank("result", self.result, 2)
            m = shape_of(self.result)[1]
            check_gemm_panels(self, "rhs", k, m)
        else:
            require_rank("rhs", self.rhs, 2)
            k2, m = shape_of(self.rhs)
            require(k == k2, f"lhs columns {k} must equal rhs rows {k2}")
        require_shape("result", self.result, (n, m))
        require_same_elem("lhs and rhs", self.lhs, self.rhs)


@irdl_op_definition
class BatchMatMulOp(GlowOp):
    """lhs[B, N, K] x rhs[B, K, M] -> [B, N, M].

    `lhs_perm` / `rhs_perm` (the cpu backend's `fold-transposes-into-batch-matmul`): the
    operand is the tensor *before* a transpose by that shuffle, and the logical [B, N, K]
    (or [B, K, M]) operand is that transpose with its leading dims merged into B (what
    attention's per-head transposes and reshapes compute): the kernel reads it strided,
    no copy is made. `lhs_perm` keeps the last dim last (K stays the contiguous dim of a
    row of lhs, which `matmul_macs` and the kernel's row reads rely on). Empty: none."""

    name = "glow.batch_mat_mul"
    traits = traits_def(MacCount(matmul_macs))
    lhs_perm = ints_attr(())
    rhs_perm = ints_attr(())
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = FUNCTIONAL_FORMAT

    def logical_shape(self, which: str) -> tuple[int, ...]:
        """The [B, rows, cols] operand `which` ("lhs" or "rhs") multiplies: its own shape,
        or its transpose by `<which>_perm` with the leading dims merged."""
        dims = shape_of(getattr(self, which))
        perm = self.ints(f"{which}_perm")
        if not perm:
            return dims
        moved = [dims[p] for p in perm]
        return (math.prod(moved[:-2]), moved[-2], moved[-1])

    def _check_perm(self, which: str) -> None:
        value, perm = getattr(self, which), self.ints(f"{which}_perm")
        if not perm:
            require_rank(which, value, 3)
            return
        rank = len(shape_of(value))
        require(rank >= 3, f"{which} with {which}_perm must have rank >= 3, got {rank}")
        require(sorted(perm) == list(range(rank)),
                f"{which}_perm {list(perm)} is not a permutation of 0..{rank - 1}")
        if which == "lhs":
            require(perm[-1] == rank - 1, f"lhs_perm {list(perm)} must keep the last dim last")

    def check(self) -> None:
        self._check_perm("lhs")
        self._check_perm("rhs")
        b, n, k = self.logical_shape("lhs")
        b2, k2, m = self.logical_shape("rhs")
        require(b == b2, f"lhs batch {b} must equal rhs batch {b2}")
        require(k == k2, f"lhs columns {k} must equal rhs rows {k2}")
        require_shape("result", self.result, (b, n, m))
        require_same_elem("lhs and rhs", self.lhs, self.rhs)


@irdl_op_definition
class BatchedAddOp(GlowOp):
    """batch[B, ...] + slice[...]: the slice is added to every batch element."""

    name = "glow.batched_add"
    traits = traits_def(InPlace((0,)), ON_ELEMENTWISE_UNIT)
    batch = operand_def(TensorType)
    slice = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = FUNCTIONAL_FORMAT

    def check(self) -> None:
        bshape = shape_of(self.batch)
        require(len(bshape) >= 1, "batch must have rank >= 1")
        require_shape("slice", self.slice, bshape[1:], "the batch without its first dim")
        if self.result.type != self.batch.type:
            fail(f"result type {self.result.type} must equal the batch type {self.batch.type}")


@irdl_op_definition
class BatchNormalizationOp(GlowOp):
    """Inference batch norm: scale * (x - mean) / sqrt(var + epsilon) + bias, per channel."""

    name = "glow.batch_normalization"
    epsilon = float_attr(1e-5)
    momentum = float_attr()
    channel_idx = int_attr(1)
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    var = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = FUNCTIONAL_FORMAT

    def check(self) -> None:
        shape = shape_of(self.input)
        require(len(shape) >= 2, f"input must have rank >= 2, got {len(shape)}")
        require_elem("input", self.input, is_float, "floating-point")
        ch = normalize_axis(self.int_attr("channel_idx"), len(shape), "channel_idx")
        for what, v in (("scale", self.scale), ("bias", self.bias), ("mean", self.mean),
                        ("var", self.var)):
            require_shape(what, v, (shape[ch],), "one per channel")
        if self.result.type != self.input.type:
            fail(f"result type {self.result.type} must equal the input type {self.input.type}")


@irdl_op_definition
class LayerNormalizationOp(GlowOp):
    """Normalizes over the trailing dims that `scale` and `bias` have, then scales and shifts."""

    name = "glow.layer_normalization"
    epsilon = float_attr(1e-5)
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = FUNCTIONAL_FORMAT

    def check(self) -> None:
        shape = shape_of(self.input)
        require_elem("input", self.input, is_float, "floating-point")
        sshape = shape_of(self.scale)
        require(0 < len(sshape) <= len(shape) and tuple(shape[len(shape) - len(sshape):]) == sshape,
                f"scale shape {fmt_shape(sshape)} must equal the trailing dims of the input "
                f"{fmt_shape(shape)}")
        require_shape("bias", self.bias, sshape, "same as scale")
        if self.result.type != self.input.type:
            fail(f"result type {self.result.type} must equal the input type {self.input.type}")


@irdl_op_definition
class LocalResponseNormalizationOp(GlowOp):
    """Across-channel LRN: x / (k + alpha / size * sum(x^2 over the window)) ^ beta."""

    name = "glow.local_response_normalization"
    half_window_size = int_attr(required=True)
    alpha = float_attr(1e-4)
    beta = float_attr(0.75)
    k = float_attr(1.0)
    layout = str_attr(Layout, Layout.NCHW)
    T: ClassVar = SAME_TYPE
    input = operand_def(T)
    result = result_def(T)
    assembly_format = "$input attr-dict `:` type($result)"

    def check(self) -> None:
        require_rank("input", self.input, 4)
        require_elem("input", self.input, is_float, "floating-point")
        require(self.int_attr("half_window_size") >= 0, "half_window_size must be >= 0")


class _SoftMaxOp(GlowOp):
    axis = int_attr(-1)
    T: ClassVar = SAME_TYPE
    input = operand_def(T)
    result = result_def(T)
    assembly_format = "$input attr-dict `:` type($result)"

    def check(self) -> None:
        require_elem("input", self.input, is_float, "floating-point")
        normalize_axis(self.int_attr("axis"), len(shape_of(self.input)))


@irdl_op_definition
class SoftMaxOp(_SoftMaxOp):
    """exp(x) / sum(exp(x)) along `axis` (default: the last)."""

    name = "glow.soft_max"


@irdl_op_definition
class LogSoftMaxOp(_SoftMaxOp):
    """log(soft_max(x)) along `axis`, computed stably."""

    name = "glow.log_soft_max"


COORDINATE_MODES = tuple(CoordinateMode)
NEAREST_MODES = tuple(NearestMode)


class _ResizeOp(GlowOp):
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def check(self) -> None:
        shape, out = shape_of(self.input), shape_of(self.result)
        require(
            len(shape) == len(out), f"result rank {len(out)} must equal input rank {len(shape)}"
        )
        require_same_elem("input and result", self.input, self.result)
        scale = self.floats("scale")
        require(len(scale) == len(shape),
                f"scale has {len(scale)} entries, expected one per dim ({len(shape)})")
        require(all(s > 0 and math.isfinite(s) for s in scale),
                f"scale must be positive and finite, got {list(scale)}")
        for i, (d, o, s) in enumerate(zip(shape, out, scale)):
            require(abs(d * s - o) < 1.0 or math.floor(d * s) == o,
                    f"result dim {i} is {o}, but input {d} x scale {s} gives {d * s:g}")


@irdl_op_definition
class ResizeNearestOp(_ResizeOp):
    """Nearest-neighbour resize with ONNX's coordinate transformation and nearest modes."""

    name = "glow.resize_nearest"
    scale = floats_attr(required=True)
    coordinate_transformation_mode = str_attr(CoordinateMode, CoordinateMode.ASYMMETRIC)
    nearest_mode = str_attr(NearestMode, NearestMode.FLOOR)

    def check(self) -> None:
        super().check()


@irdl_op_definition
class ResizeBilinearOp(_ResizeOp):
    """(Bi)linear resize over every dim whose scale is not 1."""

    name = "glow.resize_bilinear"
    scale = floats_attr(required=True)
    coordinate_transformation_mode = str_attr(CoordinateMode, CoordinateMode.ASYMMETRIC)

    def check(self) -> None:
        super().check()
        require_elem("input", self.input, is_float, "floating-point")


@irdl_op_definition
class SpaceToDepthOp(GlowOp):
    """NCHW [N, C, H, W] -> [N, C*b*b, H/b, W/b], as ONNX SpaceToDepth."""

    name = "glow.space_to_depth"
    block_size = int_attr(required=True)
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def check(self) -> None:
        require_rank("input", self.input, 4)
        b = self.int_attr("block_size")
        require(b > 0, f"block_size must be positive, got {b}")
        n, c, h, w = shape_of(self.input)
        require(h % b == 0 and w % b == 0, f"block_size {b} must divide H {h} and W {w}")
        require_shape("result", self.result, (n, c * b * b, h // b, w // b))
        require_same_elem("input and result", self.input, self.result)


@irdl_op_definition
class RoiAlignOp(GlowOp):
    """ONNX RoiAlign (Mask R-CNN's): roi r, [x1, y1, x2, y2] on image batch_indices[r] scaled
    by `spatial_scale`, cut into the result's H x W bins, each the mean (`mode` "max":
    onnxruntime's max of weighted corners) of bilinear samples on a grid of
    `sampling_ratio`^2 per bin, or of ceil(bin size) per side when 0, decided per roi at
    run time. `aligned` is the half_pixel coordinate mode (a -0.5 shift, no minimum roi
    size of 1)."""

    name = "glow.roi_align"
    mode = str_attr(("avg", "max"), "avg")
    sampling_ratio = int_attr(0)
    spatial_scale = float_attr(1.0)
    aligned = bool_attr(False)
    input = operand_def(TensorType)
    rois = operand_def(TensorType)
    batch_indices = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = FUNCTIONAL_FORMAT

    def check(self) -> None:
        require_rank("input", self.input, 4)
        require_elem("input", self.input, is_float, "floating-point")
        require_same_elem("input and rois", self.input, self.rois)
        require_same_elem("input and result", self.input, self.result)
        require_elem("batch_indices", self.batch_indices, is_int, "integer")
        rois = shape_of(self.rois)
        require(len(rois) == 2 and rois[1] == 4, f"rois must be [num_rois, 4], got "
                f"{fmt_shape(rois)}")
        require_shape("batch_indices", self.batch_indices, (rois[0],), "[num_rois]")
        out = shape_of(self.result)
        require(len(out) == 4 and out[0] == rois[0] and out[1] == shape_of(self.input)[1],
                f"result must be [num_rois {rois[0]}, C {shape_of(self.input)[1]}, h, w], got "
                f"{fmt_shape(out)}")
        require(self.int_attr("sampling_ratio") >= 0,
                f"sampling_ratio must be >= 0, got {self.int_attr('sampling_ratio')}")

    def input_checks(self) -> list[tuple[SSAValue, InputCheck]]:
        """Rois that are a model input must be finite (onnxruntime refuses others too);
        batch indices must name an image of `input`."""
        images = shape_of(self.input)[0]
        return [(self.rois, InputCheck("RoiAlign rois", finite=True)),
                (self.batch_indices, InputCheck(f"RoiAlign batch indices of {images} image(s)",
                                                low=0, high=images))]


@irdl_op_definition
class NonMaxSuppressionOp(GlowOp):
    """ONNX NonMaxSuppression into a buffer of its upper bound: per batch and class, boxes
    whose score passes `score_threshold` (when `use_score_threshold`), best first (ties:
    lower index), each kept unless its IoU with one kept before exceeds `iou_threshold`,
    at most `max_output_boxes_per_class`; rows [batch, class, box] (i64) for rows < `count`
    (0-d i64), zeros after (ir/bounded_outputs.py). `center_point_box` 1: boxes are
    [x_center, y_center, width, height], else two corners [y1, x1, y2, x2] in any order."""

    name = "glow.non_max_suppression"
    center_point_box = int_attr(0)
    use_score_threshold = bool_attr(True)
    boxes = operand_def(TensorType)
    scores = operand_def(TensorType)
    max_output_boxes_per_class = operand_def(TensorType)
    iou_threshold = operand_def(TensorType)
    score_threshold = operand_def(TensorType)
    selected = result_def(TensorType)
    count = result_def(TensorType)
    assembly_format = FUNCTIONAL_FORMAT

    def input_checks(self) -> list[tuple[SSAValue, InputCheck]]:
        """An IoU threshold that is a model input must be in [0, 1] (onnxruntime refuses
        others; one above 1 would keep every box)."""
        return [(self.iou_threshold, InputCheck("NonMaxSuppression iou_threshold",
                                                between=(0.0, 1.0)))]

    def check(self) -> None:
        boxes, scores = shape_of(self.boxes), shape_of(self.scores)
        require(len(boxes) == 3 and boxes[2] == 4, f"boxes must be [batch, boxes, 4], got "
                f"{fmt_shape(boxes)}")
        require(len(scores) == 3 and scores[0] == boxes[0] and scores[2] == boxes[1],
                f"scores must be [batch {boxes[0]}, classes, boxes {boxes[1]}], got "
                f"{fmt_shape(scores)}")
        for what, v in (("boxes", self.boxes), ("scores", self.scores),
                        ("iou_threshold", self.iou_threshold),
                        ("score_threshold", self.score_threshold)):
            require(elem_of(v) == f32, f"{what} must be f32, got {elem_of(v)}")
        for what, v in (("max_output_boxes_per_class", self.max_output_boxes_per_class),
                        ("iou_threshold", self.iou_threshold),
                        ("score_threshold", self.score_threshold)):
            require(math.prod(shape_of(v)) == 1, f"{what} must hold one value, got "
                    f"{fmt_shape(shape_of(v))}")
        require(elem_of(self.max_output_boxes_per_class) == i64,
                "max_output_boxes_per_class must be i64")
        rows = shape_of(self.selected)
        bound = boxes[0] * scores[1] * boxes[1]
        require(len(rows) == 2 and rows[1] == 3 and 0 < rows[0] <= bound,
                f"selected must be [rows, 3] with 0 < rows <= {bound} (batch x classes x "
                f"boxes), got {fmt_shape(rows)}")
        require(rows[0] % (boxes[0] * scores[1]) == 0,
                f"selected's {rows[0]} rows must be a bound per batch and class")
        require_shape("count", self.count, (), "a scalar")
        for what, v in (("selected", self.selected), ("count", self.count)):
            require(elem_of(v) == i64, f"{what} must be i64, got {elem_of(v)}")
        require(self.int_attr("center_point_box") in (0, 1),
                f"center_point_box must be 0 or 1, got {self.int_attr('center_point_box')}")


NN_OPS = (ConvolutionOp, MaxPoolOp, MaxPoolGradOp, AvgPoolOp, AdaptiveAvgPoolOp,
          FullyConnectedOp, MatMulOp, BatchMatMulOp, BatchedAddOp, BatchNormalizationOp,
          LayerNormalizationOp, LocalResponseNormalizationOp, SoftMaxOp, LogSoftMaxOp,
          ResizeNearestOp, ResizeBilinearOp, SpaceToDepthOp, RoiAlignOp, NonMaxSuppressionOp)
