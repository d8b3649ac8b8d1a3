"""Hand-written accelerator programs (`glow_accel` ops in a `glow_ir.func`) for the
simulator tests, and the text helpers that build them.

`accel_program(weights, body)` writes the function: weights are `(name, declaration,
type)` with declaration "input", "output" or "constant" (a constant's value comes from the
blob of the same name given to `parse_accel`), the body is glow_accel / glow_ir text, and
the function carries `#glow_accel.target<...>` (`TARGET` unless overridden). The programs
below are small enough to check every number by hand; tile offsets are planned (multiples
of 64) unless a test is about the opposite.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import numpy as np

from instr_testing import parse

TARGET = {"scratchpad_bytes": 4096, "dma_bytes_per_cycle": 32, "dma_latency": 64,
          "macs_per_cycle": 256, "vector_width": 16, "alignment": 64}


def target_text(**fields: int) -> str:
    values = {**TARGET, **fields}
    return "#glow_accel.target<" + ", ".join(f"{k} = {v}" for k, v in values.items()) + ">"


def accel_program(weights: Sequence[tuple[str, str, str]], body: str, *,
                  target: Mapping[str, int] | None = None, attrs: str = "",
                  with_target: bool = True) -> str:
    """glow_ir text of @main with `weights` and `body` (see the module docstring);
    `attrs` are more function attributes (`glow_accel.dma_lower_bound = 100 : i64`)."""
    lines = []
    for name, decl, type in weights:
        if decl == "constant":
            tensor = type.replace("memref<", "tensor<")
            lines.append(f"  glow_ir.weight @{name} constant : {type} = "
                         f"dense_resource<{name}> : {tensor}")
        else:
            lines.append(f"  glow_ir.weight @{name} mutable {decl} : {type}")
    args = ", ".join(f"%{name}" for name, _, _ in weights)
    func_attrs = [a for a in (attrs,) if a]
    if with_target:
        func_attrs.append(f"glow_accel.target = {target_text(**(target or {}))}")
    tail = f" attributes {{{', '.join(func_attrs)}}}" if func_attrs else ""
    return ("glow_ir.func @main declare {\n" + "\n".join(lines) + f"\n}} program({args}) {{\n"
            + textwrap.indent(textwrap.dedent(body).strip("\n"), "  ") + "\n}" + tail + "\n")


def parse_accel(text: str, blobs: Mapping[str, np.ndarray] | None = None,
                filename: str = "prog.mlir", verify: bool = True):
    """The module of `text` (locations name `filename`), verified unless `verify` is
    false (for programs the verifier itself rejects)."""
    return parse(text, blobs, filename=filename, verify=verify)


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line of `text` containing `needle` (for locations)."""
    for i, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} is not in the program")


