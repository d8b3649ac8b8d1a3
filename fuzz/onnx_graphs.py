"""Random, valid, numerically safe ONNX graphs for differential testing (fuzz/differential.py
and tests/unit/test_differential.py): `random_onnx_graph(seed)` is a pure function of the
seed (a numpy Generator drives every choice), so a graph is reproduced from its seed alone.

A graph is a chain or a DAG of 1..max_ops nodes drawn from the importer's op families:
element-wise unary and binary math (with ONNX broadcasting), activations, comparisons and
Where, Conv / ConvTranspose / pools / Gemm / MatMul, Reshape / Transpose / Concat / Slice /
Split / Pad / Tile / Expand / Squeeze / Unsqueeze / Flatten / Gather / DepthToSpace /
SpaceToDepth, reductions and ArgMax / ArgMin / TopK / CumSum, Softmax / LogSoftmax,
Batch / Instance / Layer normalization and LRN. Weights are initializers or graph inputs.

Numerical safety by construction, as in tests/unit/glow_graphs.py: the builder keeps an
interval for every value; log/sqrt/reciprocal/divisors/pow bases see operands >= 0.25,
exp sees operands <= 6, values whose bound grows past 8 are scaled by a power of two
before further use. Discontinuous ops (floor, ceil, round, sign, comparisons, arg max,
thresholds) only see "exact" values (inputs are multiples of 1/64, and exact ops such as
data movement, relu, max, neg, abs keep them so), so any correct implementation agrees bit
for bit. `OnnxGraph.tolerance()` gives (rtol, atol) from the op families present.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 10
SOFT = 8.0          # values past this bound are scaled down before further use
MAX_ELEMENTS = 1024
INPUT_STEP = 1.0 / 64  # inputs are multiples of this: exact in f32, never subnormal

# family -> rtol; atol is rtol * max(1, bound of the output)
TOLERANCE = {
    "data": 1e-6, "exact": 1e-6, "elementwise": 1e-5, "transcendental": 1e-4,
    "linalg": 1e-4, "pool": 1e-5, "reduce": 1e-4, "softmax": 1e-4, "normalization": 5e-4,
}


@dataclass
class Val:
    name: str
    shape: tuple[int, ...]
    lo: float
    hi: float
    exact: bool
    dtype: str = "f"  # "f" float32, "i" int64, "b" bool
    depth: int = 0    # ops on the longest path from an input (error amplification)

    @property
    def bound(self) -> float:
        return max(abs(self.lo), abs(self.hi))

    @property
    def size(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1


@dataclass
class OnnxGraph:
    seed: int
    model: onnx.ModelProto
    feeds: dict[str, np.ndarray]
    families: set[str] = field(default_factory=set)
    ops: list[str] = field(default_factory=list)
    output_bounds: list[float] = field(default_factory=list)

    @property
    def description(self) -> str:
        return f"seed {self.seed}: " + " ".join(self.ops)

    def tolerance(self) -> float:
        """The graph's rtol: the loosest of its families', grown with depth."""
        return max([TOLERANCE.get(f, 1e-4) for f in self.families] or [1e-5])


class _Skip(Exception):
    """This op does not apply to the drawn operand."""


class Builder:
    def __init__(self, seed: int, max_ops: int):
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        self.max_ops = max_ops
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.feeds: dict[str, np.ndarray] = {}
        self.vals: list[Val] = []
        self.used: set[str] = set()
        self.families: set[str] = set()
        self.ops: list[str] = []
        self.n = 0

    # ------------------------------------------------------------------ basics
    def fresh(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def choice(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def coin(self, p: float = 0.5) -> bool:
        return bool(self.rng.random() < p)

    def exact_array(self, shape, lo=-2.0, hi=2.0) -> np.ndarray:
        steps = self.rng.integers(int(lo / INPUT_STEP), int(hi / INPUT_STEP) + 1, size=shape)
        return np.asarray(steps * INPUT_STEP, dtype=np.float32)

    def input(self, shape, lo=-2.0, hi=2.0) -> Val:
        """A fresh graph input of multiples of 1/64 in [lo, hi]."""
        name = self.fresh("in")
        self.feeds[name] = self.exact_array(shape, lo, hi)
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
        v = Val(name, tuple(shape), lo, hi, True)
        self.vals.append(v)
        return v

    def const(self, array: np.ndarray, prefix="c") -> str:
        name = self.fresh(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, shape, scale: float, as_input_p: float = 0.2) -> tuple[str, np.ndarray]:
        """A weight tensor (an initializer, sometimes a graph input): multiples of 1/64."""
        w = self.exact_array(shape, -1.0, 1.0) * np.float32(scale)
        w = (np.round(w / INPUT_STEP) * INPUT_STEP).astype(np.float32)
        if self.coin(as_input_p):
            name = self.fresh("w")
            self.feeds[name] = w
            self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
            return name, w
        return self.const(w, "w"), w

    def node(self, op: str, ins: list[str], shape, lo, hi, exact, family, depth,
             dtype="f", n_out=1, **attrs) -> Val | list[Val]:
        outs = [self.fresh("v") for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, ins, outs, name=f"{op.lower()}_{self.n}", **attrs))
        self.used.update(ins)
        self.families.add(family)
        self.ops.append(op)
        vals = [Val(o, tuple(shape), float(lo), float(hi), exact, dtype, depth) for o in outs]
        self.vals.extend(vals)
        return vals[0] if n_out == 1 else vals

    # ------------------------------------------------------------------ operands
    def pick(self, rank: int | None = None, min_rank: int = 0, max_rank: int = 6,
             exact: bool = False, float_only: bool = True) -> Val:
        """An existing value (mostly the newest: a chain; sometimes any: a DAG), scaled
        under SOFT; a fresh input when none fits."""
        cands = [v for v in self.vals
                 if (not float_only or v.dtype == "f") and (not exact or v.exact)
                 and (rank is None or len(v.shape) == rank)
                 and min_rank <= len(v.shape) <= max_rank]
        if cands and self.coin(0.9):
            v = cands[-1] if self.coin(0.6) else self.choice(cands)
        else:
            v = self.input(self.random_shape(rank, min_rank, max_rank))
        return self.tame(v)

    def random_shape(self, rank=None, min_rank=0, max_rank=6) -> tuple[int, ...]:
        lo, hi = max(1, min_rank), min(4, max_rank)
        r = rank if rank is not None else int(self.rng.integers(lo, hi + 1))
        while True:
            shape = tuple(int(self.rng.integers(1, 7 if r <= 2 else 5)) for _ in range(r))
            if r == 4:
                shape = (int(self.rng.integers(1, 3)), int(self.rng.integers(1, 5)),
                         int(self.rng.integers(3, 9)), int(self.rng.integers(3, 9)))
            if int(np.prod(shape)) <= MAX_ELEMENTS:
                return shape

    def tame(self, v: Val) -> Val:
        """`v` scaled by a power of two under SOFT (exact: keeps exactness)."""
        if v.dtype != "f" or v.bound <= SOFT:
            return v
        k = 2.0 ** -math.ceil(math.log2(v.bound / SOFT))
        c = self.const(np.array(k, np.float32))
        return self.node("Mul", [v.name, c], v.shape, v.lo * k, v.hi * k, v.exact,
                         "elementwise", v.depth + 1)

    def positive(self, v: Val) -> Val:
        """`v` if it is >= 0.25, else abs(v) + 0.25 or sigmoid(v) + 0.25 built in the graph."""
        if v.lo >= 0.25:
            return v
        c = self.const(np.array(0.25, np.float32))
        if self.coin():
            a = self.node("Abs", [v.name], v.shape, 0, v.bound, v.exact, "elementwise", v.depth + 1)
            return self.node("Add", [a.name, c], v.shape, 0.25, a.hi + 0.25, v.exact,
                             "elementwise", v.depth + 2)
        s = self.node("Sigmoid", [v.name], v.shape, 0, 1, False, "transcendental", v.depth + 1)
        return self.node("Add", [s.name, c], v.shape, 0.25, 1.25, False, "elementwise",
                         v.depth + 2)

    # ------------------------------------------------------------------ op generators
    UNARY = {
        # name: (family, monotone image or None for "given", needs)
        "Relu": "exact", "Abs": "exact", "Neg": "exact", "Sigmoid": "transcendental",
        "Tanh": "transcendental", "Erf": "transcendental", "Softsign": "elementwise",
        "Softplus": "transcendental", "Elu": "transcendental", "Selu": "transcendental",
        "Celu": "transcendental", "LeakyRelu": "elementwise", "HardSigmoid": "elementwise",
        "HardSwish": "elementwise", "Exp": "transcendental",
        "Log": "transcendental", "Sqrt": "transcendental", "Reciprocal": "elementwise",
        "Sin": "transcendental", "Cos": "transcendental", "Atan": "transcendental",
        "Sinh": "transcendental", "Cosh": "transcendental", "Floor": "exact",
        "Ceil": "exact", "Round": "exact", "Sign": "exact", "Clip": "exact",
        "ThresholdedRelu": "exact", "Shrink": "exact", "Identity": "data",
        "Asinh": "transcendental", "Tan": "transcendental",
    }

    def op_unary(self) -> Val:
        op = self.choice(sorted(self.UNARY))
        family = self.UNARY[op]
        needs_exact = op in ("Floor", "Ceil", "Round", "Sign", "ThresholdedRelu", "Shrink")
        v = self.pick(exact=needs_exact)
        attrs: dict = {}
        ins = [v.name]
        b = v.bound
        lo, hi, exact = -b, b, False
        if op in ("Log", "Sqrt", "Reciprocal"):
            v = self.positive(v)
            ins = [v.name]
            lo, hi = {"Log": (math.log(v.lo), math.log(max(v.hi, 1.0))),
                      "Sqrt": (0, math.sqrt(v.hi)), "Reciprocal": (0, 1 / v.lo)}[op]
        elif op in ("Exp", "Sinh", "Cosh"):
            if b > 4:
                raise _Skip
            lo, hi = -math.exp(b), math.exp(b)
        elif op == "Tan":
            if b > 1:
                raise _Skip
            lo, hi = -1.6, 1.6
        elif op in ("Relu", "Abs", "Neg"):
            lo, hi, exact = (0 if op != "Neg" else -v.hi), (b if op != "Neg" else -v.lo), v.exact
        elif op in ("Sigmoid", "HardSigmoid"):
            lo, hi = 0, 1
            if op == "HardSigmoid":
                attrs = {"alpha": 0.25, "beta": 0.5}
        elif op in ("Tanh", "Erf", "Softsign", "Sin", "Cos", "Sign"):
            lo, hi, exact = -1, 1, op == "Sign"
        elif op in ("Floor", "Ceil", "Round"):
            lo, hi, exact = -b - 1, b + 1, True
        elif op == "Clip":
            a = float(self.choice([-1.0, -0.5, 0.0]))
            c = float(self.choice([0.5, 1.0, 6.0]))
            ins = [v.name, self.const(np.array(a, np.float32)), self.const(np.array(c, np.float32))]
            lo, hi, exact = a, c, v.exact
        elif op == "LeakyRelu":
            attrs = {"alpha": float(self.choice([0.01, 0.1, 0.25]))}
        elif op in ("Elu", "Celu"):
            attrs = {"alpha": float(self.choice([0.5, 1.0, 2.0]))}
            lo = -2.0
        elif op == "Selu":
            lo, hi = -2.0, 1.06 * b
        elif op == "ThresholdedRelu":
            attrs = {"alpha": float(self.choice([0.5, 1.0]))}
            lo, hi, exact = 0, b, True
        elif op == "Shrink":
            attrs = {"lambd": 0.5, "bias": float(self.choice([0.0, 0.25]))}
            exact = True
        elif op == "Identity":
            lo, hi, exact = v.lo, v.hi, v.exact
        elif op in ("Softplus", "HardSwish"):
            lo, hi = -1.0, b + 0.7
        return self.node(op, ins, v.shape, lo, hi, exact, family, v.depth + 1, **attrs)

    BINARY = ("Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "PRelu", "Sum", "Mean")

    def broadcast_partner(self, v: Val) -> tuple[tuple[int, ...], bool]:
        """A shape broadcastable with v's (maybe v's own), and whether it broadcasts both ways."""
        shape = list(v.shape)
        kind = self.choice(["same", "same", "ones", "suffix", "scalar", "both"])
        if kind == "same":
            return tuple(shape), False
        if kind == "ones":
            return tuple(1 if self.coin() else d for d in shape), False
        if kind == "suffix":
            k = int(self.rng.integers(0, len(shape) + 1))
            return tuple(shape[k:]), False
        if kind == "scalar":
            return (), False
        # both ways: the partner has a dimension where v has 1; v's result shape grows
        grown = [d if d != 1 else int(self.rng.integers(1, 4)) for d in shape]
        return tuple(grown), True

    def op_binary(self) -> Val:
        op = self.choice(self.BINARY)
        a = self.pick()
        shape, _ = self.broadcast_partner(a)
        # the partner: an existing value of that shape, a fresh input or a constant
        same = [v for v in self.vals if v.dtype == "f" and v.shape == shape and v is not a]
        if same and self.coin(0.5):
            b = self.tame(self.choice(same))
        elif self.coin(0.5):
            b = self.input(shape, -2, 2)
        else:
            arr = self.exact_array(shape, -2, 2)
            b = Val(self.const(arr), shape, -2, 2, True)
        out_shape = tuple(np.broadcast_shapes(a.shape, b.shape))
        if int(np.prod(out_shape)) > MAX_ELEMENTS:
            raise _Skip
        if op == "PRelu" and out_shape != a.shape:
            raise _Skip
        ba, bb = a.bound, b.bound
        exact = a.exact and b.exact
        depth = max(a.depth, b.depth) + 1
        ins = [a.name, b.name]
        if op in ("Add", "Sub", "Sum"):
            lo, hi, family = -(ba + bb), ba + bb, "elementwise"
        elif op == "Mean":
            lo, hi, family, exact = -(ba + bb) / 2, (ba + bb) / 2, "elementwise", False
        elif op == "Mul":
            lo, hi, family, exact = -ba * bb, ba * bb, "elementwise", False
        elif op == "Div":
            b = self.positive(b)
            ins = [a.name, b.name]
            lo, hi, family, exact = -ba / b.lo, ba / b.lo, "elementwise", False
        elif op in ("Max", "Min"):
            lo, hi, family = -max(ba, bb), max(ba, bb), "exact"
        elif op == "Pow":
            base = self.positive(a)
            e = float(self.choice([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0, 3.0]))
            if e == 3.0 and base.hi > 2:
                e = 2.0
            earr = np.full(shape, e, np.float32)
            ins = [base.name, self.const(earr)]
            out_shape = tuple(np.broadcast_shapes(base.shape, shape))
            m = max(base.hi ** e, base.lo ** e)
            lo, hi, family, exact = 0, m, "transcendental", False
        else:  # PRelu
            lo, hi, family, exact = -ba * bb, max(ba, ba * bb), "elementwise", False
        return self.node(op, ins, out_shape, lo, hi, exact, family, depth)

    def op_compare_where(self) -> Val:
        a = self.pick(exact=True)
        op = self.choice(["Greater", "Less", "Equal", "GreaterOrEqual", "LessOrEqual"])
        thr = self.const(np.array(float(self.choice([0.0, 0.5, -0.25])), np.float32))
        c = self.node(op, [a.name, thr], a.shape, 0, 1, True, "exact", a.depth + 1, dtype="b")
        if self.coin(0.2):
            return c
        if self.coin(0.3):
            return self.node("Cast", [c.name], a.shape, 0, 1, True, "exact", a.depth + 2,
                             to=TensorProto.FLOAT)
        other = self.pick()
        out = tuple(np.broadcast_shapes(a.shape, other.shape)) if self._bcast_ok(a.shape, other.shape) else None
        if out is None or int(np.prod(out)) > MAX_ELEMENTS:
            other = self.input(a.shape)
            out = a.shape
        x = a if self.coin() else self.tame(self.pick())
        if not self._bcast_ok(out, x.shape) or tuple(np.broadcast_shapes(out, x.shape)) != out:
            x = a
        b = max(other.bound, x.bound)
        return self.node("Where", [c.name, x.name, other.name], out, -b, b,
                         x.exact and other.exact, "exact", max(x.depth, other.depth) + 1)

    @staticmethod
    def _bcast_ok(s, t) -> bool:
        try:
            np.broadcast_shapes(s, t)
            return True
        except ValueError:
            return False

    # --------------------------------------------------------------- nn
    def op_conv(self) -> Val:
        x = self.pick(rank=4)
        n, c, h, w = x.shape
        groups = [g for g in (1, 2, c) if c % g == 0]
        g = int(self.choice(groups))
        m = g * int(self.rng.integers(1, max(2, 5 // g) + 1))
        k = (int(self.rng.integers(1, 4)), int(self.rng.integers(1, 4)))
        s = (int(self.rng.integers(1, 3)), int(self.rng.integers(1, 3)))
        d = (int(self.rng.integers(1, 3)), int(self.rng.integers(1, 3))) if self.coin(0.2) else (1, 1)
        pads = [int(self.rng.integers(0, k[i % 2])) if k[i % 2] > 1 else 0 for i in range(4)]
        oh = (h + pads[0] + pads[2] - d[0] * (k[0] - 1) - 1) // s[0] + 1
        ow = (w + pads[1] + pads[3] - d[1] * (k[1] - 1) - 1) // s[1] + 1
        if oh < 1 or ow < 1 or n * m * oh * ow > MAX_ELEMENTS:
            raise _Skip
        fan = (c // g) * k[0] * k[1]
        wname, warr = self.weight((m, c // g, *k), 2.0 / math.sqrt(fan))
        ins = [x.name, wname]
        bias = 0.0
        if self.coin(0.7):
            barr = self.exact_array((m,), -0.5, 0.5)
            ins.append(self.const(barr, "b"))
            bias = 0.5
        bound = float(np.abs(warr).reshape(m, -1).sum(1).max()) * x.bound + bias
        return self.node("Conv", ins, (n, m, oh, ow), -bound, bound, False, "linalg",
                         x.depth + 1, kernel_shape=list(k), strides=list(s), pads=pads,
                         dilations=list(d), group=g)

    def op_conv_transpose(self) -> Val:
        x = self.pick(rank=4)
        n, c, h, w = x.shape
        m = int(self.rng.integers(1, 4))
        k = (int(self.rng.integers(1, 4)), int(self.rng.integers(1, 4)))
        s = (int(self.rng.integers(1, 3)), int(self.rng.integers(1, 3)))
        pads = [int(self.rng.integers(0, k[i % 2])) for i in range(4)]
        oh = s[0] * (h - 1) + k[0] - pads[0] - pads[2]
        ow = s[1] * (w - 1) + k[1] - pads[1] - pads[3]
        if oh < 1 or ow < 1 or n * m * oh * ow > MAX_ELEMENTS:
            raise _Skip
        wname, warr = self.weight((c, m, *k), 1.0 / math.sqrt(c * k[0] * k[1]))
        ins = [x.name, wname]
        if self.coin(0.5):
            ins.append(self.const(self.exact_array((m,), -0.5, 0.5), "b"))
        bound = float(np.abs(warr).sum()) * x.bound + 0.5
        return self.node("ConvTranspose", ins, (n, m, oh, ow), -bound, bound, False, "linalg",
                         x.depth + 1, kernel_shape=list(k), strides=list(s), pads=pads)

    def op_pool(self) -> Val:
        x = self.pick(rank=4)
        n, c, h, w = x.shape
        op = self.choice(["MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"])
        if op.startswith("Global"):
            fam = "exact" if op == "GlobalMaxPool" else "reduce"
            return self.node(op, [x.name], (n, c, 1, 1), x.lo, x.hi,
                             x.exact and op == "GlobalMaxPool", fam, x.depth + 1)
        k = (int(self.rng.integers(1, 4)), int(self.rng.integers(1, 4)))
        s = (int(self.rng.integers(1, 3)), int(self.rng.integers(1, 3)))
        pads = [int(self.rng.integers(0, k[i % 2])) if k[i % 2] > 1 else 0 for i in range(4)]
        oh = (h + pads[0] + pads[2] - k[0]) // s[0] + 1
        ow = (w + pads[1] + pads[3] - k[1]) // s[1] + 1
        if oh < 1 or ow < 1:
            raise _Skip
        attrs = dict(kernel_shape=list(k), strides=list(s), pads=pads)
        if op == "AveragePool":
            attrs["count_include_pad"] = int(self.coin())
            return self.node(op, [x.name], (n, c, oh, ow), -x.bound, x.bound, False, "pool",
                             x.depth + 1, **attrs)
        return self.node(op, [x.name], (n, c, oh, ow), x.lo, x.hi, x.exact, "exact",
                         x.depth + 1, **attrs)

    def op_gemm(self) -> Val:
        a = self.pick(rank=2)
        mm, kk = a.shape
        ta = self.coin(0.3)
        if ta:
            mm, kk = kk, mm
        nn = int(self.rng.integers(1, 9))
        if mm * nn > MAX_ELEMENTS:
            raise _Skip
        tb = self.coin(0.5)
        wname, warr = self.weight((nn, kk) if tb else (kk, nn), 2.0 / math.sqrt(kk))
        alpha = float(self.choice([1.0, 1.0, 0.5]))
        beta = float(self.choice([1.0, 1.0, 2.0]))
        ins = [a.name, wname]
        if self.coin(0.7):
            cshape = self.choice([(nn,), (1, nn), (mm, nn), (mm, 1)])
            ins.append(self.const(self.exact_array(cshape, -0.5, 0.5), "c"))
        bound = alpha * float(np.abs(warr).sum(axis=1 if tb else 0).max()) * a.bound + beta * 0.5
        return self.node("Gemm", ins, (mm, nn), -bound, bound, False, "linalg", a.depth + 1,
                         alpha=alpha, beta=beta, transA=int(ta), transB=int(tb))

    def op_matmul(self) -> Val:
        a = self.pick(min_rank=1, max_rank=4)
        kk = a.shape[-1]
        nn = int(self.rng.integers(1, 9))
        if self.coin(0.3) and len(a.shape) >= 2:
            # a batched right operand: a value of shape [..., K, N]
            bshape = (*a.shape[:-2], kk, nn)
            b = self.input(bshape, -1, 1)
            wb = float(kk)
        else:
            name, warr = self.weight((kk, nn), 2.0 / math.sqrt(kk))
            b = Val(name, (kk, nn), -1, 1, True)
            wb = float(np.abs(warr).sum(axis=0).max())
        out = (*a.shape[:-1], nn) if len(a.shape) >= 2 else (nn,)
        if int(np.prod(out)) > MAX_ELEMENTS:
            raise _Skip
        bound = wb * a.bound
        return self.node("MatMul", [a.name, b.name], out, -bound, bound, False, "linalg",
                         a.depth + 1)

    def op_norm(self) -> Val:
        op = self.choice(["BatchNormalization", "InstanceNormalization", "LayerNormalization",
                          "LRN"])
        if op == "LayerNormalization":
            x = self.pick(min_rank=2)
            axis = int(self.rng.integers(-len(x.shape) + 1, len(x.shape)))
            nshape = x.shape[axis:]
            if int(np.prod(nshape)) < 2:
                raise _Skip
            sc = self.const(self.exact_array(nshape, 0.5, 1.5), "g")
            bi = self.const(self.exact_array(nshape, -0.5, 0.5), "b")
            bound = 1.5 * math.sqrt(int(np.prod(nshape))) + 0.5
            return self.node(op, [x.name, sc, bi], x.shape, -bound, bound, False,
                             "normalization", x.depth + 1, axis=axis, epsilon=0.01)
        x = self.pick(rank=4)
        c = x.shape[1]
        if op == "LRN":
            return self.node(op, [x.name], x.shape, -x.bound, x.bound, False, "normalization",
                             x.depth + 1, size=int(self.choice([1, 3, 5])), alpha=1e-2,
                             beta=0.75, bias=1.0)
        sc = self.const(self.exact_array((c,), 0.5, 1.5), "g")
        bi = self.const(self.exact_array((c,), -0.5, 0.5), "b")
        if op == "InstanceNormalization":
            hw = x.shape[2] * x.shape[3]
            bound = 1.5 * math.sqrt(hw) + 0.5
            return self.node(op, [x.name, sc, bi], x.shape, -bound, bound, False,
                             "normalization", x.depth + 1, epsilon=0.01)
        mean = self.const(self.exact_array((c,), -0.5, 0.5), "m")
        var = self.const(self.exact_array((c,), 0.25, 2.0), "var")
        bound = 1.5 * (x.bound + 0.5) / math.sqrt(0.25) + 0.5
        return self.node(op, [x.name, sc, bi, mean, var], x.shape, -bound, bound, False,
                         "normalization", x.depth + 1, epsilon=1e-5)

    def op_softmax(self) -> Val:
        x = self.pick(min_rank=1)
        op = self.choice(["Softmax", "LogSoftmax"])
        axis = int(self.rng.integers(-len(x.shape), len(x.shape)))
        lo, hi = (0, 1) if op == "Softmax" else (-2 * x.bound - math.log(x.shape[axis]) - 1, 0)
        return self.node(op, [x.name], x.shape, lo, hi, False, "softmax", x.depth + 1, axis=axis)

    # --------------------------------------------------------------- data movement
    def op_reshape(self) -> Val:
        x = self.pick()
        op = self.choice(["Reshape", "Flatten", "Squeeze", "Unsqueeze"])
        size = x.size
        if op == "Flatten":
            axis = int(self.rng.integers(0, len(x.shape) + 1))
            out = (int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis:])))
            return self.node(op, [x.name], out, x.lo, x.hi, x.exact, "data", x.depth, axis=axis)
        if op == "Squeeze":
            ones = [i for i, d in enumerate(x.shape) if d == 1]
            if not ones:
                raise _Skip
            axes = sorted(set(self.choice(ones) for _ in range(2)))
            out = tuple(d for i, d in enumerate(x.shape) if i not in axes)
            return self.node(op, [x.name, self.const(np.array(axes, np.int64))], out, x.lo,
                             x.hi, x.exact, "data", x.depth)
        if op == "Unsqueeze":
            if len(x.shape) >= 5:
                raise _Skip
            ax = int(self.rng.integers(0, len(x.shape) + 1))
            out = (*x.shape[:ax], 1, *x.shape[ax:])
            return self.node(op, [x.name, self.const(np.array([ax], np.int64))], out, x.lo,
                             x.hi, x.exact, "data", x.depth)
        # Reshape to a random factorization, maybe with a -1 and a 0
        factors = []
        rest = size
        for _ in range(int(self.rng.integers(0, 4))):
            divs = [d for d in range(1, rest + 1) if rest % d == 0]
            f = int(self.choice(divs))
            factors.append(f)
            rest //= f
        factors.append(rest)
        self.rng.shuffle(factors)
        out = tuple(int(f) for f in factors)
        spec = list(out)
        if self.coin(0.3):
            spec[int(self.rng.integers(len(spec)))] = -1
        if self.coin(0.2) and len(x.shape) >= 1 and len(out) >= 1 and out[0] == x.shape[0]:
            spec[0] = 0
        return self.node("Reshape", [x.name, self.const(np.array(spec, np.int64))], out, x.lo,
                         x.hi, x.exact, "data", x.depth)

    def op_transpose(self) -> Val:
        x = self.pick(min_rank=2)
        perm = [int(p) for p in self.rng.permutation(len(x.shape))]
        out = tuple(x.shape[p] for p in perm)
        return self.node("Transpose", [x.name], out, x.lo, x.hi, x.exact, "data", x.depth,
                         perm=perm)

    def op_concat(self) -> Val:
        x = self.pick(min_rank=1)
        axis = int(self.rng.integers(0, len(x.shape)))
        parts = [x]
        for _ in range(int(self.rng.integers(1, 3))):
            same = [v for v in self.vals if v.dtype == "f" and len(v.shape) == len(x.shape)
                    and all(a == b for i, (a, b) in enumerate(zip(v.shape, x.shape)) if i != axis)]
            if same and self.coin(0.6):
                parts.append(self.tame(self.choice(same)))
            else:
                shape = list(x.shape)
                shape[axis] = int(self.rng.integers(1, 4))
                parts.append(self.input(tuple(shape)))
        out = list(x.shape)
        out[axis] = sum(p.shape[axis] for p in parts)
        if int(np.prod(out)) > MAX_ELEMENTS:
            raise _Skip
        b = max(p.bound for p in parts)
        return self.node("Concat", [p.name for p in parts], tuple(out), -b, b,
                         all(p.exact for p in parts), "data", max(p.depth for p in parts),
                         axis=axis - len(x.shape) if self.coin(0.3) else axis)

    def op_slice(self) -> Val:
        x = self.pick(min_rank=1)
        axes, starts, ends, steps = [], [], [], []
        out = list(x.shape)
        for ax in range(len(x.shape)):
            if not self.coin(0.6):
                continue
            d = x.shape[ax]
            step = int(self.choice([1, 1, 2, -1]))
            if step > 0:
                s = int(self.rng.integers(0, d))
                e = int(self.rng.integers(s + 1, d + 1))
                n = len(range(s, e, step))
                e_spec = e if self.coin(0.7) else (e - d if e < d else 2**31 - 1)
                s_spec = s if self.coin(0.7) else s - d
            else:
                s = int(self.rng.integers(0, d))
                e = int(self.rng.integers(-1, s))
                n = len(range(s, e, step))
                s_spec, e_spec = s, (e if e >= 0 else -d - 1)
            if n <= 0:
                continue
            axes.append(ax if self.coin(0.7) else ax - len(x.shape))
            starts.append(s_spec)
            ends.append(e_spec)
            steps.append(step)
            out[ax] = n
        if not axes:
            raise _Skip
        ins = [x.name, self.const(np.array(starts, np.int64)), self.const(np.array(ends, np.int64)),
               self.const(np.array(axes, np.int64)), self.const(np.array(steps, np.int64))]
        return self.node("Slice", ins, tuple(out), x.lo, x.hi, x.exact, "data", x.depth)

    def op_split(self) -> Val:
        x = self.pick(min_rank=1)
        axis = int(self.rng.integers(0, len(x.shape)))
        d = x.shape[axis]
        if d < 2:
            raise _Skip
        a = int(self.rng.integers(1, d))
        outs = self.node("Split", [x.name, self.const(np.array([a, d - a], np.int64))],
                         x.shape, x.lo, x.hi, x.exact, "data", x.depth, n_out=2, axis=axis)
        for o, n in zip(outs, (a, d - a)):
            s = list(x.shape)
            s[axis] = n
            o.shape = tuple(s)
        return self.choice(outs)

    def op_pad(self) -> Val:
        x = self.pick(min_rank=1)
        r = len(x.shape)
        mode = self.choice(["constant", "constant", "reflect", "edge"])
        pads = [int(self.rng.integers(0, 3)) for _ in range(2 * r)]
        if mode == "reflect":
            pads = [min(p, x.shape[i % r] - 1) for i, p in enumerate(pads)]
        out = tuple(d + pads[i] + pads[i + r] for i, d in enumerate(x.shape))
        if int(np.prod(out)) > MAX_ELEMENTS or out == x.shape:
            raise _Skip
        ins = [x.name, self.const(np.array(pads, np.int64))]
        val = 0.0
        if mode == "constant" and self.coin():
            val = float(self.choice([0.5, -1.0]))
            ins.append(self.const(np.array(val, np.float32)))
        b = max(x.bound, abs(val))
        return self.node("Pad", ins, out, -b, b, x.exact, "data", x.depth, mode=mode)

    def op_tile_expand(self) -> Val:
        x = self.pick(min_rank=1)
        if self.coin():
            reps = [int(self.rng.integers(1, 3)) for _ in x.shape]
            out = tuple(d * r for d, r in zip(x.shape, reps))
            if int(np.prod(out)) > MAX_ELEMENTS:
                raise _Skip
            return self.node("Tile", [x.name, self.const(np.array(reps, np.int64))], out,
                             x.lo, x.hi, x.exact, "data", x.depth)
        target = [d if d != 1 else int(self.rng.integers(1, 4)) for d in x.shape]
        if self.coin(0.3):
            target = [int(self.rng.integers(1, 3))] + target
        out = tuple(np.broadcast_shapes(x.shape, tuple(target)))
        if int(np.prod(out)) > MAX_ELEMENTS:
            raise _Skip
        return self.node("Expand", [x.name, self.const(np.array(target, np.int64))], out,
                         x.lo, x.hi, x.exact, "data", x.depth)

    def op_gather(self) -> Val:
        x = self.pick(min_rank=1)
        axis = int(self.rng.integers(0, len(x.shape)))
        d = x.shape[axis]
        ishape = self.choice([(), (2,), (2, 2)])
        idx = self.rng.integers(-d, d, size=ishape).astype(np.int64)
        out = (*x.shape[:axis], *ishape, *x.shape[axis + 1:])
        if int(np.prod(out)) > MAX_ELEMENTS or len(out) > 6:
            raise _Skip
        return self.node("Gather", [x.name, self.const(idx)], out, x.lo, x.hi, x.exact,
                         "data", x.depth, axis=axis)

    def op_depth_space(self) -> Val:
        x = self.pick(rank=4)
        n, c, h, w = x.shape
        if self.coin() and c % 4 == 0:
            mode = self.choice(["DCR", "CRD"])
            return self.node("DepthToSpace", [x.name], (n, c // 4, h * 2, w * 2), x.lo, x.hi,
                             x.exact, "data", x.depth, blocksize=2, mode=mode)
        if h % 2 or w % 2:
            raise _Skip
        return self.node("SpaceToDepth", [x.name], (n, c * 4, h // 2, w // 2), x.lo, x.hi,
                         x.exact, "data", x.depth, blocksize=2)

    # --------------------------------------------------------------- reductions
    REDUCE = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
              "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSumExp", "ReduceLogSum")

    def op_reduce(self) -> Val:
        op = self.choice(self.REDUCE)
        x = self.pick(min_rank=1)
        r = len(x.shape)
        axes = sorted({int(self.rng.integers(0, r)) for _ in range(int(self.rng.integers(1, 3)))})
        all_axes = self.coin(0.15)
        keep = int(self.coin())
        red = list(range(r)) if all_axes else axes
        count = int(np.prod([x.shape[a] for a in red]))
        out = tuple((1 if i in red else d) for i, d in enumerate(x.shape) if keep or i not in red)
        b = x.bound
        if op == "ReduceLogSum":
            x = self.positive(x)
        if op == "ReduceProd" and count * math.log(max(b, 1.0)) > math.log(1e4):
            raise _Skip
        prod = max(b, 1.0) ** count if op == "ReduceProd" else 0.0  # b ** count overflowed
        lo, hi, exact, fam = {
            "ReduceSum": (-b * count, b * count, False, "reduce"),
            "ReduceMean": (-b, b, False, "reduce"),
            "ReduceMax": (x.lo, x.hi, x.exact, "exact"),
            "ReduceMin": (x.lo, x.hi, x.exact, "exact"),
            "ReduceProd": (-prod, prod, False, "reduce"),
            "ReduceSumSquare": (0, b * b * count, False, "reduce"),
            "ReduceL1": (0, b * count, False, "reduce"),
            "ReduceL2": (0, b * math.sqrt(count), False, "reduce"),
            "ReduceLogSumExp": (-b, b + math.log(count), False, "reduce"),
            "ReduceLogSum": (-3, math.log(max(x.hi, 1) * count) + 1, False, "reduce"),
        }[op]
        signed = [a - r if self.coin(0.3) else a for a in red]
        ins = [x.name]
        attrs: dict = {"keepdims": keep}
        if op == "ReduceSum":
            if not all_axes:
                ins.append(self.const(np.array(signed, np.int64)))
        elif not all_axes:
            attrs["axes"] = signed
        return self.node(op, ins, out, lo, hi, exact, fam, x.depth + 1, **attrs)

    def op_arg(self) -> Val:
        x = self.pick(min_rank=1, exact=True)
        op = self.choice(["ArgMax", "ArgMin", "TopK", "CumSum"])
        r = len(x.shape)
        axis = int(self.rng.integers(0, r))
        if op == "CumSum":
            n = x.shape[axis]
            return self.node(op, [x.name, self.const(np.array(axis, np.int64))], x.shape,
                             -x.bound * n, x.bound * n, x.exact, "elementwise", x.depth + 1,
                             exclusive=int(self.coin(0.3)), reverse=int(self.coin(0.3)))
        if op == "TopK":
            k = int(self.rng.integers(1, x.shape[axis] + 1))
            out = list(x.shape)
            out[axis] = k
            vals = self.node(op, [x.name, self.const(np.array([k], np.int64))], tuple(out),
                             x.lo, x.hi, x.exact, "exact", x.depth + 1, n_out=2, axis=axis,
                             largest=int(self.coin(0.7)))
            vals[1].dtype = "i"  # indices: never an output (ties' order is unspecified)
            self.vals.remove(vals[1])
            return vals[0]
        # ties: exact values may repeat; ONNX and we both take the first index
        keep = int(self.coin())
        out = tuple(1 if i == axis else d for i, d in enumerate(x.shape) if keep or i != axis)
        return self.node(op, [x.name], out, 0, x.shape[axis], True, "exact", x.depth + 1,
                         dtype="i", axis=axis, keepdims=keep)

    def op_recurrent(self) -> Val:
        """LSTM, GRU or RNN on a [seq, batch, input] value with the default activations, so
        Y and Y_h stay in (-1, 1) (from zero initial states); one of them is the result."""
        x = self.pick(rank=3)
        steps, batch, inputs = x.shape
        op = self.choice(["LSTM", "GRU", "RNN"])
        gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
        direction = self.choice(["forward", "reverse", "bidirectional"])
        dirs = 2 if direction == "bidirectional" else 1
        hidden = int(self.rng.integers(1, 6))
        if steps * dirs * batch * hidden > MAX_ELEMENTS:
            raise _Skip
        scale = 1.0 / math.sqrt(max(inputs, hidden)) / max(1.0, x.bound)
        w, _ = self.weight((dirs, gates * hidden, inputs), scale)
        r, _ = self.weight((dirs, gates * hidden, hidden), scale)
        ins = [x.name, w, r]
        if self.coin(0.7):
            ins.append(self.const(self.exact_array((dirs, 2 * gates * hidden), -0.5, 0.5), "c"))
        attrs = {"hidden_size": hidden, "direction": direction}
        if op == "GRU":
            attrs["linear_before_reset"] = int(self.coin())
        y, y_h = self.node(op, ins, (steps, dirs, batch, hidden), -1, 1, False,
                           "transcendental", x.depth + steps, n_out=2, **attrs)
        y_h.shape = (dirs, batch, hidden)
        (self.vals.remove(y_h) if self.coin() else self.vals.remove(y))
        return y if y in self.vals else y_h

    GENERATORS = (
        ("op_unary", 6), ("op_binary", 6), ("op_compare_where", 1), ("op_conv", 3),
        ("op_conv_transpose", 1), ("op_pool", 2), ("op_gemm", 2), ("op_matmul", 2),
        ("op_norm", 2), ("op_softmax", 1), ("op_reshape", 2), ("op_transpose", 2),
        ("op_concat", 2), ("op_slice", 2), ("op_split", 1), ("op_pad", 1),
        ("op_tile_expand", 1), ("op_gather", 1), ("op_depth_space", 1), ("op_reduce", 3),
        ("op_arg", 1), ("op_recurrent", 1),
    )

    def build(self) -> OnnxGraph:
        names = [g for g, _ in self.GENERATORS]
        weights = np.array([w for _, w in self.GENERATORS], float)
        weights /= weights.sum()
        self.input(self.random_shape())
        target = int(self.rng.integers(1, self.max_ops + 1))
        tries = 0
        while len(self.ops) < target and tries < 50 * target:
            tries += 1
            gen = names[int(self.rng.choice(len(names), p=weights))]
            mark = (len(self.nodes), len(self.inits), len(self.inputs), dict(self.feeds),
                    list(self.vals), set(self.families), list(self.ops), set(self.used))
            try:
                getattr(self, gen)()
            except _Skip:  # undo whatever the generator added
                (n_nodes, n_inits, n_inputs, self.feeds, self.vals, self.families, self.ops,
                 self.used) = mark
                del self.nodes[n_nodes:], self.inits[n_inits:], self.inputs[n_inputs:]
        return self.finish()

    def finish(self) -> OnnxGraph:
        produced = [v for v in self.vals if v.name not in self.feeds
                    and not v.name.startswith("c") and v.dtype in ("f", "i", "b")]
        produced = [v for v in produced if any(v.name in n.output for n in self.nodes)]
        if not produced:  # every op skipped: one relu
            v = self.vals[0]
            produced = [self.node("Relu", [v.name], v.shape, 0, v.bound, v.exact, "exact", 1)]
        leaves = [v for v in produced if v.name not in self.used]
        outs = [produced[-1]]
        for v in reversed(leaves):
            if v not in outs and len(outs) < 3:
                outs.append(v)
        used_inputs = {i for n in self.nodes for i in n.input}
        inputs = [vi for vi in self.inputs if vi.name in used_inputs]
        feeds = {vi.name: self.feeds[vi.name] for vi in inputs}
        graph = helper.make_graph(
            self.nodes, f"fuzz_{self.seed}", inputs,
            [helper.make_empty_tensor_value_info(v.name) for v in outs], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  ir_version=IR_VERSION)
        return OnnxGraph(self.seed, model, feeds, set(self.families), list(self.ops),
                         [v.bound if v.dtype == "f" else 1.0 for v in outs])


def random_onnx_graph(seed: int, max_ops: int = 8) -> OnnxGraph:
    """The graph of `seed`: 1..max_ops random nodes (plus the glue some ops need)."""
    return Builder(seed, max_ops).build()


__all__ = ["OnnxGraph", "random_onnx_graph", "TOLERANCE"]
