"""Random well-typed `glow` graphs for numerical tests (a hypothesis strategy).

`glow_graphs(...)` draws a `GeneratedGraph`: a `builtin.module` with one `func.func`
(`@main`) whose body is a chain or a DAG of `glow` ops with valid static shapes, the input
arrays to run it on (float32, fixed per example, drawn by hypothesis) and a one-line
description. Every generated module verifies (`verify_module`) and round-trips through
`print_module`/`parse_module`; its outputs are finite and of moderate size for the drawn
inputs, and for any other inputs drawn from `input_ranges` (`GeneratedGraph.random_inputs`).

How later issues use it: the reference evaluator is the oracle, anything else must give
the same numbers.

    from hypothesis import given, settings
    from glow_graphs import glow_graphs, evaluate, clone_module, assert_outputs_close

    @settings(max_examples=50, deadline=None)
    @given(glow_graphs(max_ops=8))
    def test_my_pass_preserves_numbers(g):
        before = evaluate(g)
        module = clone_module(g)              # deep copy, own resource table
        run_pipeline(module, "my-pass")        # glow_mlir.conversion.pass_runner
        verify_module(module)
        assert_outputs_close(g, before, evaluate(g, module))

    # a backend that supports only some ops, on graphs shaped like CNNs:
    @given(glow_graphs(families=["convolution", "pool", "activation", "batch_normalization",
                                 "reshape", "fully_connected"], exclude=["glow.gelu"]))
    def test_cpu_backend(g): ...

Options of `glow_graphs` (all keyword-only):

- `families`: op families (keys of `FAMILIES`), aliases (keys of `ALIASES`, e.g.
  "elementwise", "data", "nn") or single op names ("glow.relu"); default: all. Only ops of
  these families appear (plus `glow.constant`/`glow.splat` when `allow_constants`): glue that
  would need a missing op (a reshape to reach rank 4, `abs(x) + 1` before a log, a
  broadcast) is replaced by a fresh function input of the needed shape and range.
- `exclude`: families or op names to leave out.
- `max_ops` / `min_ops`: the number of non-constant ops is drawn in this range (a pattern in
  flight may add a few more than `max_ops`).
- `allow_constants`: weights as `glow.constant` (`dense_resource` blobs added with
  `add_resource`, small `dense<...>` literals, `glow.splat`) and constant-only sub-graphs;
  when False every weight is a function input (and `glow.gather`, which needs constant
  indices, is not generated).
- `max_outputs`: the function returns 1..max_outputs values (extra ones are other leaves,
  values also used inside the graph, index/mask results of arg_max/top_k/cmp ops).
- `topology`: "chain" (every op consumes the previous op's result, plus weights, constants
  and fresh inputs; a chain restarts from a fresh input only when the next op cannot take
  the previous result: an op that needs exact operands after an inexact one, a rank that
  no allowed reshape reaches), "dag" (operands come from anywhere: residual adds, branches
  joined by concat, values used twice), or "any" (drawn).
- `patterns`: True (all of `PATTERNS`), False, or an iterable of pattern names. Patterns
  are what graph optimizers look for and appear with good probability: transpose pairs
  (with an element-wise op between them), reshape chains, conv -> batch_normalization,
  conv/fully_connected -> relu/clip/sigmoid/tanh/leaky_relu, mat_mul -> batched_add,
  pad -> conv, duplicate sub-expressions, dead ops, constant-only sub-graphs, arithmetic
  chains with constants, no-op ops, spatial means, concat of concat, residual adds,
  branches joined by concat, x * sigmoid(x). `GeneratedGraph.patterns` lists those drawn.
- `max_elements`: the largest tensor size (elements).
- `fused_activations`: also put `fused_activation` attributes on convolution and
  fully_connected (as `fuse-activations` would).

Numerical safety, by construction (the generator tracks an interval for every value):
log/sqrt/rsqrt/reciprocal, divisors and pow bases get operands >= 0.25 (an existing value
that is, or `abs(x) + c`, `sigmoid(x) + c`, `exp(clip(x))` built in the graph, or a fresh
positive input); pow exponents are in [-2, 2]; exp gets operands <= 6; values whose bound
grows past 8 are squashed (tanh, sigmoid, clip or a multiplication by a power of two)
before further use, and outputs past 64 when possible. Discontinuous ops (floor, ceil,
round, comparisons, arg_max/arg_min, top_k, nearest resize, conversions to integers, f16
and quantized types) only see "exact" values: inputs, constants and results of ops that
round nothing (data movement, relu, max, clip, scaling by powers of two, ...), so any correct
implementation gives the same result bit for bit, whatever order it sums in. For the same
reason input elements are never subnormal nor below 2**-20 in magnitude (except 0 and -0),
quantization scales are powers of two, nearest resize uses scales 0.5, 1, 2 and no
align_corners, and top_k's indices are never returned (their order at equal values is not
specified). Layer normalization uses epsilon >= 0.01 so that nearly constant rows do not
amplify rounding differences; pools never have windows made of padding only.
`GeneratedGraph.output_bounds` are conservative bounds of |output| (checked against the
reference evaluator by test_glow_graphs.py); `assert_outputs_close` scales its absolute
tolerance by them.

Failing examples print as their IR text and input arrays (`GeneratedGraph.__repr__`), so
they can be pasted into a .mlir file; hypothesis shrinks them towards fewer, smaller ops.
"""

from __future__ import annotations

import io
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from hypothesis import reject
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float16Type,
    IntegerType,
    ModuleOp,
    TensorType,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Block, Region, SSAValue

from glow_mlir.dialects import glow
from glow_mlir.dialects.context import make_context
from glow_mlir.dialects.glow_ops.scalar import Arg, Call, Const, Expr
from glow_mlir.dialects.glow_ops.shapes import image_dims, image_shape, spatial_out
from glow_mlir.dialects.glow_ops.traits import scalar_body
from glow_mlir.ir.resources import add_resource
from glow_mlir.ir.text import parse_module, print_module, verify_module

__all__ = [
    "GeneratedGraph",
    "glow_graphs",
    "evaluate",
    "clone_module",
    "module_text",
    "assert_outputs_close",
    "FAMILIES",
    "ALIASES",
    "PATTERNS",
    "ALL_GENERATED_OPS",
]

# ====================================================================== vocabulary

FAMILIES: dict[str, tuple[str, ...]] = {
    "unary": ("glow.abs", "glow.neg", "glow.exp", "glow.log", "glow.sqrt", "glow.rsqrt",
              "glow.reciprocal", "glow.erf", "glow.sin", "glow.cos", "glow.floor",
              "glow.ceil", "glow.round"),
    "activation": ("glow.relu", "glow.sigmoid", "glow.tanh", "glow.gelu", "glow.swish",
                   "glow.leaky_relu", "glow.clip", "glow.prelu"),
    "binary": ("glow.add", "glow.sub", "glow.mul", "glow.div", "glow.max", "glow.min",
               "glow.pow"),
    "compare": ("glow.cmp_eq", "glow.cmp_lt", "glow.cmp_lte", "glow.select", "glow.and",
                "glow.or", "glow.xor", "glow.not"),
    "convolution": ("glow.convolution",),
    "pool": ("glow.max_pool", "glow.avg_pool", "glow.adaptive_avg_pool"),
    "fully_connected": ("glow.fully_connected",),
    "mat_mul": ("glow.mat_mul",),
    "batch_mat_mul": ("glow.batch_mat_mul",),
    "batched_add": ("glow.batched_add",),
    "batch_normalization": ("glow.batch_normalization",),
    "layer_normalization": ("glow.layer_normalization",),
    "local_response_normalization": ("glow.local_response_normalization",),
    "softmax": ("glow.soft_max", "glow.log_soft_max"),
    "reshape": ("glow.reshape",),
    "transpose": ("glow.transpose",),
    "concat": ("glow.concat",),
    "slice": ("glow.slice",),
    "broadcast": ("glow.broadcast",),
    "pad": ("glow.pad",),
    "tile": ("glow.tile",),
    "insert_tensor": ("glow.insert_tensor",),
    "gather": ("glow.gather",),
    "reduction": ("glow.batched_reduce_add", "glow.batched_reduce_mean",
                  "glow.batched_reduce_max", "glow.batched_reduce_min",
                  "glow.batched_reduce_prod"),
    "arg": ("glow.arg_max", "glow.arg_min", "glow.top_k"),
    "resize": ("glow.resize_nearest", "glow.resize_bilinear"),
    "space_to_depth": ("glow.space_to_depth",),
    "convert": ("glow.convert_to", "glow.quantize", "glow.dequantize",
                "glow.rescale_quantized"),
}
"""Op families a generated graph draws its ops from (every float-computing glow op)."""

BODY_UNARY: tuple[str, ...] = tuple(
    op.name for op in glow.UNARY_OPS if scalar_body(op) is not None
    and not any(op.name in ops for ops in FAMILIES.values()))
"""Unary ops defined by their scalar body (trait `ScalarBody`, e.g. glow.softsign) that no
family lists: drawn with the unary family, their output bounds from interval arithmetic
on the body."""
FAMILIES["unary"] += BODY_UNARY

ALIASES: dict[str, tuple[str, ...]] = {
    "elementwise": ("unary", "activation", "binary"),
    "nn": ("convolution", "pool", "fully_connected", "mat_mul", "batch_mat_mul",
           "batched_add", "batch_normalization", "layer_normalization",
           "local_response_normalization", "softmax"),
    "normalization": ("batch_normalization", "layer_normalization",
                      "local_response_normalization"),
    "data": ("reshape", "transpose", "concat", "slice", "broadcast", "pad", "tile",
             "insert_tensor", "gather"),
    "reductions": ("reduction",),
}

ALL_GENERATED_OPS: frozenset[str] = frozenset(
    op for ops in FAMILIES.values() for op in ops) | {"glow.constant", "glow.splat"}

PATTERNS: dict[str, tuple[str, ...]] = {
    # pattern name -> ops it needs (besides constants)
    "transpose_pair": ("glow.transpose",),
    "reshape_chain": ("glow.reshape",),
    "conv_batchnorm": ("glow.convolution", "glow.batch_normalization"),
    "conv_activation": ("glow.convolution",),
    "fc_activation": ("glow.fully_connected",),
    "matmul_bias": ("glow.mat_mul",),
    "pad_conv": ("glow.pad", "glow.convolution"),
    "channel_bias_add": ("glow.convolution", "glow.broadcast", "glow.add"),
    "channel_scale_mul": ("glow.convolution", "glow.broadcast", "glow.mul"),
    "duplicate": (),
    "dead_op": (),
    "constant_subgraph": (),
    "arithmetic_chain": (),
    "noop": (),
    "spatial_mean": ("glow.batched_reduce_mean",),
    "conv_avg_pool": ("glow.convolution", "glow.avg_pool"),
    "concat_concat": ("glow.concat",),
    "residual": ("glow.add",),
    "branches": (),
    "self_gated": ("glow.sigmoid", "glow.mul"),
}
"""Shapes graph optimizers look for; see the module docstring."""