def dma_cycles(nbytes: int) -> int:
    """The cost model's formula, written out for TARGET: latency + ceil(bytes / 32)."""
    return 64 + -(-nbytes // 32)


def compute_cycles(work: int, per_cycle: int) -> int:
    """ceil(work / per_cycle) + 16: MACs / 256 or elements / 16 for TARGET."""
    return -(-work // per_cycle) + 16


# ---------------------------------------------------------------------------- matmul

MATMUL_WEIGHTS = [("a", "input", "memref<4x8xf32>"), ("b", "constant", "memref<8x6xf32>"),
                  ("c", "output", "memref<4x6xf32>")]
"""c[4x6] = a[4x8] @ b[8x6], in two K chunks of 4."""

T_A = "memref<4x4xf32, 1>"
T_B = "memref<4x6xf32, 1>"
T_C = "memref<4x6xf32, 1>"
A_MAIN, B_MAIN, C_MAIN = "memref<4x8xf32>", "memref<8x6xf32>", "memref<4x6xf32>"
MM_TYPES = f"{T_C}, {T_A}, {T_B}"


def load(token: str, src: str, src_offs: str, tile: str, sizes: str, src_type: str,
         tile_type: str) -> str:
    zeros = ", ".join("0" for _ in sizes.split(","))
    return (f"{token} = glow_accel.dma_start {src}[{src_offs}] -> {tile}[{zeros}] sizes "
            f"[{sizes}] : {src_type} -> {tile_type}")


def store(token: str, tile: str, dst: str, dst_offs: str, sizes: str, tile_type: str,
          dst_type: str) -> str:
    zeros = ", ".join("0" for _ in sizes.split(","))
    return (f"{token} = glow_accel.dma_start {tile}[{zeros}] -> {dst}[{dst_offs}] sizes "
            f"[{sizes}] : {tile_type} -> {dst_type}")


MATMUL_BLOCKING = f"""
%ta = glow_accel.scratchpad_alloc {{offset = 0 : i64}} : {T_A}
%tb = glow_accel.scratchpad_alloc {{offset = 64 : i64}} : {T_B}
%tc = glow_accel.scratchpad_alloc {{offset = 192 : i64}} : {T_C}
{load("%k0", "%a", "0, 0", "%ta", "4, 4", A_MAIN, T_A)}
glow_accel.dma_wait %k0
{load("%k1", "%b", "0, 0", "%tb", "4, 6", B_MAIN, T_B)}
glow_accel.dma_wait %k1
glow_accel.matmul @out %tc, @in %ta, @in %tb : {MM_TYPES}
{load("%k2", "%a", "0, 4", "%ta", "4, 4", A_MAIN, T_A)}
glow_accel.dma_wait %k2
{load("%k3", "%b", "4, 0", "%tb", "4, 6", B_MAIN, T_B)}
glow_accel.dma_wait %k3
glow_accel.matmul @inout %tc, @in %ta, @in %tb {{accumulate}} : {MM_TYPES}
{store("%k4", "%tc", "%c", "0, 0", "4, 6", T_C, C_MAIN)}
glow_accel.dma_wait %k4
glow_accel.scratchpad_free %ta : {T_A}
glow_accel.scratchpad_free %tb : {T_B}
glow_accel.scratchpad_free %tc : {T_C}
"""
"""Every transfer waited for right after its start: nothing overlaps."""

MATMUL_BLOCKING_PEAK = 192 + 96

MATMUL_ASYNC = f"""
%ta0 = glow_accel.scratchpad_alloc {{offset = 0 : i64}} : {T_A}
%ta1 = glow_accel.scratchpad_alloc {{offset = 64 : i64}} : {T_A}
%tb0 = glow_accel.scratchpad_alloc {{offset = 128 : i64}} : {T_B}
%tb1 = glow_accel.scratchpad_alloc {{offset = 256 : i64}} : {T_B}
%tc = glow_accel.scratchpad_alloc {{offset = 384 : i64}} : {T_C}
{load("%k0", "%a", "0, 0", "%ta0", "4, 4", A_MAIN, T_A)}
{load("%k1", "%b", "0, 0", "%tb0", "4, 6", B_MAIN, T_B)}
{load("%k2", "%a", "0, 4", "%ta1", "4, 4", A_MAIN, T_A)}
{load("%k3", "%b", "4, 0", "%tb1", "4, 6", B_MAIN, T_B)}
glow_accel.dma_wait %k0, %k1
glow_accel.matmul @out %tc, @in %ta0, @in %tb0 : {MM_TYPES}
glow_accel.dma_wait %k2, %k3
glow_accel.matmul @inout %tc, @in %ta1, @in %tb1 {{accumulate}} : {MM_TYPES}
{store("%k4", "%tc", "%c", "0, 0", "4, 6", T_C, C_MAIN)}
glow_accel.dma_wait %k4
glow_accel.scratchpad_free %ta0 : {T_A}
glow_accel.scratchpad_free %ta1 : {T_A}
glow_accel.scratchpad_free %tb0 : {T_B}
glow_accel.scratchpad_free %tb1 : {T_B}
glow_accel.scratchpad_free %tc : {T_C}
"""
"""The second chunk's loads start before the first matmul: they run under it."""

MATMUL_ASYNC_PEAK = 384 + 96


def matmul_module(body: str = MATMUL_BLOCKING, seed: int = 0, verify: bool = True,
                  **kwargs):
    """(module, text, b) of a matmul program; b is the constant."""
    b = np.random.default_rng(seed).standard_normal((8, 6)).astype(np.float32)
    text = accel_program(MATMUL_WEIGHTS, body, **kwargs)
    return parse_accel(text, {"b": b}, verify=verify), text, b


# ---------------------------------------------------------------------------- conv

CONV_WEIGHTS = [("x", "input", "memref<1x4x5x5xf32>"), ("w", "constant", "memref<2x4x3x3xf32>"),
                ("y", "output", "memref<1x2x5x5xf32>")]
"""y = relu(conv3x3(x, w)), pads 1, no bias, the 4 input channels in two chunks of 2."""

T_X = "memref<1x2x5x5xf32, 1>"
T_W = "memref<2x2x3x3xf32, 1>"
T_Y = "memref<1x2x5x5xf32, 1>"
CONV_ATTRS = "kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>"
CONV_TYPES = f"{T_Y}, {T_X}, {T_W}"

CONV_ACCUMULATE = f"""
%tx = glow_accel.scratchpad_alloc {{offset = 0 : i64}} : {T_X}
%tw = glow_accel.scratchpad_alloc {{offset = 256 : i64}} : {T_W}
%ty = glow_accel.scratchpad_alloc {{offset = 448 : i64}} : {T_Y}
{load("%k0", "%x", "0, 0, 0, 0", "%tx", "1, 2, 5, 5", "memref<1x4x5x5xf32>", T_X)}
{load("%k1", "%w", "0, 0, 0, 0", "%tw", "2, 2, 3, 3", "memref<2x4x3x3xf32>", T_W)}
glow_accel.dma_wait %k0, %k1
glow_accel.conv @out %ty, @in %tx, @in %tw {{{CONV_ATTRS}}} : {CONV_TYPES}
{load("%k2", "%x", "0, 2, 0, 0", "%tx", "1, 2, 5, 5", "memref<1x4x5x5xf32>", T_X)}
{load("%k3", "%w", "0, 2, 0, 0", "%tw", "2, 2, 3, 3", "memref<2x4x3x3xf32>", T_W)}
glow_accel.dma_wait %k2, %k3
glow_accel.conv @inout %ty, @in %tx, @in %tw {{accumulate, {CONV_ATTRS},
    fused_activation = "relu"}} : {CONV_TYPES}
{store("%k4", "%ty", "%y", "0, 0, 0, 0", "1, 2, 5, 5", T_Y, "memref<1x2x5x5xf32>")}
glow_accel.dma_wait %k4
glow_accel.scratchpad_free %tx : {T_X}
glow_accel.scratchpad_free %tw : {T_W}
glow_accel.scratchpad_free %ty : {T_Y}
"""


def conv_reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """3x3 convolution with pads 1, NCHW / OIHW, no bias (float64 loops)."""
    n, c, h, wd = x.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return out


# ---------------------------------------------------------------------------- vector unit

VEC_WEIGHTS = [("p", "input", "memref<2x8xf32>"), ("q", "input", "memref<2x8xf32>"),
               ("s", "output", "memref<2x8xf32>"), ("m", "output", "memref<1x1x1x4xf32>")]
"""s = relu(p + q) (element_add, relu in place, then a copy to another tile); m = 2x2
max_pool of p seen as a 1x1x2x8 image (a tensor_view, loaded as a 4-D box)."""

T_V = "memref<2x8xf32, 1>"
T_IMG = "memref<1x1x2x8xf32, 1>"
T_POOL = "memref<1x1x1x4xf32, 1>"

VECTOR_OPS = f"""
%tp = glow_accel.scratchpad_alloc {{offset = 0 : i64}} : {T_V}
%tq = glow_accel.scratchpad_alloc {{offset = 64 : i64}} : {T_V}
%ts = glow_accel.scratchpad_alloc {{offset = 128 : i64}} : {T_V}
%tt = glow_accel.scratchpad_alloc {{offset = 192 : i64}} : {T_V}
{load("%k0", "%p", "0, 0", "%tp", "2, 8", "memref<2x8xf32>", T_V)}
{load("%k1", "%q", "0, 0", "%tq", "2, 8", "memref<2x8xf32>", T_V)}
glow_accel.dma_wait %k0, %k1
glow_accel.elementwise @out %ts, @in %tp, @in %tq {{kind = "element_add"}} : {T_V}
glow_accel.elementwise @out %ts, @in %ts {{kind = "relu"}} : {T_V}
glow_accel.elementwise @out %tt, @in %ts {{kind = "copy"}} : {T_V}
{store("%k2", "%tt", "%s", "0, 0", "2, 8", T_V, "memref<2x8xf32>")}
glow_accel.dma_wait %k2
%pv = glow_ir.tensor_view %p[0, 0] : memref<2x8xf32> to memref<1x1x2x8xf32>
%img = glow_accel.scratchpad_alloc {{offset = 256 : i64}} : {T_IMG}
{load("%k3", "%pv", "0, 0, 0, 0", "%img", "1, 1, 2, 8", "memref<1x1x2x8xf32>", T_IMG)}
glow_accel.dma_wait %k3
%tm = glow_accel.scratchpad_alloc {{offset = 384 : i64}} : {T_POOL}
glow_accel.pool @out %tm, @in %img {{kind = "max_pool", kernels = array<i64: 2, 2>,
    strides = array<i64: 2, 2>}} : {T_POOL}, {T_IMG}
{store("%k4", "%tm", "%m", "0, 0, 0, 0", "1, 1, 1, 4", T_POOL, "memref<1x1x1x4xf32>")}
glow_accel.dma_wait %k4
glow_accel.scratchpad_free %tp : {T_V}
glow_accel.scratchpad_free %tq : {T_V}
glow_accel.scratchpad_free %ts : {T_V}
glow_accel.scratchpad_free %tt : {T_V}
glow_accel.scratchpad_free %img : {T_IMG}
glow_accel.scratchpad_free %tm : {T_POOL}
"""
