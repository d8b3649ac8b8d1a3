"""Every gradient rule of `differentiate` against central finite differences (float64,
relative error < 1e-3) and against torch.autograd (<= 1e-5 in float64, <= 1e-4 in
float32): one small graph per rule, its operands trainable weights, a mean squared error
(or cross-entropy) loss on its output, evaluated by the reference kernels."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from glow_mlir.dialects import glow
from grad_testing import (
    Differentiated,
    build_graph,
    finite_differences,
    rel_err,
    torch_grads,
)

torch = pytest.importorskip("torch")
F = torch.nn.functional


@dataclass(frozen=True)
class Case:
    id: str
    shapes: dict[str, tuple[int, ...]]
    forward: Callable  # (GraphBuilder, values) -> output
    reference: Callable  # (**torch tensors) -> output
    loss: str = "mse"
    positive: tuple[str, ...] = ()  # weights drawn in [0.5, 1.5] (divisors, logs, roots)
    fixed: tuple[str, ...] = ()  # operands without a gradient (running statistics)
    batch_norm: str = "train"


def T(b, dims, like):
    return b.tensor(dims, like)


def _conv(stride=(1, 1), pads=(0, 0, 0, 0), dilation=(1, 1), group=1, cin=3, cout=4,
          k=(3, 3), hw=(7, 6)):
    from glow_mlir.dialects.glow_ops.shapes import spatial_out

    oh, ow = spatial_out(hw, k, stride, pads, dilation)

    def fwd(b, v):
        return b.op(glow.ConvolutionOp, [v["x"], v["w"], v["b"]], T(b, [2, cout, oh, ow], v["x"]),
                    kernels=list(k), strides=list(stride), pads=list(pads),
                    dilation=list(dilation), group=group)

    def ref(x, w, b):
        xp = F.pad(x, (pads[1], pads[3], pads[0], pads[2]))
        return F.conv2d(xp, w, b, stride=stride, dilation=dilation, groups=group)

    name = f"conv_s{stride[0]}{stride[1]}_p{''.join(map(str, pads))}_d{dilation[0]}_g{group}"
    return Case(name, {"x": (2, cin, *hw), "w": (cout, cin // group, *k), "b": (cout,)},
                fwd, ref)


def _pool(kind, k=(2, 2), s=(2, 2), pads=(0, 0, 0, 0), include=False, hw=(6, 7)):
    from glow_mlir.dialects.glow_ops.shapes import spatial_out

    oh, ow = spatial_out(hw, k, s, pads)
    cls = glow.MaxPoolOp if kind == "max" else glow.AvgPoolOp

    def fwd(b, v):
        extra = {"count_include_pad": include} if kind == "avg" else {}
        return b.op(cls, [v["x"]], T(b, [2, 3, oh, ow], v["x"]), kernels=list(k),
                    strides=list(s), pads=list(pads), **extra)

    def ref(x):
        if kind == "max":
            xp = F.pad(x, (pads[1], pads[3], pads[0], pads[2]), value=-float("inf"))
            return F.max_pool2d(xp, k, s)
        xp = F.pad(x, (pads[1], pads[3], pads[0], pads[2]))
        sums = F.avg_pool2d(xp, k, s) * (k[0] * k[1])
        if include:
            return sums / (k[0] * k[1])
        ones = F.pad(torch.ones_like(x), (pads[1], pads[3], pads[0], pads[2]))
        return sums / (F.avg_pool2d(ones, k, s) * (k[0] * k[1]))

    tag = f"{kind}_pool_k{k[0]}{k[1]}_s{s[0]}{s[1]}_p{''.join(map(str, pads))}"
    return Case(tag + ("_incl" if include else ""), {"x": (2, 3, *hw)}, fwd, ref)


def _binary(cls, fn, name):
    return Case(name, {"a": (3, 4), "c": (3, 4)},
                lambda b, v: b.binary(cls, v["a"], v["c"]), lambda a, c: fn(a, c),
                positive=("c",) if cls is glow.DivOp else ())


def _unary(cls, fn, name, positive=False):
    return Case(name, {"x": (3, 5)}, lambda b, v: b.unary(cls, v["x"]), lambda x: fn(x),
                positive=("x",) if positive else ())


def _gather_fwd(b, v):
    idx = b.constant(np.array([[2, 0], [-1, 2]], dtype=np.int64))
    return b.op(glow.GatherOp, [v["x"], idx], T(b, [3, 2, 2, 2], v["x"]), axis=1)


def _lrn_ref(x, half=1, alpha=1e-2, beta=0.75, k=1.0):
    size = 2 * half + 1
    sq = F.pad(x * x, (0, 0, 0, 0, half, half))
    sums = sum(sq[:, j:j + x.shape[1]] for j in range(size))
    return x / (k + alpha / size * sums) ** beta


def _bn_fwd(b, v):
    return b.op(glow.BatchNormalizationOp, [v["x"], v["scale"], v["bias"], v["mean"], v["var"]],
                v["x"].type, epsilon=1e-5)


CASES = [
    _conv(),
    _conv(stride=(2, 2), pads=(1, 1, 1, 1)),
    _conv(stride=(2, 1), pads=(0, 2, 1, 0), dilation=(2, 1)),
    _conv(group=2, cin=4, cout=6, pads=(1, 1, 1, 1)),
    _conv(stride=(3, 3), k=(2, 2), hw=(8, 8)),  # rows no window reaches
    _conv(pads=(3, 0, 3, 0), k=(2, 2)),  # pads beyond the kernel's extent
    _pool("max"),
    _pool("max", (3, 3), (2, 2), (1, 1, 1, 1)),
    _pool("avg"),
    _pool("avg", (3, 3), (2, 1), (1, 0, 1, 1)),
    _pool("avg", (3, 3), (2, 2), (1, 1, 1, 1), include=True),
    Case("adaptive_avg_pool", {"x": (2, 3, 5, 7)},
         lambda b, v: b.op(glow.AdaptiveAvgPoolOp, [v["x"]], T(b, [2, 3, 2, 3], v["x"])),
         lambda x: F.adaptive_avg_pool2d(x, (2, 3))),
    Case("fully_connected", {"x": (3, 5), "w": (5, 4), "b": (4,)},
         lambda b, v: b.op(glow.FullyConnectedOp, [v["x"], v["w"], v["b"]],
                           T(b, [3, 4], v["x"])),
         lambda x, w, b: x @ w + b),
    Case("mat_mul", {"x": (3, 5), "w": (5, 4)}, lambda b, v: b.matmul(v["x"], v["w"]),
         lambda x, w: x @ w),
    Case("batch_mat_mul", {"x": (2, 3, 5), "w": (2, 5, 4)},
         lambda b, v: b.op(glow.BatchMatMulOp, [v["x"], v["w"]], T(b, [2, 3, 4], v["x"])),
         lambda x, w: torch.bmm(x, w)),
    _binary(glow.AddOp, lambda a, c: a + c, "add"),
    _binary(glow.SubOp, lambda a, c: a - c, "sub"),
    _binary(glow.MulOp, lambda a, c: a * c, "mul"),
    _binary(glow.DivOp, lambda a, c: a / c, "div"),
    _unary(glow.ReluOp, torch.relu, "relu"),
    _unary(glow.SigmoidOp, torch.sigmoid, "sigmoid"),
    _unary(glow.TanhOp, torch.tanh, "tanh"),
    _unary(glow.ExpOp, torch.exp, "exp"),
    _unary(glow.LogOp, torch.log, "log", positive=True),
    _unary(glow.SqrtOp, torch.sqrt, "sqrt", positive=True),
    _unary(glow.NegOp, torch.neg, "neg"),
    Case("soft_max", {"x": (3, 5)}, lambda b, v: b.unary(glow.SoftMaxOp, v["x"], axis=-1),
         lambda x: torch.softmax(x, -1)),
    Case("soft_max_axis0", {"x": (3, 5)}, lambda b, v: b.unary(glow.SoftMaxOp, v["x"], axis=0),
         lambda x: torch.softmax(x, 0)),
    Case("log_soft_max", {"x": (3, 5)},
         lambda b, v: b.unary(glow.LogSoftMaxOp, v["x"], axis=1),
         lambda x: torch.log_softmax(x, 1)),
    Case("cross_entropy", {"x": (4, 6)}, lambda b, v: v["x"], lambda x: x,
         loss="cross_entropy"),
    Case("cross_entropy_rank3", {"x": (2, 3, 5)}, lambda b, v: v["x"], lambda x: x,
         loss="cross_entropy"),
    Case("soft_max_cross_entropy", {"x": (4, 6)},
         lambda b, v: b.unary(glow.SoftMaxOp, v["x"], axis=-1), lambda x: x,
         loss="cross_entropy"),
    Case("reshape", {"x": (2, 6)}, lambda b, v: b.reshape(v["x"], [3, 4]),
         lambda x: x.reshape(3, 4)),
    Case("transpose", {"x": (2, 3, 4)}, lambda b, v: b.transpose(v["x"], [2, 0, 1]),
         lambda x: x.permute(2, 0, 1)),
    Case("slice", {"x": (4, 5)}, lambda b, v: b.slice(v["x"], [1, 2], [2, 3]),
         lambda x: x[1:3, 2:5]),
    Case("concat", {"a": (2, 3), "c": (2, 4)},
         lambda b, v: b.op(glow.ConcatOp, [v["a"], v["c"]], T(b, [2, 7], v["a"]), dim=1),
         lambda a, c: torch.cat([a, c], 1)),
    Case("tile", {"x": (2, 3)},
         lambda b, v: b.op(glow.TileOp, [v["x"]], T(b, [2, 9], v["x"]), count=3, axis=1),
         lambda x: x.repeat(1, 3)),
    Case("gather", {"x": (3, 4, 2)}, _gather_fwd,
         lambda x: x[:, torch.tensor([[2, 0], [3, 2]])]),
    Case("batched_reduce_add", {"x": (2, 3, 4)}, lambda b, v: b.reduce_add(v["x"], [0, 2]),
         lambda x: x.sum((0, 2))),
    Case("batched_reduce_mean", {"x": (2, 3, 4)},
         lambda b, v: b.op(glow.BatchedReduceMeanOp, [v["x"]], T(b, [2, 4], v["x"]), axes=[1]),
         lambda x: x.mean(1)),
    Case("broadcast", {"x": (3, 1)}, lambda b, v: b.broadcast(v["x"], [2, 3, 4]),
         lambda x: x.expand(2, 3, 4)),
    Case("batched_add", {"x": (3, 4), "s": (4,)},
         lambda b, v: b.op(glow.BatchedAddOp, [v["x"], v["s"]], v["x"].type),
         lambda x, s: x + s),
    Case("pad", {"x": (2, 3)}, lambda b, v: b.pad(v["x"], [1, 0, 0, 2]),
         lambda x: F.pad(x, (0, 2, 1, 0))),
    Case("insert_tensor", {"big": (4, 5), "small": (1, 2)},
         lambda b, v: b.op(glow.InsertTensorOp, [v["big"], v["small"]], v["big"].type,
                           start=[1, 1], count=2, axis=0),
         lambda big, small: torch.cat([big[:1], torch.cat(
             [big[1:3, :1], small.repeat(2, 1), big[1:3, 3:]], 1), big[3:]], 0)),
    Case("batch_normalization",
         {"x": (2, 3, 4, 2), "scale": (3,), "bias": (3,), "mean": (3,), "var": (3,)},
         _bn_fwd,
         lambda x, scale, bias, mean, var: F.batch_norm(x, mean, var, scale, bias, False,
                                                        0.0, 1e-5),
         positive=("var",), fixed=("mean", "var"), batch_norm="frozen"),
    Case("batch_normalization_train",
         {"x": (3, 2, 2, 2), "scale": (2,), "bias": (2,), "mean": (2,), "var": (2,)},
         _bn_fwd,
         lambda x, scale, bias, mean, var: F.batch_norm(x, None, None, scale, bias, True,
                                                        0.0, 1e-5),
         positive=("var",), fixed=("mean", "var")),
    Case("local_response_normalization", {"x": (2, 5, 3, 2)},
         lambda b, v: b.unary(glow.LocalResponseNormalizationOp, v["x"], half_window_size=1,
                              alpha=1e-2, beta=0.75, k=1.0),
         _lrn_ref),
    Case("clip", {"x": (4, 5)},
         lambda b, v: b.unary(glow.ClipOp, v["x"], min=-0.5, max=0.75),  # f32-exact bounds
         lambda x: torch.clamp(x, -0.5, 0.75)),
    _binary(glow.MaxOp, torch.maximum, "max"),
    _binary(glow.MinOp, torch.minimum, "min"),
    _unary(glow.GeluOp, F.gelu, "gelu"),
    Case("gelu_tanh", {"x": (3, 5)},
         lambda b, v: b.unary(glow.GeluOp, v["x"], approximate="tanh"),
         lambda x: F.gelu(x, approximate="tanh")),
    Case("layer_normalization", {"x": (2, 3, 4), "scale": (3, 4), "bias": (3, 4)},
         lambda b, v: b.op(glow.LayerNormalizationOp, [v["x"], v["scale"], v["bias"]],
                           v["x"].type, epsilon=1e-5),
         lambda x, scale, bias: F.layer_norm(x, (3, 4), scale, bias, 1e-5)),
    Case("layer_normalization_last_axis", {"x": (3, 5), "scale": (5,), "bias": (5,)},
         lambda b, v: b.op(glow.LayerNormalizationOp, [v["x"], v["scale"], v["bias"]],
                           v["x"].type, epsilon=1e-3),
         lambda x, scale, bias: F.layer_norm(x, (5,), scale, bias, 1e-3)),
    Case("shared_weight", {"x": (3, 3)},  # x used three times: gradients accumulate
         lambda b, v: b.mul(b.matmul(v["x"], v["x"]), b.unary(glow.TanhOp, v["x"])),
         lambda x: (x @ x) * torch.tanh(x)),
]


def _weights(case: Case, dtype) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    out = {}
    for name, dims in case.shapes.items():
        a = rng.uniform(0.5, 1.5, dims) if name in case.positive else rng.standard_normal(dims)
        out[name] = a.astype(dtype)
    return out


def _labels(case: Case, step: Differentiated, dtype) -> np.ndarray:
    rng = np.random.default_rng(7)
    t = step.fn.body.blocks.first.args[0].type  # the labels argument
    dims = tuple(t.get_shape())
    if case.loss == "cross_entropy":
        classes = step.fn.function_type.outputs.data[0].get_shape()[-1]
        return rng.integers(0, classes, dims).astype(np.int64)
    return rng.standard_normal(dims).astype(dtype)


def _prepare(case: Case, dtype):
    weights = _weights(case, dtype)
    step = Differentiated(weights, case.forward, case.loss, batch_norm=case.batch_norm)
    return weights, step, _labels(case, step, dtype)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_gradient_matches_torch_float64(case: Case) -> None:
    weights, step, labels = _prepare(case, np.float64)
    got = step.grads(labels)
    assert set(got) == set(case.shapes) - set(case.fixed)
    want_loss, want = torch_grads(weights, case.reference, labels, case.loss, case.fixed)
    assert abs(step.loss(labels, step.weights) - want_loss) <= 1e-9 * max(1.0, abs(want_loss))
    for name, g in got.items():
        assert rel_err(g, want[name]) <= 1e-5, name


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_gradient_matches_finite_differences(case: Case) -> None:
    _, step, labels = _prepare(case, np.float64)
    got = step.grads(labels)
    for name, g in got.items():
        picks, est = finite_differences(step, labels, name)
        assert rel_err(g.reshape(-1)[picks], est) < 1e-3, name


@pytest.mark.parametrize("case", CASES[::3], ids=[c.id for c in CASES[::3]])
def test_gradient_matches_torch_float32(case: Case) -> None:
    weights, step, labels = _prepare(case, np.float32)
    got = step.grads(labels)
    _, want = torch_grads(weights, case.reference, labels, case.loss, case.fixed)
    for name, g in got.items():
        assert rel_err(g, want[name]) <= 1e-4, name


def test_every_rule_has_a_case() -> None:
    """A rule added without a case here is untested: the cases' ops cover the registry."""
    from glow_mlir.transforms.graph.gradients.registry import RULES, load_rules

    load_rules()
    covered: set[type] = set()
    for case in CASES:
        module = build_graph(_weights(case, np.float64), case.forward)
        covered |= {type(op) for op in module.walk()}
    missing = sorted(c.name for c in RULES if c not in covered)
    assert not missing, missing