_FAMILY_WEIGHTS = {"unary": 2, "activation": 2, "binary": 2, "convolution": 2}
"""Families drawn more often than the others (the common ops of real graphs)."""
_FUSABLE = ("glow.relu", "glow.clip", "glow.sigmoid", "glow.tanh", "glow.leaky_relu")
_SAFE_SAME_SHAPE = ("glow.relu", "glow.tanh", "glow.sigmoid", "glow.neg", "glow.abs",
                    "glow.clip", "glow.leaky_relu", "glow.swish", "glow.gelu", "glow.erf")
_EXACT_UNARY = ("glow.abs", "glow.neg", "glow.floor", "glow.ceil", "glow.round",
                "glow.relu", "glow.clip")
_ROUNDING = ("glow.floor", "glow.ceil", "glow.round")
_POSITIVE_ARG = ("glow.log", "glow.sqrt", "glow.rsqrt", "glow.reciprocal")

SOFT = 8.0
"""Values with a larger bound are squashed before an op that could amplify them."""
HARD = 4096.0
"""No value may have a larger bound (the op is not emitted)."""
OUT_LIMIT = 64.0
"""Outputs with a larger bound are squashed when a squashing op is allowed."""
MIN_POSITIVE = 0.25
"""Lower bound of operands of log, sqrt, rsqrt, reciprocal, div (divisor), pow (base)."""


def _op_class(name: str) -> type[glow.GlowOp]:
    return glow.OPS_BY_NAME[name]


# ====================================================================== results


@dataclass
class GeneratedGraph:
    """One drawn graph: run `module`'s `function` on `inputs`."""

    module: ModuleOp
    function: str
    inputs: list[np.ndarray]
    description: str
    input_ranges: list[tuple[float, float]] = field(default_factory=list)
    """Each input's elements lie in this closed range; others drawn from it are safe too."""
    output_bounds: list[float] = field(default_factory=list)
    """Conservative bounds of |element| per output (1 for integer/bool outputs)."""
    patterns: tuple[str, ...] = ()
    """The optimizer patterns drawn into this graph (names from `PATTERNS`)."""

    @property
    def text(self) -> str:
        return module_text(self.module)

    @property
    def op_names(self) -> Counter:
        """How often each glow op occurs."""
        return Counter(op.name for op in self.module.walk() if op.name.startswith("glow."))

    def random_inputs(self, seed: int | np.random.Generator = 0) -> list[np.ndarray]:
        """Other inputs from `input_ranges` (same shapes), e.g. to run a backend twice."""
        rng = np.random.default_rng(seed)
        return [rng.uniform(lo, hi, x.shape).astype(np.float32)
                for x, (lo, hi) in zip(self.inputs, self.input_ranges)]

    def __repr__(self) -> str:
        with np.printoptions(precision=9, threshold=100_000, linewidth=100):
            inputs = "\n".join(f"  input {i}: {x.shape}\n{x!r}" for i, x in enumerate(self.inputs))
        return (f"GeneratedGraph({self.description})\n{self.text}\ninputs:\n{inputs}\n"
                f"output bounds: {self.output_bounds}")

    def _repr_pretty_(self, printer, cycle) -> None:
        """What hypothesis prints for a falsifying example (instead of every field)."""
        printer.text(repr(self))


# ====================================================================== helpers for tests




def module_text(module: ModuleOp) -> str:
    """The module as MLIR text, with its `dialect_resources` blobs."""
    out = io.StringIO()
    print_module(module, out, make_context())
    return out.getvalue()


def clone_module(source: GeneratedGraph | ModuleOp) -> ModuleOp:
    """A deep copy (through text, keeping weights) with its own resource table."""
    module = source.module if isinstance(source, GeneratedGraph) else source
    ctx = make_context()
    out = io.StringIO()
    print_module(module, out, ctx)
    return parse_module(ctx, out.getvalue(), "<clone>")


def evaluate(generated: GeneratedGraph, module: ModuleOp | None = None,
             inputs: Sequence[np.ndarray] | None = None) -> list[np.ndarray]:
    """The reference evaluator's outputs for `module` (default: the generated one) on
    `inputs` (default: the generated ones)."""
    from glow_mlir.targets.interpreter import evaluate_module

    return evaluate_module(module if module is not None else generated.module,
                           list(generated.inputs if inputs is None else inputs),
                           function=generated.function)


def assert_outputs_close(generated: GeneratedGraph, expected: Sequence[np.ndarray],
                         got: Sequence[np.ndarray], rtol: float = 1e-4, atol: float = 1e-5,
                         what: str = "") -> None:
    """Same number of outputs, same shapes and dtypes, values within rtol and
    atol * max(1, output bound) (integer and bool outputs must be equal)."""
    assert len(expected) == len(got), f"{what}: {len(expected)} outputs, got {len(got)}"
    for i, (e, g) in enumerate(zip(expected, got)):
        e, g = np.asarray(e), np.asarray(g)
        assert e.shape == g.shape, f"{what}: output {i} shape {g.shape}, expected {e.shape}"
        assert e.dtype == g.dtype, f"{what}: output {i} dtype {g.dtype}, expected {e.dtype}"
        if e.dtype.kind in "f":
            bound = generated.output_bounds[i] if i < len(generated.output_bounds) else 1.0
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol * max(1.0, bound),
                                       err_msg=f"{what}: output {i}")
        else:
            np.testing.assert_array_equal(g, e, err_msg=f"{what}: output {i}")


# ====================================================================== the strategy


def _resolve(items: Iterable[str]) -> set[str]:
    ops: set[str] = set()
    for item in items:
        if item in ALIASES:
            ops |= _resolve(ALIASES[item])
        elif item in FAMILIES:
            ops |= set(FAMILIES[item])
        elif item.startswith("glow.") and item in ALL_GENERATED_OPS:
            ops.add(item)
        else:
            raise ValueError(f"unknown op family or op {item!r}; families: "
                             f"{', '.join(FAMILIES)}; aliases: {', '.join(ALIASES)}")
    return ops


@dataclass(frozen=True)
class _Config:
    ops: frozenset[str]
    families: tuple[str, ...]
    patterns: tuple[str, ...]
    max_ops: int
    min_ops: int
    allow_constants: bool
    max_outputs: int
    topology: str
    max_elements: int
    fused_activations: bool


def glow_graphs(*, families: Iterable[str] | None = None, exclude: Iterable[str] = (),
                max_ops: int = 8, min_ops: int = 1, allow_constants: bool = True,
                max_outputs: int = 2, topology: str = "any",
                patterns: bool | Iterable[str] = True, max_elements: int = 256,
                fused_activations: bool = False) -> st.SearchStrategy[GeneratedGraph]:
    """A strategy of random well-typed glow graphs; see the module docstring."""
    ops = _resolve(FAMILIES if families is None else families) - _resolve(exclude)
    fams = tuple(f for f, members in FAMILIES.items() if set(members) & ops)
    if not fams:
        raise ValueError("no op left to generate")
    if topology not in ("chain", "dag", "any"):
        raise ValueError(f"topology must be 'chain', 'dag' or 'any', got {topology!r}")
    if patterns is True:
        pats = tuple(PATTERNS)
    elif patterns is False:
        pats = ()
    else:
        pats = tuple(patterns)
        unknown = [p for p in pats if p not in PATTERNS]
        if unknown:
            raise ValueError(f"unknown patterns {unknown}; known: {', '.join(PATTERNS)}")
    if not 1 <= min_ops <= max_ops:
        raise ValueError(f"need 1 <= min_ops <= max_ops, got {min_ops}, {max_ops}")
    if max_outputs < 1 or max_elements < 16:
        raise ValueError("need max_outputs >= 1 and max_elements >= 16")
    cfg = _Config(frozenset(ops), fams, pats, max_ops, min_ops, allow_constants, max_outputs,
                  topology, max_elements, fused_activations)
    return _graphs(cfg)


@st.composite
def _graphs(draw, cfg: _Config) -> GeneratedGraph:
    return _Builder(draw, cfg).build()


# ====================================================================== intervals


def _imul(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    c = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
    return min(c), max(c)


def _ELEMENTS(lo: float, hi: float) -> st.SearchStrategy[float]:
    """Input elements: hypothesis' favourite floats (0, -0, ends, ...) but nothing below
    2**-20 in magnitude, so that no exact path (see the module docstring) ever meets a
    subnormal, which a backend flushing them to zero would compute differently."""
    tiny = 2.0 ** -20
    return st.floats(lo, hi, width=32, allow_subnormal=False).map(
        lambda v: v if v == 0.0 or abs(v) >= tiny else (0.0 if lo <= 0.0 <= hi else lo))


def _f32_inward(lo: float, hi: float) -> tuple[float, float]:
    """[lo, hi] shrunk to float32-representable ends (hypothesis needs exact bounds)."""
    lo32, hi32 = np.float32(lo), np.float32(hi)
    if float(lo32) < lo:
        lo32 = np.nextafter(lo32, np.float32(np.inf))
    if float(hi32) > hi:
        hi32 = np.nextafter(hi32, np.float32(-np.inf))
    if lo32 > hi32:
        lo32 = hi32
    return float(lo32), float(hi32)


def _sigmoid(x: float) -> float:
    if x < -700:
        return 0.0
    return 1.0 / (1.0 + math.exp(-x))


def _linear_bounds(rows: np.ndarray | None, w_range: tuple[float, float], fan_in: int,
                   x: tuple[float, float], bias: tuple[float, float]) -> tuple[float, float]:
    """Bounds of sum_j w_j * x_j + b with x_j in x; `rows` = known weights (outputs x fan_in)."""
    if rows is not None:
        w = rows.astype(np.float64)
        hi = np.maximum(w * x[0], w * x[1]).sum(axis=1)
        lo = np.minimum(w * x[0], w * x[1]).sum(axis=1)
        return float(lo.min()) + bias[0], float(hi.max()) + bias[1]
    lo, hi = _imul(w_range, x)
    return lo * fan_in + bias[0], hi * fan_in + bias[1]


def _act_bounds(name: str, lo: float, hi: float, args: Sequence[float] = ()) -> tuple[float, float]:
    if name == "glow.relu":
        return max(lo, 0.0), max(hi, 0.0)
    if name == "glow.sigmoid":
        return _sigmoid(lo), _sigmoid(hi)
    if name == "glow.tanh":
        return math.tanh(lo), math.tanh(hi)
    if name == "glow.gelu":
        return max(-0.2, min(lo, 0.0)), max(hi, 0.0)
    if name == "glow.swish":
        return max(-0.3, min(lo, 0.0)), max(hi, 0.0)
    if name == "glow.leaky_relu":
        a = args[0]
        return (lo if lo >= 0 else a * lo), (hi if hi >= 0 else a * hi)
    if name == "glow.clip":
        c0, c1 = args
        return min(max(lo, c0), c1), min(max(hi, c0), c1)
    if name == "glow.abs":
        return (0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi))), max(abs(lo), abs(hi))
    if name == "glow.neg":
        return -hi, -lo
    if name == "glow.erf":
        return math.erf(lo), math.erf(hi)
    if name == "glow.exp":
        return (math.exp(lo), math.exp(hi)) if hi < 80 else (0.0, math.inf)
    if name == "glow.log":
        return math.log(lo), math.log(hi)
    if name == "glow.sqrt":
        return math.sqrt(lo), math.sqrt(hi)
    if name == "glow.rsqrt":
        return 1 / math.sqrt(hi), 1 / math.sqrt(lo)
    if name == "glow.reciprocal":
        return 1 / hi, 1 / lo
    if name in ("glow.sin", "glow.cos"):
        return -1.0, 1.0
    if name in _ROUNDING:
        return float(math.floor(lo)), float(math.ceil(hi))
    body = scalar_body(glow.OPS_BY_NAME[name])
    if body is not None:
        return _body_bounds(body, (lo, hi))
    raise AssertionError(name)


_MONOTONE = {"exp": math.exp, "tanh": math.tanh, "erf": math.erf}


def _body_bounds(expr: Expr, x: tuple[float, float]) -> tuple[float, float]:
    """Bounds of a scalar body on operand bounds `x` (interval arithmetic); a body that
    could divide by zero or leave its domain there fails the step."""
    if isinstance(expr, Arg):
        return x
    if isinstance(expr, Const):
        return expr.value, expr.value
    if not isinstance(expr, Call):
        raise _Failed(f"no bounds for {expr}")
    args = [_body_bounds(a, x) for a in expr.args]
    (a_lo, a_hi), (b_lo, b_hi) = args[0], args[-1]
    fn = expr.fn
    if fn == "add":
        return a_lo + b_lo, a_hi + b_hi
    if fn == "sub":
        return a_lo - b_hi, a_hi - b_lo
    if fn == "mul":
        return _imul(args[0], args[1])
    if fn == "div":
        if b_lo <= 0.0 <= b_hi:
            raise _Failed("the body may divide by zero")
        return _imul(args[0], (1 / b_hi, 1 / b_lo))
    if fn == "neg":
        return -a_hi, -a_lo
    if fn == "abs":
        return (0.0 if a_lo <= 0 <= a_hi else min(abs(a_lo), abs(a_hi))), max(abs(a_lo), abs(a_hi))
    if fn == "max":
        return max(a_lo, b_lo), max(a_hi, b_hi)
    if fn == "min":
        return min(a_lo, b_lo), min(a_hi, b_hi)
    if fn in ("log", "sqrt") and a_lo > 0:
        f = math.log if fn == "log" else math.sqrt
        return f(a_lo), f(a_hi)
    if fn == "exp" and a_hi > 80:
        raise _Failed("the body may overflow")
    if fn in _MONOTONE:
        return _MONOTONE[fn](a_lo), _MONOTONE[fn](a_hi)
    raise _Failed(f"no bounds for {fn} on [{a_lo}, {a_hi}]")


# ====================================================================== the builder


@dataclass(eq=False)
class Val:
    """A value of the graph being built with what the generator knows about it."""

    ssa: SSAValue
    shape: tuple[int, ...]
    lo: float = 0.0
    hi: float = 0.0
    exact: bool = False
    """Computed without rounding (inputs, constants, data movement, relu, max, ...)."""
    const: bool = False
    """Depends on constants only."""
    array: np.ndarray | None = None
    """The value itself when known at build time (constants)."""
    layout: str | None = None
    """For convolution results: the layout they were computed in."""
    dead: bool = False
    """Made by a `dead_op` pattern: never used, never returned."""

    @property
    def mag(self) -> float:
        return max(abs(self.lo), abs(self.hi))

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def is_float(self) -> bool:
        return self.ssa.type.get_element_type() == f32  # type: ignore[attr-defined]


class _Failed(Exception):
    """The current step cannot be completed (it leaves only dead ops behind)."""


def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while n > 1 and p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _inverse(perm: Sequence[int]) -> list[int]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


class _Builder:
    def __init__(self, draw, cfg: _Config):
        self.draw = draw
        self.cfg = cfg
        self.rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        self.module = ModuleOp([])
        self.block = Block()
        self.pool: list[Val] = []
        self.head: Val | None = None
        self.extra: list[Val] = []  # non-float results that may become outputs
        self.emitted: list[Val] = []  # every op result made by `emit`
        self.orders: dict[tuple[str, ...], list[str]] = {}
        self.inputs: list[np.ndarray] = []
        self.ranges: list[tuple[float, float]] = []
        self.n_ops = 0
        self.trace: list[str] = []
        self.patterns: list[str] = []
        topology = cfg.topology
        if topology == "any":
            topology = self.choice(["chain", "dag"])
        self.chain = topology == "chain"
        self.topology = topology
        self.weighted_families = [f for f in cfg.families
                                  for _ in range(_FAMILY_WEIGHTS.get(f, 1))]

    # ------------------------------------------------------------------ drawing
    def int(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, max(lo, hi)))

    def choice(self, items: Sequence):
        items = list(items)
        return items[0] if len(items) == 1 else self.draw(st.sampled_from(items))

    def pick_name(self, items: Sequence[str]) -> str:
        """One of `items` (families, patterns, ops of a family). Hypothesis favours the
        first choice, so each list is shuffled once per example, by a drawn permutation
        (shrinking sorts it back; the seed only ever decides values, never structure)."""
        key = tuple(items)
        if len(key) == 1:
            return key[0]
        order = self.orders.get(key)
        if order is None:
            order = self.orders[key] = list(self.draw(st.permutations(key)))
        return self.choice(order)

    def coin(self, p: float) -> bool:
        """True with probability ~p; shrinks to False."""
        return self.draw(st.integers(0, 99)) >= 100 - round(100 * p)

    def ok(self, *names: str) -> bool:
        return all(n in self.cfg.ops for n in names)

    def allowed(self, names: Iterable[str]) -> list[str]:
        return [n for n in names if n in self.cfg.ops]

    # ------------------------------------------------------------------ shapes
    def rand_shape(self, rank: int) -> tuple[int, ...]:
        limits = {1: (16,), 2: (6, 8), 3: (3, 6, 6), 4: (2, 4, 8, 8)}[rank]
        shape = [self.int(1, lim) for lim in limits]
        while int(np.prod(shape)) > self.cfg.max_elements:
            shape[int(np.argmax(shape))] //= 2
        return tuple(shape)

    def factor_shape(self, size: int, rank: int) -> tuple[int, ...]:
        dims = [1] * rank
        for p in _prime_factors(size):
            dims[self.int(0, rank - 1)] *= p
        return tuple(dims)

    def rand_perm(self, rank: int, identity_ok: bool = False) -> list[int]:
        perm = self.draw(st.permutations(list(range(rank))))
        if not identity_ok and perm == sorted(perm) and rank > 1:
            perm = perm[1:] + perm[:1]
        return list(perm)

    def fits(self, shape: Sequence[int]) -> bool:
        return 0 < int(np.prod(shape, dtype=np.int64)) <= self.cfg.max_elements

    # ------------------------------------------------------------------ leaves
    def fresh(self, shape: Sequence[int], lo: float = -2.0, hi: float = 2.0,
              name: str = "x") -> Val:
        """A new function input with elements in [lo, hi]."""
        shape = tuple(shape)
        lo, hi = _f32_inward(lo, hi)
        if self.coin(0.5):
            arr = self.draw(hnp.arrays(np.float32, shape, elements=_ELEMENTS(lo, hi)))
        else:
            arr = self.rng.uniform(lo, hi, shape).astype(np.float32)
        arr = np.clip(arr, np.float32(lo), np.float32(hi)).astype(np.float32)
        arg = self.block.insert_arg(TensorType(f32, shape), len(self.block.args))
        arg.name_hint = f"{name}{len(self.inputs)}"
        self.inputs.append(arr)
        self.ranges.append((float(lo), float(hi)))
        return Val(arg, shape, float(lo), float(hi), exact=True)

    def constant(self, arr: np.ndarray, name: str = "w") -> Val:
        arr = np.ascontiguousarray(arr, dtype=np.float32)
        t = TensorType(f32, arr.shape)
        if arr.size <= 8 or (arr.size <= 64 and self.coin(0.2)):
            flat = arr.ravel()
            values = [float(flat[0])] if np.all(flat == flat[0]) else [float(v) for v in flat]
            attr = DenseIntOrFPElementsAttr.from_list(t, values)
        else:
            attr = add_resource(self.module, name, arr)
        op = glow.ConstantOp.from_attr(attr)
        self.block.add_op(op)
        return Val(op.results[0], arr.shape, float(arr.min()), float(arr.max()), exact=True,
                   const=True, array=arr)

    def splat(self, shape: Sequence[int], value: float) -> Val:
        op = glow.SplatOp.make([], TensorType(f32, tuple(shape)), value=float(value))
        self.block.add_op(op)
        return Val(op.results[0], tuple(shape), float(value), float(value), exact=True,
                   const=True, array=np.full(tuple(shape), value, np.float32))

    def grid_array(self, shape: Sequence[int], lo: float, hi: float) -> np.ndarray:
        step = 1 / 64 if hi - lo < 4 else 1 / 8
        arr = np.round(self.rng.uniform(lo, hi, tuple(shape)) / step) * step
        return np.clip(arr, lo, hi).astype(np.float32)

    def weight(self, shape: Sequence[int], lo: float, hi: float, name: str = "w") -> Val:
        """A constant (mostly) or a function input with elements in [lo, hi]."""
        shape = tuple(shape)
        if not self.cfg.allow_constants or self.coin(0.12):
            return self.fresh(shape, lo, hi, name="w")
        arr = self.grid_array(shape, lo, hi)
        if "constant_subgraph" in self.cfg.patterns and self.coin(0.15):
            v = self.constant_subgraph(arr, name)
            if v is not None:
                return v
        return self.constant(arr, name)

    def constant_subgraph(self, arr: np.ndarray, name: str) -> Val | None:
        """`arr` computed from constants by data movement or a power-of-two scaling."""
        ways = []
        if arr.ndim >= 2 and self.ok("glow.transpose"):
            ways.append("transpose")
        if self.ok("glow.reshape"):
            ways.append("reshape")
        if self.ok("glow.mul"):
            ways.append("scale")
        if not ways:
            return None
        way = self.choice(ways)
        shape = tuple(arr.shape)
        if way == "transpose":
            perm = self.rand_perm(arr.ndim)
            base = self.constant(np.transpose(arr, _inverse(perm)), name)
            v = self.emit("glow.transpose", [base], shape, base.lo, base.hi, exact=True,
                          shuffle=perm)
        elif way == "reshape":
            base = self.constant(arr.reshape(self.factor_shape(arr.size, self.int(1, 3))), name)
            v = self.emit("glow.reshape", [base], shape, base.lo, base.hi, exact=True)
        else:
            s = self.choice([0.5, 2.0, 4.0])
            base = self.constant(arr / np.float32(s), name)
            c = self.splat(shape, s)
            v = self.emit("glow.mul", [base, c], shape, float(arr.min()), float(arr.max()),
                          exact=True)
        v.array = arr
        self.patterns.append("constant_subgraph")
        return v

    # ------------------------------------------------------------------ emitting
    def emit(self, name: str, operands: Sequence[Val], shape: Sequence[int] | None,
             lo: float, hi: float, *, exact: bool = False, elem=f32,
             result_types=None, add: bool = True, **attrs) -> Val:
        """Append op `name`; its (first) result gets the bounds [lo, hi]."""
        assert name in self.cfg.ops, f"generator bug: {name} is not allowed here"
        if not (math.isfinite(lo) and math.isfinite(hi)) or max(abs(lo), abs(hi)) > HARD:
            raise _Failed(f"{name} would reach {lo}..{hi}")
        types = result_types if result_types is not None else [TensorType(elem, tuple(shape))]
        op = _op_class(name).make([v.ssa for v in operands], types, **attrs)
        self.block.add_op(op)
        self.n_ops += 1
        self.trace.append(name.removeprefix("glow."))
        res_shape = tuple(types[0].get_shape())
        const = bool(operands) and all(v.const for v in operands)
        v = Val(op.results[0], res_shape, float(lo), float(hi),
                exact=exact and all(o.exact for o in operands), const=const)
        self.emitted.append(v)
        if add and elem == f32 and not const:
            self.pool.append(v)
            self.head = v
        return v

    # ------------------------------------------------------------------ operand choice
    def pick(self, pred: Callable[[Val], bool]) -> Val | None:
        cands = [v for v in self.pool if pred(v)]
        if not cands:
            return None
        return cands[-1 - self.int(0, len(cands) - 1)]

    def primary(self, ranks: Sequence[int] = (1, 2, 3, 4), exact: bool = False,
                shape_ok: Callable[[tuple[int, ...]], bool] = lambda s: True,
                new_shape: Callable[[int], tuple[int, ...]] | None = None,
                squash: bool = True) -> Val:
        """The main operand of the next op: the head of a chain, any value of a DAG, a
        reshaped value, or a fresh input."""

        def good(v: Val) -> bool:
            return v.rank in ranks and shape_ok(v.shape) and (v.exact or not exact)

        new_shape = new_shape or self.rand_shape
        v = None
        if self.chain:
            if self.head is not None and good(self.head):
                v = self.head
            elif self.head is not None and (self.head.exact or not exact):
                v = self.reshape_to(self.head, ranks, shape_ok)
            elif self.head is not None and self.coin(0.85):
                raise _Failed("an op that needs exact operands cannot continue this chain")
        else:
            if not self.coin(0.08):
                v = self.pick(good)
            if v is None and self.pool and self.coin(0.6):
                src = self.pick(lambda u: u.exact or not exact)
                if src is not None:
                    v = self.reshape_to(src, ranks, shape_ok)
        if v is None:
            v = self.fresh(new_shape(self.choice(list(ranks))))
            self.pool.append(v)  # later ops of a DAG may use this input too
        return self.use(v) if squash and not exact else v

    def reshape_to(self, v: Val, ranks: Sequence[int],
                   shape_ok: Callable[[tuple[int, ...]], bool]) -> Val | None:
        if not self.ok("glow.reshape"):
            return None
        for _ in range(3):
            shape = self.factor_shape(v.size, self.choice(list(ranks)))
            if shape_ok(shape):
                return self.emit("glow.reshape", [v], shape, v.lo, v.hi, exact=True)
        return None

    def use(self, v: Val) -> Val:
        """`v`, squashed first if its bound is large."""
        return self.squash(v) if v.mag > SOFT else v

    def squash(self, v: Val, limit: float = 4.0) -> Val:
        ways = self.allowed(("glow.tanh", "glow.sigmoid", "glow.clip"))
        if self.cfg.allow_constants and self.ok("glow.mul"):
            ways.append("scale")
        if not ways:
            return v
        way = self.choice(ways)
        if way == "scale":
            k = max(1, math.ceil(math.log2(v.mag / limit)))
            s = 2.0 ** -k
            c = self.splat(v.shape, s)
            return self.emit("glow.mul", [v, c], v.shape, v.lo * s, v.hi * s, exact=True)
        if way == "glow.clip":
            lo, hi = _act_bounds(way, v.lo, v.hi, (-limit, limit))
            return self.emit(way, [v], v.shape, lo, hi, exact=True, min=-limit, max=limit)
        lo, hi = _act_bounds(way, v.lo, v.hi)
        return self.emit(way, [v], v.shape, lo, hi)

    def positive(self, v: Val) -> Val:
        """A value >= MIN_POSITIVE of v's shape, computed from v when the ops allow."""
        if v.lo >= MIN_POSITIVE:
            return v
        v = self.use(v)
        ways = []
        adder = self.cfg.allow_constants and self.ok("glow.add")
        if adder and self.ok("glow.abs"):
            ways.append("abs")
        if adder and self.ok("glow.relu"):
            ways.append("relu")
        if adder and self.ok("glow.sigmoid"):
            ways.append("sigmoid")
        if self.ok("glow.exp", "glow.clip"):
            ways.append("exp")
        if not ways:
            return self.fresh(v.shape, 0.5, 2.0)
        way = self.choice(ways)
        if way == "exp":
            lo, hi = _act_bounds("glow.clip", v.lo, v.hi, (-1.0, 2.0))
            c = self.emit("glow.clip", [v], v.shape, lo, hi, exact=True, min=-1.0, max=2.0)
            return self.emit("glow.exp", [c], v.shape, *_act_bounds("glow.exp", c.lo, c.hi))
        name = "glow." + way
        a = self.emit(name, [v], v.shape, *_act_bounds(name, v.lo, v.hi), exact=way != "sigmoid")
        k = self.choice([0.5, 1.0, 2.0])
        c = self.splat(v.shape, k) if self.coin(0.6) else self.constant(
            self.grid_array(v.shape, 0.5, 2.0), "offset")
        return self.emit("glow.add", [a, c], v.shape, a.lo + c.lo, a.hi + c.hi)

    def partner(self, a: Val, lo: float = -2.0, hi: float = 2.0, exact: bool = False,
                in_range: bool = False) -> Val:
        """A second operand of a's shape (a itself, another value, a broadcast, a splat,
        a weight or a fresh input)."""
        shape = a.shape

        def good(v: Val) -> bool:
            return (v.shape == shape and (v.exact or not exact)
                    and (not in_range or (lo <= v.lo and v.hi <= hi)))

        ways = ["weight", "fresh"]
        if good(a):
            ways.append("self")
        if not self.chain and any(good(v) and v is not a for v in self.pool):
            ways += ["pool", "pool"]
        if self.ok("glow.broadcast") and self.coin(0.5):
            ways.append("broadcast")
        if self.cfg.allow_constants:
            ways.append("splat")
        way = self.choice(ways)
        if way == "self":
            return a
        if way == "pool":
            v = self.pick(lambda u: good(u) and u is not a)
            assert v is not None
            return v if exact or in_range else self.use(v)
        if way == "splat":
            return self.splat(shape, float(self.grid_array((), lo, hi)))
        if way == "broadcast":
            v = self.broadcast_into(shape, lo, hi)
            if v is not None:
                return v
        if way == "weight":
            return self.weight(shape, lo, hi)
        return self.fresh(shape, lo, hi)

    def broadcast_into(self, shape: tuple[int, ...], lo: float, hi: float) -> Val | None:
        """broadcast(small weight) to `shape`."""
        r = len(shape)
        axis = self.int(0, r - 1)
        n = self.int(1, r - axis)
        src = tuple(shape[axis + i] if self.coin(0.7) else 1 for i in range(n))
        small = self.weight(src, lo, hi, "b")
        attrs = {} if axis == r - n and self.coin(0.5) else {"axis": axis}
        return self.emit("glow.broadcast", [small], shape, small.lo, small.hi, exact=True,
                         add=False, **attrs)

    def same_shape_op(self, x: Val) -> Val | None:
        """A safe shape-preserving element-wise op on x (residuals, branches, sandwiches)."""
        names = self.allowed(_SAFE_SAME_SHAPE)
        if not names:
            return None
        name = self.pick_name(names)
        return self.activation(name, x)

    # ------------------------------------------------------------------ families
    def f_unary(self) -> Val | None:
        names = self.allowed(FAMILIES["unary"])
        name = self.pick_name(names)
        if name in _ROUNDING:
            x = self.primary(exact=True)
        else:
            x = self.primary()
        if name in _POSITIVE_ARG:
            x = self.positive(x)
        if name == "glow.exp" and x.hi > 6:
            x = self.squash(x)
        if name in ("glow.sin", "glow.cos") and x.mag > 100:
            x = self.squash(x)
        lo, hi = _act_bounds(name, x.lo, x.hi)
        return self.emit(name, [x], x.shape, lo, hi, exact=name in _EXACT_UNARY)

    def activation(self, name: str, x: Val) -> Val:
        attrs: dict = {}
        args: tuple = ()
        if name == "glow.gelu":
            approx = self.choice([None, "none", "tanh"])
            attrs = {"approximate": approx}
        elif name == "glow.leaky_relu":
            args = (self.choice([0.01, 0.1, 0.2, 0.3]),)
            attrs = {"alpha": args[0]}
        elif name == "glow.clip":
            args = self.choice([(0.0, 6.0), (-1.0, 1.0), (-0.5, 2.0), (0.0, 1.0), (-3.0, 3.0)])
            attrs = {"min": args[0], "max": args[1]}
        elif name == "glow.prelu":
            slope = self.partner(x, 0.0, 0.5, in_range=True)
            neg = _imul((min(x.lo, 0.0), min(x.hi, 0.0)), (slope.lo, slope.hi))
            lo = min(neg[0], max(x.lo, 0.0))
            hi = max(neg[1], max(x.hi, 0.0))
            return self.emit(name, [x, slope], x.shape, lo, hi)
        lo, hi = _act_bounds(name, x.lo, x.hi, args)
        return self.emit(name, [x], x.shape, lo, hi, exact=name in _EXACT_UNARY, **attrs)

    def f_activation(self) -> Val | None:
        name = self.pick_name(self.allowed(FAMILIES["activation"]))
        return self.activation(name, self.primary())

    def binary(self, name: str, a: Val, b: Val) -> Val:
        if name == "glow.add":
            lo, hi = a.lo + b.lo, a.hi + b.hi
        elif name == "glow.sub":
            lo, hi = a.lo - b.hi, a.hi - b.lo
        elif name == "glow.mul":
            lo, hi = _imul((a.lo, a.hi), (b.lo, b.hi))
        elif name == "glow.div":
            assert b.lo >= MIN_POSITIVE
            lo, hi = _imul((a.lo, a.hi), (1 / b.hi, 1 / b.lo))
        elif name == "glow.max":
            lo, hi = max(a.lo, b.lo), max(a.hi, b.hi)
        elif name == "glow.min":
            lo, hi = min(a.lo, b.lo), min(a.hi, b.hi)
        else:  # pow
            assert a.lo >= MIN_POSITIVE and -2 <= b.lo and b.hi <= 2
            c = [x ** e for x in (a.lo, a.hi) for e in (b.lo, b.hi)]
            lo, hi = min(c), max(c)
        return self.emit(name, [a, b], a.shape, lo, hi,
                         exact=name in ("glow.max", "glow.min"))

    def f_binary(self) -> Val | None:
        name = self.pick_name(self.allowed(FAMILIES["binary"]))
        a = self.primary()
        if name == "glow.pow":
            a = self.positive(a)
            b = self.partner(a, -2.0, 2.0, in_range=True)
        elif name == "glow.div":
            b = self.positive(self.partner(a))
        else:
            b = self.partner(a)
        if self.coin(0.15) and name not in ("glow.div", "glow.pow"):
            a, b = b, a
        return self.binary(name, a, b)

    def condition(self, shape: tuple[int, ...], x: Val | None = None) -> Val | None:
        cmps = self.allowed(("glow.cmp_eq", "glow.cmp_lt", "glow.cmp_lte"))
        if not cmps:
            return None

        def one() -> Val:
            if x is not None and x.exact and self.coin(0.5):
                a = x
            else:
                a = self.pick(lambda v: v.exact and v.shape == shape) if not self.chain else None
                a = a or self.fresh(shape)
            b = self.partner(a, exact=True)
            return self.emit(self.pick_name(cmps), [a, b], shape, 0, 1, exact=True, elem=i1)

        c = one()
        logic = self.allowed(("glow.and", "glow.or", "glow.xor"))
        if logic and self.coin(0.3):
            c = self.emit(self.pick_name(logic), [c, one()], shape, 0, 1, exact=True, elem=i1)
        if self.ok("glow.not") and self.coin(0.2):
            c = self.emit("glow.not", [c], shape, 0, 1, exact=True, elem=i1)
        return c

    def f_compare(self) -> Val | None:
        if not self.allowed(("glow.cmp_eq", "glow.cmp_lt", "glow.cmp_lte")):
            return None
        x = self.primary()
        cond = self.condition(x.shape, x)
        if cond is None:
            return None
        if not self.ok("glow.select"):
            self.extra.append(cond)
            return cond
        y = self.partner(x)
        if self.coin(0.3):
            x, y = y, x
        return self.emit("glow.select", [cond, x, y], x.shape, min(x.lo, y.lo),
                         max(x.hi, y.hi), exact=True)

    # ---- convolution and friends
    def f_convolution(self, x: Val | None = None, layout: str | None = None,
                      same: bool = False) -> Val | None:
        if layout is None:
            layout = "NHWC" if self.coin(0.25) else "NCHW"
        if x is None:
            x = self.primary((4,))
        n, c, h, w = image_dims(x.shape, layout)
        if same:  # the result has x's shape (residual blocks)
            group = self.choice(_divisors(c)) if self.coin(0.3) else 1
            o = c
            kh = kw = self.choice([1, 3])
            pads = [kh // 2] * 4
            strides, dilation = [1, 1], [1, 1]
        else:
            group = self.choice(_divisors(c)[:3]) if self.coin(0.3) else 1
            if self.coin(0.15):
                group = c  # depthwise
            o = group * self.int(1, max(1, 8 // group))
            strides = [self.int(1, 2), self.int(1, 2)]
            dilation = [1, 1] if self.coin(0.7) else [self.int(1, 2), self.int(1, 2)]
            pads = [self.int(0, 2) if self.coin(0.5) else 0 for _ in range(4)]
            kernels = []
            for i, size in enumerate((h, w)):
                span = size + pads[i] + pads[i + 2]
                k = self.int(1, 3)
                while dilation[i] * (k - 1) + 1 > span:
                    if dilation[i] > 1:
                        dilation[i] = 1
                    else:
                        k -= 1
                kernels.append(k)
            kh, kw = kernels
        oh, ow = spatial_out((h, w), (kh, kw), strides, pads, dilation)
        out_shape = image_shape(n, o, oh, ow, layout)
        if not self.fits(out_shape):
            o = group
            out_shape = image_shape(n, o, oh, ow, layout)
            if not self.fits(out_shape):
                raise _Failed("convolution result too big")
        fan_in = (c // group) * kh * kw
        s = 1.0 / math.sqrt(fan_in)
        filt = self.weight(image_shape(o, c // group, kh, kw, layout), -s, s, "filter")
        bias = (self.weight((o,), -0.5, 0.5, "bias") if self.coin(0.8)
                else self.weight((o,), 0.0, 0.0, "bias"))
        xr = (x.lo, x.hi) if not any(pads) else (min(x.lo, 0.0), max(x.hi, 0.0))
        rows = filt.array.reshape(o, -1) if filt.array is not None else None
        lo, hi = _linear_bounds(rows, (filt.lo, filt.hi), fan_in, xr, (bias.lo, bias.hi))
        attrs: dict = {"kernels": [kh, kw]}
        if strides != [1, 1] or self.coin(0.5):
            attrs["strides"] = strides
        if any(pads) or self.coin(0.5):
            attrs["pads"] = pads
        if dilation != [1, 1] or self.coin(0.2):
            attrs["dilation"] = dilation
        if group != 1 or self.coin(0.3):
            attrs["group"] = group
        if layout != "NCHW" or self.coin(0.3):
            attrs["layout"] = layout
        lo, hi = self.fused(attrs, lo, hi)
        v = self.emit("glow.convolution", [x, filt, bias], out_shape, lo, hi, **attrs)
        v.layout = layout
        return v

    def fused(self, attrs: dict, lo: float, hi: float) -> tuple[float, float]:
        if not self.cfg.fused_activations or not self.coin(0.3):
            return lo, hi
        act = self.choice(["relu", "clip", "leaky_relu", "sigmoid", "tanh"])
        args = {"clip": (0.0, 6.0), "leaky_relu": (0.1,)}.get(act, ())
        attrs["fused_activation"] = act
        if args:
            attrs["fused_activation_args"] = [float(a) for a in args]
        return _act_bounds("glow." + act, lo, hi, args)

    def f_pool(self) -> Val | None:
        name = self.pick_name(self.allowed(FAMILIES["pool"]))
        layout = "NHWC" if self.coin(0.25) else "NCHW"
        x = self.primary((4,), exact=name == "glow.max_pool" and self.coin(0.3))
        n, c, h, w = image_dims(x.shape, layout)
        attrs: dict = {}
        if layout != "NCHW" or self.coin(0.3):
            attrs["layout"] = layout
        if name == "glow.adaptive_avg_pool":
            oh, ow = self.int(1, h), self.int(1, w)
            return self.emit(name, [x], image_shape(n, c, oh, ow, layout), x.lo, x.hi, **attrs)
        kernels, pads = [], [0, 0, 0, 0]
        for i, size in enumerate((h, w)):
            k = self.int(1, min(3, size + 2))
            pmax = min(1, k - 1)
            pads[i] = self.int(0, pmax)
            need = max(0, k - size - pads[i])
            if need > pmax:
                k = min(k, size)
                pads[i] = min(pads[i], k - 1)
                need = 0
            pads[i + 2] = self.int(need, min(pmax, k - 1)) if need <= min(pmax, k - 1) else 0
            kernels.append(k)
        strides = [self.int(1, 2), self.int(1, 2)]
        oh, ow = spatial_out((h, w), kernels, strides, pads)
        attrs["kernels"] = kernels
        if strides != [1, 1] or self.coin(0.5):
            attrs["strides"] = strides
        if any(pads) or self.coin(0.5):
            attrs["pads"] = pads
        lo, hi = x.lo, x.hi
        if name == "glow.avg_pool":
            include = self.choice([None, True, False])
            if include is not None:
                attrs["count_include_pad"] = include
            if include and any(pads):
                lo, hi = min(lo, 0.0), max(hi, 0.0)
        return self.emit(name, [x], image_shape(n, c, oh, ow, layout), lo, hi,
                         exact=name == "glow.max_pool", **attrs)

    def f_fully_connected(self, x: Val | None = None) -> Val | None:
        x = x or self.primary((2,))
        n, k = x.shape
        m = self.int(1, 8)
        while m > 1 and n * m > self.cfg.max_elements:
            m //= 2
        s = 1.0 / math.sqrt(k)
        wts = self.weight((k, m), -s, s, "weights")
        bias = self.weight((m,), -0.5, 0.5, "bias")
        rows = wts.array.T if wts.array is not None else None
        lo, hi = _linear_bounds(rows, (wts.lo, wts.hi), k, (x.lo, x.hi), (bias.lo, bias.hi))
        attrs: dict = {}
        lo, hi = self.fused(attrs, lo, hi)
        return self.emit("glow.fully_connected", [x, wts, bias], (n, m), lo, hi, **attrs)

    def matmul_rhs(self, x: Val, rows: int, batch: int | None) -> Val:
        lead = () if batch is None else (batch,)
        rank = len(lead) + 2
        ways = ["weight", "weight", "fresh"]
        if not self.chain and any(v.rank == rank and v.shape[:-1] == (*lead, rows)
                                  for v in self.pool):
            ways.append("pool")
        if self.ok("glow.transpose") and x.size <= 64:
            ways.append("transpose")
        way = self.choice(ways)
        if way == "pool":
            return self.use(self.pick(lambda v: v.rank == rank and v.shape[:-1] == (*lead, rows)))
        if way == "transpose":
            perm = [1, 0] if batch is None else [0, 2, 1]
            shape = tuple(x.shape[p] for p in perm)
            return self.emit("glow.transpose", [x], shape, x.lo, x.hi, exact=True,
                             shuffle=perm, add=False)
        m = self.int(1, 8)
        s = 1.0 / math.sqrt(rows)
        if way == "fresh":
            return self.fresh((*lead, rows, m), -s, s, "w")
        return self.weight((*lead, rows, m), -s, s, "rhs")

    def f_mat_mul(self) -> Val | None:
        x = self.primary((2,))
        n, k = x.shape
        rhs = self.matmul_rhs(x, k, None)
        m = rhs.shape[1]
        if not self.fits((n, m)):
            raise _Failed("mat_mul result too big")
        rows = rhs.array.T if rhs.array is not None else None
        lo, hi = _linear_bounds(rows, (rhs.lo, rhs.hi), k, (x.lo, x.hi), (0.0, 0.0))
        return self.emit("glow.mat_mul", [x, rhs], (n, m), lo, hi)

    def f_batch_mat_mul(self) -> Val | None:
        x = self.primary((3,))
        b, n, k = x.shape
        rhs = self.matmul_rhs(x, k, b)
        m = rhs.shape[2]
        if not self.fits((b, n, m)):
            raise _Failed("batch_mat_mul result too big")
        rows = (np.transpose(rhs.array, (0, 2, 1)).reshape(-1, k)
                if rhs.array is not None else None)
        lo, hi = _linear_bounds(rows, (rhs.lo, rhs.hi), k, (x.lo, x.hi), (0.0, 0.0))
        return self.emit("glow.batch_mat_mul", [x, rhs], (b, n, m), lo, hi)

    def f_batched_add(self, x: Val | None = None) -> Val | None:
        x = x or self.primary((2, 3, 4))
        sshape = x.shape[1:]
        if not self.chain and self.coin(0.3):
            s = self.pick(lambda v: v.shape == sshape)
            s = self.use(s) if s is not None else self.weight(sshape, -1.0, 1.0, "slice")
        else:
            s = self.weight(sshape, -1.0, 1.0, "slice")
        return self.emit("glow.batched_add", [x, s], x.shape, x.lo + s.lo, x.hi + s.hi)

    def f_batch_normalization(self, x: Val | None = None, channel: int | None = None) -> Val | None:
        x = x or self.primary((2, 3, 4))
        r = x.rank
        if channel is None:
            channel = 1 if self.coin(0.7) else r - 1
        c = x.shape[channel]
        scale = self.weight((c,), -1.5, 1.5, "scale") if self.coin(0.3) else self.weight(
            (c,), 0.5, 1.5, "scale")
        bias = self.weight((c,), -0.5, 0.5, "bias")
        mean = self.weight((c,), -0.5, 0.5, "mean")
        var = self.weight((c,), MIN_POSITIVE, 2.0, "var")
        attrs: dict = {}
        eps = 1e-5
        if self.coin(0.3):
            eps = self.choice([1e-5, 1e-3, 0.01])
            attrs["epsilon"] = eps
        if channel != 1 or self.coin(0.3):
            attrs["channel_idx"] = channel if self.coin(0.5) else channel - r
        if self.coin(0.1):
            attrs["momentum"] = 0.9
        t = (x.lo - mean.hi, x.hi - mean.lo)
        t = _imul(t, (1 / math.sqrt(var.hi + eps), 1 / math.sqrt(var.lo + eps)))
        t = _imul(t, (scale.lo, scale.hi))
        lo, hi = t[0] + bias.lo, t[1] + bias.hi
        return self.emit("glow.batch_normalization", [x, scale, bias, mean, var], x.shape,
                         lo, hi, **attrs)

    def f_layer_normalization(self) -> Val | None:
        x = self.primary()
        nd = self.int(1, min(2, x.rank))
        nshape = x.shape[x.rank - nd:]
        count = int(np.prod(nshape))
        scale = self.weight(nshape, 0.5, 1.5, "scale")
        bias = self.weight(nshape, -0.5, 0.5, "bias")
        attrs = {"epsilon": self.choice([0.01, 0.1])}
        m = math.sqrt(count) * max(abs(scale.lo), abs(scale.hi))
        return self.emit("glow.layer_normalization", [x, scale, bias], x.shape,
                         -m + bias.lo, m + bias.hi, **attrs)

    def f_local_response_normalization(self) -> Val | None:
        x = self.primary((4,))
        layout = "NHWC" if self.coin(0.25) else "NCHW"
        attrs: dict = {"half_window_size": self.int(0, 2)}
        if layout != "NCHW" or self.coin(0.3):
            attrs["layout"] = layout
        if self.coin(0.6):
            attrs["alpha"] = self.choice([1e-4, 1e-3, 0.01, 0.1])
        if self.coin(0.6):
            attrs["beta"] = self.choice([0.5, 0.75, 1.0])
        if self.coin(0.6):
            attrs["k"] = self.choice([1.0, 2.0])
        return self.emit("glow.local_response_normalization", [x], x.shape,
                         min(x.lo, 0.0), max(x.hi, 0.0), **attrs)

    def f_softmax(self) -> Val | None:
        name = self.pick_name(self.allowed(FAMILIES["softmax"]))
        x = self.primary()
        attrs: dict = {}
        axis = x.rank - 1
        if self.coin(0.4):
            axis = self.int(0, x.rank - 1)
            attrs["axis"] = axis if self.coin(0.5) else axis - x.rank
        if name == "glow.soft_max":
            return self.emit(name, [x], x.shape, 0.0, 1.0, **attrs)
        lo = -(x.hi - x.lo) - math.log(x.shape[axis]) - 1e-3
        return self.emit(name, [x], x.shape, lo, 0.0, **attrs)

    # ---- data movement
    def f_reshape(self, x: Val | None = None, shape: tuple[int, ...] | None = None) -> Val:
        x = x or self.primary()
        if shape is None:
            shape = self.factor_shape(x.size, self.int(1, 4))
        return self.emit("glow.reshape", [x], shape, x.lo, x.hi, exact=True)

    def f_transpose(self, x: Val | None = None, perm: list[int] | None = None) -> Val:
        x = x or self.primary((2, 3, 4))
        perm = perm if perm is not None else self.rand_perm(x.rank)
        return self.emit("glow.transpose", [x], tuple(x.shape[p] for p in perm), x.lo, x.hi,
                         exact=True, shuffle=perm)

    def concat_parts(self, x: Val, dim: int, count: int) -> list[Val]:
        parts = [x]
        for _ in range(count - 1):
            def match(v: Val) -> bool:
                return v.rank == x.rank and all(a == b for i, (a, b) in
                                                enumerate(zip(v.shape, x.shape)) if i != dim)
            ways = ["self", "weight", "fresh"]
            if not self.chain and any(match(v) and v is not x for v in self.pool):
                ways += ["pool", "pool"]
            way = self.choice(ways)
            if way == "self":
                parts.append(x)
            elif way == "pool":
                parts.append(self.use(self.pick(lambda v: match(v) and v is not x)))
            else:
                shape = list(x.shape)
                shape[dim] = self.int(1, 4)
                parts.append(self.weight(shape, -1.0, 1.0, "part") if way == "weight"
                             else self.fresh(shape))
        pos = self.int(0, len(parts) - 1)
        parts[0], parts[pos] = parts[pos], parts[0]
        return parts

    def concat(self, parts: list[Val], dim: int) -> Val:
        shape = list(parts[0].shape)
        shape[dim] = sum(p.shape[dim] for p in parts)
        if not self.fits(shape):
            raise _Failed("concat result too big")
        d = dim if self.coin(0.7) else dim - len(shape)
        return self.emit("glow.concat", parts, shape, min(p.lo for p in parts),
                         max(p.hi for p in parts), exact=True, dim=d)

    def f_concat(self) -> Val | None:
        x = self.primary(exact=self.coin(0.2))
        dim = self.int(0, x.rank - 1)
        return self.concat(self.concat_parts(x, dim, self.int(2, 3)), dim)

    def f_slice(self, x: Val | None = None) -> Val:
        x = x or self.primary()
        size = [self.int(1, d) for d in x.shape]
        start = [self.int(0, d - s) for d, s in zip(x.shape, size)]
        return self.emit("glow.slice", [x], size, x.lo, x.hi, exact=True, start=start)

    def f_broadcast(self) -> Val | None:
        x = self.primary(exact=self.coin(0.2))
        r = x.rank
        big = self.int(r, 4)
        axis = self.int(0, big - r)
        shape = [self.int(1, 3) for _ in range(big)]
        for i, d in enumerate(x.shape):
            shape[axis + i] = d if d != 1 else self.int(1, 4)
        if not self.fits(shape):
            raise _Failed("broadcast result too big")
        attrs = {} if axis == big - r and self.coin(0.5) else {"axis": axis}
        return self.emit("glow.broadcast", [x], shape, x.lo, x.hi, exact=True, **attrs)

    def pad(self, x: Val, pads: list[int], mode: str | None, value: float | None) -> Val:
        r = x.rank
        shape = [d + pads[i] + pads[i + r] for i, d in enumerate(x.shape)]
        if not self.fits(shape):
            raise _Failed("pad result too big")
        lo, hi = x.lo, x.hi
        if mode in (None, "constant") and any(pads):
            lo, hi = min(lo, value or 0.0), max(hi, value or 0.0)
        return self.emit("glow.pad", [x], shape, lo, hi, exact=True, pads=pads, mode=mode,
                         value=value)

    def f_pad(self) -> Val | None:
        x = self.primary(exact=self.coin(0.2))
        r = x.rank
        mode = self.choice([None, "constant", "constant", "reflect", "edge"])
        pads = []
        for i in range(2 * r):
            d = x.shape[i % r]
            top = min(2, d - 1) if mode == "reflect" else 2
            pads.append(self.int(0, top) if self.coin(0.5) else 0)
        value = None
        if mode in (None, "constant") and self.coin(0.4):
            value = self.choice([0.0, 0.5, -1.0, 2.0])
        return self.pad(x, pads, mode, value)

    def f_tile(self) -> Val | None:
        x = self.primary(exact=self.coin(0.2))
        axis = self.int(0, x.rank - 1)
        count = self.int(2, 3)
        shape = list(x.shape)
        shape[axis] *= count
        if not self.fits(shape):
            raise _Failed("tile result too big")
        return self.emit("glow.tile", [x], shape, x.lo, x.hi, exact=True, count=count,
                         axis=axis if self.coin(0.8) else axis - x.rank)

    def f_insert_tensor(self) -> Val | None:
        x = self.primary(exact=self.coin(0.2))
        r = x.rank
        if self.coin(0.5):  # x is the big tensor
            big = x
            small_shape = [self.int(1, d) for d in x.shape]
            small = (self.use(self.pick(lambda v: list(v.shape) == small_shape) or
                              self.weight(small_shape, -1.0, 1.0, "small"))
                     if not self.chain else self.weight(small_shape, -1.0, 1.0, "small"))
        else:
            small = x
            shape = [d + self.int(0, 2) for d in x.shape]
            if not self.fits(shape):
                raise _Failed("insert_tensor result too big")
            big = (self.splat(shape, float(self.grid_array((), -1.0, 1.0)))
                   if self.cfg.allow_constants and self.coin(0.5)
                   else self.weight(shape, -1.0, 1.0, "big"))
        axis = self.int(0, r - 1)
        count = self.int(1, max(1, big.shape[axis] // small.shape[axis]))
        ext = [s * (count if i == axis else 1) for i, s in enumerate(small.shape)]
        start = [self.int(0, b - e) for b, e in zip(big.shape, ext)]
        attrs: dict = {"start": start}
        if count != 1 or self.coin(0.3):
            attrs["count"] = count
        if axis != 0 or self.coin(0.3):
            attrs["axis"] = axis
        return self.emit("glow.insert_tensor", [big, small], big.shape, min(big.lo, small.lo),
                         max(big.hi, small.hi), exact=True, **attrs)

    def f_gather(self) -> Val | None:
        if not self.cfg.allow_constants:
            return None
        x = self.primary(exact=self.coin(0.2))
        axis = self.int(0, x.rank - 1)
        irank = self.int(1, max(1, min(2, 5 - x.rank)))
        ishape = tuple(self.int(1, 3) for _ in range(irank))
        d = x.shape[axis]
        idx = self.rng.integers(-d, d, ishape)
        itype = self.choice([i64, i32])
        attr = DenseIntOrFPElementsAttr.from_list(TensorType(itype, ishape),
                                                  [int(v) for v in idx.ravel()])
        iop = glow.ConstantOp.from_attr(attr)
        self.block.add_op(iop)
        ival = Val(iop.results[0], ishape, exact=True, const=True)
        shape = (*x.shape[:axis], *ishape, *x.shape[axis + 1:])
        if not self.fits(shape) or len(shape) > 4:
            raise _Failed("gather result too big")
        attrs = {"axis": axis} if axis != 0 or self.coin(0.3) else {}
        return self.emit("glow.gather", [x, ival], shape, x.lo, x.hi, exact=True, **attrs)

    # ---- reductions, arg ops, resize, conversions
    def f_reduction(self, x: Val | None = None, name: str | None = None,
                    axes: list[int] | None = None) -> Val | None:
        name = name or self.pick_name(self.allowed(FAMILIES["reduction"]))
        x = x or self.primary((2, 3, 4), exact=name in ("glow.batched_reduce_max",
                                                         "glow.batched_reduce_min")
                              and self.coin(0.3))
        r = x.rank
        if axes is None:
            k = self.int(1, r - 1)
            axes = sorted(self.draw(st.permutations(list(range(r))))[:k])
        n = int(np.prod([x.shape[a] for a in axes]))
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        lo, hi = x.lo, x.hi
        exact = False
        if name == "glow.batched_reduce_add":
            lo, hi = lo * n, hi * n
        elif name == "glow.batched_reduce_prod":
            if x.mag ** n > HARD:
                x = self.squash(x, 1.0) if x.mag > 1.0 else x
                if x.mag ** n > HARD:
                    raise _Failed("product too large")
            lo, hi = (x.lo ** n, x.hi ** n) if x.lo >= 0 else (-x.mag ** n, x.mag ** n)
        elif name in ("glow.batched_reduce_max", "glow.batched_reduce_min"):
            exact = True
        shown = [a if self.coin(0.8) else a - r for a in axes]
        return self.emit(name, [x], shape, lo, hi, exact=exact, axes=shown)

    def f_arg(self) -> Val | None:
        name = self.pick_name(self.allowed(FAMILIES["arg"]))
        x = self.primary(exact=True)
        itype = self.choice([i64, i32])
        if name == "glow.top_k":
            k = self.int(1, x.shape[-1])
            shape = (*x.shape[:-1], k)
            v = self.emit(name, [x], None, x.lo, x.hi, exact=True, k=k,
                          result_types=[TensorType(f32, shape), TensorType(itype, shape)])
            # The indices stay unused: with equal values their order is not specified.
            return v
        axis = self.int(0, x.rank - 1)
        keep = self.choice([None, True, False])
        if keep is False and x.rank == 1:
            keep = True
        shape = list(x.shape)
        if keep is False:
            del shape[axis]
        else:
            shape[axis] = 1
        attrs: dict = {"axis": axis} if axis != 0 or self.coin(0.5) else {}
        if keep is not None:
            attrs["keep_dims"] = keep
        v = self.emit(name, [x], shape, 0, 1, exact=True, elem=itype, **attrs)
        self.extra.append(v)
        return v

    def f_resize(self) -> Val | None:
        name = self.pick_name(self.allowed(FAMILIES["resize"]))
        x = self.primary((1, 2, 3, 4), exact=name == "glow.resize_nearest" and self.coin(0.3))
        scales, shape = [], []
        for i, d in enumerate(x.shape):
            # nearest: only scales whose inverse is exact, so that every implementation
            # computes the same source coordinates (and picks the same element at ties)
            opts = [1.0, 1.0, 2.0] if name == "glow.resize_nearest" else [1.0, 1.0, 2.0, 1.5]
            if d % 2 == 0:
                opts.append(0.5)
            if x.rank == 4 and i < 2 and self.coin(0.7):
                opts = [1.0]
            s = self.choice(opts)
            scales.append(s)
            shape.append(int(math.floor(d * s)))
        if not self.fits(shape) or min(shape) < 1:
            raise _Failed("resize result too big")
        attrs: dict = {"scale": scales}
        if name == "glow.resize_nearest":
            # not align_corners: x * (in - 1) / (out - 1) is inexact, and floor/round of it
            # depends on how an implementation evaluates it
            mode = self.choice([None, "asymmetric", "half_pixel", "pytorch_half_pixel",
                                "tf_half_pixel_for_nn"])
            nearest = self.choice([None, "floor", "round_prefer_floor", "round_prefer_ceil",
                                   "ceil"])
            attrs.update(coordinate_transformation_mode=mode, nearest_mode=nearest)
            return self.emit(name, [x], shape, x.lo, x.hi, exact=True, **attrs)
        mode = self.choice([None, "asymmetric", "half_pixel", "align_corners",
                            "pytorch_half_pixel"])
        attrs["coordinate_transformation_mode"] = mode
        spread = x.hi - x.lo  # in case a kernel extrapolates at the borders
        return self.emit(name, [x], shape, x.lo - spread, x.hi + spread, **attrs)

    def f_space_to_depth(self) -> Val | None:
        b = self.choice([2, 2, 1])

        def ok(s: tuple[int, ...]) -> bool:
            return len(s) == 4 and s[2] % b == 0 and s[3] % b == 0

        def new(_rank: int) -> tuple[int, ...]:
            n, c, h, w = self.rand_shape(4)
            return n, c, max(1, h // b) * b, max(1, w // b) * b

        x = self.primary((4,), shape_ok=ok, new_shape=new, exact=self.coin(0.2))
        n, c, h, w = x.shape
        return self.emit("glow.space_to_depth", [x], (n, c * b * b, h // b, w // b), x.lo,
                         x.hi, exact=True, block_size=b)

    def f_convert(self) -> Val | None:
        x = self.primary(exact=True)
        shape = x.shape
        ways = []
        if self.ok("glow.convert_to"):
            ways += ["f16", "i32"]
        if self.ok("glow.quantize", "glow.dequantize"):
            ways.append("quant")
            if self.ok("glow.rescale_quantized"):
                ways.append("rescale")
        if not ways:
            return None
        way = self.choice(ways)
        if way in ("f16", "i32"):
            mid_t = Float16Type() if way == "f16" else i32
            mid = self.emit("glow.convert_to", [x], shape, x.lo, x.hi, exact=True, elem=mid_t)
            lo, hi = (x.lo - 0.01 * x.mag, x.hi + 0.01 * x.mag) if way == "f16" else (
                float(math.trunc(x.lo)), float(math.trunc(x.hi)))
            return self.emit("glow.convert_to", [mid], shape, lo, hi, exact=True)
        scale = self.choice([1 / 16, 1 / 8, 1 / 4])
        offset = self.choice([0, -3, 5])
        qt = glow.QuantizedType(IntegerType(8), scale, offset)
        q = self.emit("glow.quantize", [x], shape, x.lo, x.hi, exact=True, elem=qt)
        if way == "rescale":
            scale = self.choice([1 / 8, 1 / 4, 1 / 2])
            qt2 = glow.QuantizedType(IntegerType(8), scale, self.choice([0, 2]))
            q = self.emit("glow.rescale_quantized", [q], shape, x.lo, x.hi, exact=True,
                          elem=qt2)
        return self.emit("glow.dequantize", [q], shape, x.lo - scale, x.hi + scale, exact=True)

    # ------------------------------------------------------------------ patterns
    def p_transpose_pair(self) -> Val | None:
        x = self.primary((2, 3, 4))
        perm = self.rand_perm(x.rank)
        t = self.f_transpose(x, perm)
        if self.coin(0.5):
            t = self.same_shape_op(t) or t
        back = _inverse(perm) if self.coin(0.7) else self.rand_perm(x.rank, identity_ok=True)
        return self.f_transpose(t, back)

    def p_reshape_chain(self) -> Val | None:
        x = self.primary()
        v = self.f_reshape(x)
        for _ in range(self.int(1, 2)):
            back = x.shape if self.coin(0.4) else None
            v = self.f_reshape(v, back)
        return v

    def p_conv_batchnorm(self) -> Val | None:
        c = self.f_convolution()
        return self.f_batch_normalization(c, 1 if c.layout == "NCHW" else 3)

    def p_conv_activation(self) -> Val | None:
        acts = self.allowed(_FUSABLE)
        if not acts:
            return None
        return self.activation(self.pick_name(acts), self.f_convolution())

    def p_fc_activation(self) -> Val | None:
        acts = self.allowed(_FUSABLE)
        if not acts:
            return None
        return self.activation(self.pick_name(acts), self.f_fully_connected())

    def p_matmul_bias(self) -> Val | None:
        mm = self.f_mat_mul()
        m = mm.shape[1]
        if self.ok("glow.batched_add") and (self.coin(0.6) or not self.ok("glow.add")):
            b = self.weight((m,), -0.5, 0.5, "bias")
            return self.emit("glow.batched_add", [mm, b], mm.shape, mm.lo + b.lo, mm.hi + b.hi)
        if self.ok("glow.add", "glow.broadcast"):
            b = self.weight((m,), -0.5, 0.5, "bias")
            bb = self.emit("glow.broadcast", [b], mm.shape, b.lo, b.hi, exact=True, add=False,
                           axis=1)
            return self.binary("glow.add", mm, bb)
        return None

    def p_pad_conv(self) -> Val | None:
        x = self.primary((4,))
        pads = [0] * 8
        for i in (2, 3, 6, 7):
            pads[i] = self.int(0, 2)
        if not any(pads):
            pads[2] = 1
        mode, value = (None, None) if self.coin(0.5) else ("constant", 0.0)
        if self.coin(0.15):
            mode, value = self.choice([("constant", 1.0), ("edge", None)])
        p = self.pad(x, pads, mode, value)
        return self.f_convolution(p, "NCHW")

    def p_self_gated(self) -> Val | None:
        """x * sigmoid(x) (SiLU as torch.onnx writes it), the product either way round,
        after a convolution when one is allowed; sometimes the sigmoid is read again."""
        x = self.f_convolution() if self.ok("glow.convolution") and self.coin(0.5) else None
        x = x or self.primary()
        g = self.activation("glow.sigmoid", x)
        y = self.binary("glow.mul", *((x, g) if self.coin(0.5) else (g, x)))
        if self.coin(0.25):
            return self.binary("glow.add", y, g) if self.ok("glow.add") else y
        return y

    def p_channel_bias_add(self) -> Val | None:
        c = self.f_convolution()
        ch = 1 if c.layout == "NCHW" else 3
        b = self.weight((c.shape[ch],), -0.5, 0.5, "bias")
        bb = self.emit("glow.broadcast", [b], c.shape, b.lo, b.hi, exact=True, add=False,
                       axis=ch)
        return self.binary("glow.add", c, bb) if self.coin(0.7) else self.binary("glow.add", bb, c)

    def p_channel_scale_mul(self) -> Val | None:
        """A per-channel scale after a convolution (layer scale, a frozen affine layer)."""
        c = self.f_convolution()
        ch = 1 if c.layout == "NCHW" else 3
        a = self.weight((c.shape[ch],), -2.0, 2.0, "scale")
        ab = self.emit("glow.broadcast", [a], c.shape, a.lo, a.hi, exact=True, add=False,
                       axis=ch)
        return self.binary("glow.mul", c, ab) if self.coin(0.7) else self.binary("glow.mul", ab, c)

    def p_duplicate(self) -> Val | None:
        ops = [op for op in self.block.ops if op.name != "glow.constant"
               and all(r.type.get_element_type() == f32 for r in op.results)]  # type: ignore
        if not ops:
            return None
        op = ops[-1 - self.int(0, min(3, len(ops) - 1))]
        vals = {id(v.ssa): v for v in self.pool}
        orig = vals.get(id(op.results[0]))
        if orig is None:
            return None
        clone = op.clone()
        self.block.add_op(clone)
        self.n_ops += 1
        self.trace.append(op.name.removeprefix("glow.") + "(dup)")
        v = Val(clone.results[0], orig.shape, orig.lo, orig.hi, exact=orig.exact,
                const=orig.const, layout=orig.layout)
        self.pool.append(v)
        self.head = v
        if self.ok("glow.add") and self.coin(0.6):
            return self.binary(self.choice(self.allowed(("glow.add", "glow.sub", "glow.mul",
                                                         "glow.max"))), orig, v)
        return v

    def p_dead_op(self) -> Val | None:
        head, pool_len = self.head, len(self.pool)
        fam = self.pick_name(self.cfg.families)
        getattr(self, "f_" + fam)()
        for v in self.pool[pool_len:]:
            v.dead = True
        del self.pool[pool_len:]
        self.head = head
        return head

    def p_arithmetic_chain(self) -> Val | None:
        names = self.allowed(("glow.add", "glow.sub", "glow.mul", "glow.div"))
        if not names or not self.cfg.allow_constants:
            return None
        v = self.primary()
        for _ in range(self.int(2, 3)):
            name = self.choice(names)
            if name in ("glow.mul", "glow.div"):
                k = self.choice([0.5, 2.0, 1.5, 0.75])
            else:
                k = self.choice([1.0, -0.5, 0.25, 2.0])
            c = self.splat(v.shape, k) if self.coin(0.7) else self.constant(
                self.grid_array(v.shape, 0.5, 1.5) if name in ("glow.mul", "glow.div")
                else self.grid_array(v.shape, -1.0, 1.0), "c")
            v = self.binary(name, v, c) if name in ("glow.sub", "glow.div") or self.coin(0.6) \
                else self.binary(name, c, v)
        return v

    def p_constant_subgraph(self) -> Val | None:
        if not self.cfg.allow_constants:
            return None
        x = self.primary()
        c = self.weight(x.shape, -1.0, 1.0, "k")
        if not c.const:
            return None
        ops = self.allowed(("glow.relu", "glow.tanh", "glow.neg", "glow.abs", "glow.sigmoid"))
        if ops:
            name = self.choice(ops)
            c = self.emit(name, [c], c.shape, *_act_bounds(name, c.lo, c.hi))
        binops = self.allowed(("glow.add", "glow.mul", "glow.sub", "glow.max"))
        if not binops:
            return None
        self.patterns.append("constant_subgraph")
        return self.binary(self.choice(binops), x, c)

    def p_noop(self) -> Val | None:
        x = self.primary()
        ways = []
        for way, need in (("transpose", "glow.transpose"), ("reshape", "glow.reshape"),
                          ("slice", "glow.slice"), ("pad", "glow.pad"), ("tile", "glow.tile"),
                          ("broadcast", "glow.broadcast"), ("concat", "glow.concat"),
                          ("relu", "glow.relu"), ("neg", "glow.neg")):
            if self.ok(need):
                ways.append(way)
        if self.cfg.allow_constants:
            ways += [w for w in ("add", "mul", "sub", "div") if self.ok("glow." + w)]
        if self.ok("glow.clip"):
            ways.append("clip")
        if not ways:
            return None
        way = self.pick_name(ways)
        r = x.rank
        if way == "transpose":
            return self.f_transpose(x, list(range(r)))
        if way == "reshape":
            return self.f_reshape(x, x.shape)
        if way == "slice":
            return self.emit("glow.slice", [x], x.shape, x.lo, x.hi, exact=True, start=[0] * r)
        if way == "pad":
            return self.pad(x, [0] * (2 * r), None, None)
        if way == "tile":
            return self.emit("glow.tile", [x], x.shape, x.lo, x.hi, exact=True, count=1,
                             axis=self.int(0, r - 1))
        if way == "broadcast":
            return self.emit("glow.broadcast", [x], x.shape, x.lo, x.hi, exact=True)
        if way == "concat":
            return self.emit("glow.concat", [x], x.shape, x.lo, x.hi, exact=True,
                             dim=self.int(0, r - 1))
        if way in ("relu", "neg"):
            name = "glow." + way
            v = self.activation(name, x)
            return self.activation(name, v)
        if way == "clip":
            return self.emit("glow.clip", [x], x.shape, x.lo, x.hi, exact=True,
                             min=-3.0e38, max=3.0e38)
        k = 0.0 if way in ("add", "sub") else 1.0
        return self.binary("glow." + way, x, self.splat(x.shape, k))

    def p_spatial_mean(self) -> Val | None:
        x = self.primary((4,))
        axes = [2, 3] if self.coin(0.7) else [-2, -1]
        return self.f_reduction(x, "glow.batched_reduce_mean", sorted(a % 4 for a in axes))

    def p_conv_avg_pool(self) -> Val | None:
        """A 1x1 convolution, then an average pool (DenseNet's transitions)."""
        layout = "NHWC" if self.coin(0.25) else "NCHW"
        x = self.primary((4,), shape_ok=lambda s: min(image_dims(s, layout)[2:]) >= 2)
        n, c, h, w = image_dims(x.shape, layout)
        if x.rank != 4 or min(n, c) < 1 or min(h, w) < 2:
            return None
        group = self.choice(_divisors(c)[:3]) if self.coin(0.3) else 1
        o = group * self.int(1, max(1, 6 // group))
        if not self.fits(image_shape(n, o, h, w, layout)):
            return None
        s = 1.0 / math.sqrt(c // group)
        filt = self.weight(image_shape(o, c // group, 1, 1, layout), -s, s, "filter")
        bias = self.weight((o,), -0.5, 0.5, "bias")
        rows = filt.array.reshape(o, -1) if filt.array is not None else None
        lo, hi = _linear_bounds(rows, (filt.lo, filt.hi), c // group, (x.lo, x.hi),
                                (bias.lo, bias.hi))
        attrs: dict = {"kernels": [1, 1], "group": group, "layout": layout}
        lo, hi = self.fused(attrs, lo, hi)
        conv = self.emit("glow.convolution", [x, filt, bias], image_shape(n, o, h, w, layout),
                         lo, hi, **attrs)
        k, stride = self.int(1, 2), self.int(1, 2)
        pads = [self.int(0, k - 1) for _ in range(4)] if self.coin(0.2) else [0, 0, 0, 0]
        oh, ow = spatial_out((h, w), [k, k], [stride, stride], pads)
        include = self.coin(0.5)
        if include and any(pads):
            lo, hi = min(lo, 0.0), max(hi, 0.0)
        return self.emit("glow.avg_pool", [conv], image_shape(n, o, oh, ow, layout), lo, hi,
                         kernels=[k, k], strides=[stride, stride], pads=pads,
                         count_include_pad=include, layout=layout)

    def p_concat_concat(self) -> Val | None:
        x = self.primary()
        dim = self.int(0, x.rank - 1)
        inner = self.concat(self.concat_parts(x, dim, 2), dim)
        return self.concat(self.concat_parts(inner, dim, 2), dim)

    def p_residual(self) -> Val | None:
        if self.chain:
            return None
        x = self.primary()
        y = x
        for _ in range(self.int(1, 2)):
            ways = ["elementwise"]
            if y.rank == 4 and self.ok("glow.convolution"):
                ways.append("conv")
            if y.rank >= 2 and self.ok("glow.batch_normalization"):
                ways.append("bn")
            way = self.choice(ways)
            if way == "conv":
                y = self.f_convolution(y, "NCHW", same=True)
            elif way == "bn":
                y = self.f_batch_normalization(y)
            else:
                y = self.same_shape_op(y) or y
        if y is x:
            return None
        return self.binary("glow.add", x, self.use(y)) if self.coin(0.7) else \
            self.binary("glow.add", self.use(y), x)

    def p_branches(self) -> Val | None:
        if self.chain:
            return None
        x = self.primary()
        a = self.same_shape_op(x)
        b = self.same_shape_op(x)
        if a is None or b is None:
            return None
        joins = self.allowed(("glow.concat", "glow.add", "glow.max", "glow.mul"))
        if not joins:
            return None
        join = self.choice(joins)
        if join == "glow.concat":
            dim = self.int(0, x.rank - 1)
            return self.concat([a, b, x] if self.coin(0.3) else [a, b], dim)
        return self.binary(join, a, b)

    # ------------------------------------------------------------------ driver
    def step(self, budget: int) -> None:
        pats = [p for p in self.cfg.patterns if self.ok(*PATTERNS[p])]
        if pats and budget >= 2 and self.coin(0.35):
            name = self.pick_name(pats)
            before = self.n_ops
            getattr(self, "p_" + name)()
            if self.n_ops > before and name != "constant_subgraph":
                self.patterns.append(name)
        else:
            fam = self.pick_name(self.weighted_families)
            getattr(self, "f_" + fam)()

    def build(self) -> GeneratedGraph:
        cfg = self.cfg
        first_rank = self.choice([4, 2, 3, 1, 4, 2])
        self.head = self.fresh(self.rand_shape(first_rank))
        self.pool.append(self.head)
        if not self.chain and self.coin(0.3):
            self.pool.append(self.fresh(self.rand_shape(self.choice([1, 2, 3, 4]))))
        # the larger of two draws: most graphs are not tiny, yet they shrink to min_ops
        target = max(self.int(cfg.min_ops, cfg.max_ops), self.int(cfg.min_ops, cfg.max_ops))
        attempts = 0
        while self.n_ops < target and attempts < 8 * target + 20:
            attempts += 1
            try:
                self.step(target - self.n_ops)
            except _Failed:
                pass
        if self.n_ops == 0:
            # The first input drawn can leave no room for any allowed op (a 200-element
            # input when the only family is concat and results are capped at 256
            # elements): this draw is discarded. A generator that can never emit an op
            # still fails, as hypothesis's Unsatisfiable.
            reject()
        outputs = self.pick_outputs()
        return self.finish(outputs)

    def pick_outputs(self) -> list[Val]:
        live = [v for v in self.pool if not v.dead
                and isinstance(v.ssa.owner, glow.GlowOp)]
        head = self.head if self.head in live else (live[-1] if live else None)
        outs: list[Val] = []
        if head is not None:
            outs.append(head)
        extra_n = self.int(0, self.cfg.max_outputs - len(outs)) if self.cfg.max_outputs > 1 else 0
        if not outs and self.extra:
            outs.append(self.extra[-1])
        for _ in range(extra_n):
            leaves = [v for v in live if not v.ssa.uses and v not in outs]
            ways = []
            if leaves:
                ways += ["leaf", "leaf"]
            if [v for v in self.extra if v not in outs]:
                ways.append("extra")
            if [v for v in live if v.ssa.uses and v not in outs]:
                ways.append("used")
            if outs and self.coin(0.05):
                ways.append("again")
            if not ways:
                break
            way = self.choice(ways)
            if way == "leaf":
                outs.append(leaves[-1 - self.int(0, len(leaves) - 1)])
            elif way == "extra":
                cands = [v for v in self.extra if v not in outs]
                outs.append(cands[-1 - self.int(0, len(cands) - 1)])
            elif way == "used":
                cands = [v for v in live if v.ssa.uses and v not in outs]
                outs.append(cands[-1 - self.int(0, len(cands) - 1)])
            else:
                outs.append(outs[self.int(0, len(outs) - 1)])
        if not outs:  # every op was dead or constant: return the last one
            cands = [v for v in self.emitted if not v.const] or self.emitted
            outs.append(cands[-1])
        final = []
        for v in outs:
            if v.is_float and v.mag > OUT_LIMIT:
                try:
                    v = self.squash(v, 8.0)
                except _Failed:
                    pass
            final.append(v)
        return final

    def finish(self, outs: list[Val]) -> GeneratedGraph:
        self.block.add_op(func.ReturnOp(*[v.ssa for v in outs]))
        fn = func.FuncOp("main", ([a.type for a in self.block.args], [v.ssa.type for v in outs]),
                         Region(self.block))
        self.module.body.block.add_op(fn)
        verify_module(self.module)
        shapes = ", ".join("x".join(map(str, x.shape)) or "scalar" for x in self.inputs)
        pats = sorted(set(self.patterns))
        description = (f"{self.topology} of {self.n_ops} ops: {' '.join(self.trace)}; "
                       f"inputs {shapes}; {len(outs)} output(s)"
                       + (f"; patterns {', '.join(pats)}" if pats else ""))
        bounds = [v.mag if v.is_float else 1.0 for v in outs]
        return GeneratedGraph(self.module, "main", self.inputs, description, self.ranges,
                              bounds, tuple(pats))
