"""LSTM, GRU and RNN, unrolled over the sequence at import, as Glow's ONNX loader does.

Glow's graph has no recurrent op: its loader writes out every time step as graph ops
(fully connected layers, element-wise gates, slices, concats), which every backend already
runs. So do we: shapes are static, so the sequence length and the batch are known and the
loop unrolls. One skeleton (`_unroll`) reads what the three ops share (X, W, R, B,
sequence_lens, initial_h, direction, layout, clip, activations), projects the whole input
sequence with one fully connected layer per direction, steps through the sequence and
assembles Y, Y_h (and Y_c); a cell per op (`_rnn_step`, `_gru_step`, `_lstm_step`) says
what one step computes from the projected input and the previous state.

The semantics are ONNX's (`onnx.reference.ops.op_lstm`, `op_gru`, `op_rnn`); what that
reference leaves out follows onnxruntime:
- `sequence_lens`: the steps of a batch entry past its length output zeros and leave its
  state unchanged, so Y_h/Y_c are the state after its last valid step; the reverse
  direction thus starts at position length - 1. An entry of length 0 has zero Y_h/Y_c.
- `clip` bounds the input of every gate activation (after the peephole terms), not the
  cell state given to LSTM's h.
- `activation_alpha`/`activation_beta` are consumed in order by the activations that take
  them (onnxruntime's LSTM and GRU; its RNN indexes them by direction, which is the same
  whenever both directions use the same function); names match without regard to case.
  An activation left without a value gets the default of the ONNX operator of its name
  (LeakyRelu 0.01, HardSigmoid 0.2/0.5, Elu 1, ThresholdedRelu 1; Affine 1/0 and ScaledTanh
  1/1, the defaults of those former ONNX ops), where onnxruntime uses 0 for ThresholdedRelu,
  Affine and ScaledTanh.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np
from xdsl.dialects.builtin import i1

from glow_mlir.dialects import glow
from glow_mlir.dialects.glow_ops.types import fmt_shape, is_float
from glow_mlir.frontends.onnx.builder import Value
from glow_mlir.frontends.onnx.converters import activations as act
from glow_mlir.frontends.onnx.node import Node

DIRECTIONS = ("forward", "reverse", "bidirectional")

# ---------------------------------------------------------------------- activations

Build = Callable[[Node, Value, float, float], Value]


@dataclass(frozen=True)
class _ActivationKind:
    build: Build
    alpha: float | None = None
    """The default alpha, for a function that takes one (None: it takes none)."""
    beta: float | None = None


def _ew(n: Node, cls: type[glow.GlowOp], *values: Value) -> Value:
    return n.b.elementwise(cls, list(values))


def _affine(n: Node, x: Value, alpha: float, beta: float) -> Value:
    scaled = _ew(n, glow.MulOp, x, n.b.scalar_like(x, alpha))
    return _ew(n, glow.AddOp, scaled, n.b.scalar_like(x, beta))


def _scaled_tanh(n: Node, x: Value, alpha: float, beta: float) -> Value:
    inner = _ew(n, glow.TanhOp, _ew(n, glow.MulOp, x, n.b.scalar_like(x, beta)))
    return _ew(n, glow.MulOp, inner, n.b.scalar_like(x, alpha))


ACTIVATIONS: dict[str, _ActivationKind] = {
    "relu": _ActivationKind(lambda n, x, a, b: _ew(n, glow.ReluOp, x)),
    "tanh": _ActivationKind(lambda n, x, a, b: _ew(n, glow.TanhOp, x)),
    "sigmoid": _ActivationKind(lambda n, x, a, b: _ew(n, glow.SigmoidOp, x)),
    "affine": _ActivationKind(_affine, 1.0, 0.0),
    "leakyrelu": _ActivationKind(
        lambda n, x, a, b: n.b.op(glow.LeakyReluOp, [x], x.type, alpha=a), 0.01),
    "thresholdedrelu": _ActivationKind(lambda n, x, a, b: act.thresholded_relu_of(n, x, a), 1.0),
    "scaledtanh": _ActivationKind(_scaled_tanh, 1.0, 1.0),
    "hardsigmoid": _ActivationKind(act.hard_sigmoid_of, 0.2, 0.5),
    "elu": _ActivationKind(lambda n, x, a, b: act.elu_of(n, x, a), 1.0),
    "softsign": _ActivationKind(lambda n, x, a, b: act.softsign_of(n, x)),
    "softplus": _ActivationKind(lambda n, x, a, b: act.softplus_of(n, x)),
}
"""The activation functions the ONNX recurrent ops name, by lower-case name."""

Activation = Callable[[Value], Value]


def _activations(n: Node, defaults: Sequence[str], directions: int) -> list[list[Activation]]:
    """Each direction's activation functions, from `activations`, `activation_alpha` and
    `activation_beta` (module docstring)."""
    names = n.attr("activations", None)
    per_direction = len(defaults)
    if names is None:
        names = list(defaults) * directions
    elif len(names) == 2 * per_direction and directions == 1 and n.op_type == "RNN":
        names = names[:1]  # RNN's schema default is ["Tanh", "Tanh"] whatever the direction
    if len(names) != per_direction * directions:
        n.fail(f"activations lists {len(names)} function(s), but {n.op_type} with "
               f"{directions} direction(s) takes {per_direction * directions} "
               f"({per_direction} per direction)")
    alphas = iter(n.floats("activation_alpha", []))
    betas = iter(n.floats("activation_beta", []))
    funcs: list[Activation] = []
    for name in names:
        kind = ACTIVATIONS.get(name.lower())
        if kind is None:
            n.fail(f"unknown activation '{name}' (known: Relu, Tanh, Sigmoid, Affine, LeakyRelu, "
                   f"ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus)")
        a = next(alphas, kind.alpha) if kind.alpha is not None else 0.0
        b = next(betas, kind.beta) if kind.beta is not None else 0.0
        def apply(x: Value, kind: _ActivationKind = kind, a: float = a, b: float = b) -> Value:
            return kind.build(n, x, a, b)  # defaults: this iteration's kind, a, b
        funcs.append(apply)
    return [funcs[d * per_direction:(d + 1) * per_direction] for d in range(directions)]


# ---------------------------------------------------------------------- one direction


@dataclass
class Direction:
    """What the steps of one direction use: weights transposed so a step computes
    `x @ w` (one column block per gate), the activations, and the op's options."""

    n: Node
    batch: int
    hidden: int
    r: Value
    """The recurrence weights, [hidden, gates * hidden]."""
    acts: list[Activation]
    clip: float | None
    peepholes: list[Value] = field(default_factory=list)
    """LSTM: P's i, o, f vectors broadcast to [batch, hidden] (empty without P)."""
    reset_bias: Value | None = None
    """GRU under linear_before_reset: Rbh broadcast to [batch, hidden]."""
    options: dict[str, int] = field(default_factory=dict)
    recur: Callable[[Value], Value] | None = None
    """h @ R computed otherwise (DynamicQuantizeLSTM: h quantized, 8-bit R); None: a matmul."""

    def gate(self, v: Value, k: int, count: int = 1) -> Value:
        """Gates k .. k + count - 1 of a [batch, gates * hidden] value."""
        return self.n.b.slice(v, [0, k * self.hidden], [self.batch, count * self.hidden])

    def matmul(self, h: Value, w: Value) -> Value:
        if self.recur is not None and w is self.r:
            return self.recur(h)
        return self.n.b.op(glow.MatMulOp, [h, w], self.n.b.tensor([self.batch, w.shape[1]], h.elem))

    def act(self, k: int, v: Value) -> Value:
        """Activation k of this direction, on its clipped input."""
        if self.clip is not None:
            v = act.clip_to(self.n, v, -self.clip, self.clip)
        return self.acts[k](v)

    def add(self, *values: Value) -> Value:
        out = values[0]
        for v in values[1:]:
            out = _ew(self.n, glow.AddOp, out, v)
        return out

    def mul(self, a: Value, b: Value) -> Value:
        return _ew(self.n, glow.MulOp, a, b)

    def sub(self, a: Value, b: Value) -> Value:
        return _ew(self.n, glow.SubOp, a, b)

    def one(self, like: Value) -> Value:
        return self.n.b.scalar_like(like, 1.0)


State = tuple[Value, ...]
"""A cell's state, the hidden state first (LSTM: then the cell state)."""


# ---------------------------------------------------------------------- cells


def _rnn_step(d: Direction, x: Value, state: State) -> State:
    """Ht = f(Xt*W^T + Ht-1*R^T + Wb + Rb)."""
    (h,) = state
    return (d.act(0, d.add(x, d.matmul(h, d.r))),)


def _gru_step(d: Direction, x: Value, state: State) -> State:
    """zt, rt = f(...); ht = g(Xt*Wh^T + (rt (.) Ht-1)*Rh^T + Rbh + Wbh), or with
    linear_before_reset g(Xt*Wh^T + rt (.) (Ht-1*Rh^T + Rbh) + Wbh); Ht = (1 - zt) (.) ht
    + zt (.) Ht-1, computed as ht + zt (.) (Ht-1 - ht)."""
    (h,) = state
    n, size = d.n, d.hidden
    r_zr = n.b.slice(d.r, [0, 0], [size, 2 * size])
    r_h = n.b.slice(d.r, [0, 2 * size], [size, size])
    zr = d.act(0, d.add(d.gate(x, 0, 2), d.matmul(h, r_zr)))  # z and r: one activation
    z, r = d.gate(zr, 0), d.gate(zr, 1)
    if d.options["linear_before_reset"]:
        assert d.reset_bias is not None  # set with linear_before_reset (convert)
        recurrent = d.mul(r, d.add(d.matmul(h, r_h), d.reset_bias))
    else:
        recurrent = d.matmul(d.mul(r, h), r_h)
    candidate = d.act(1, d.add(d.gate(x, 2), recurrent))
    return (d.add(candidate, d.mul(z, d.sub(h, candidate))),)


def _lstm_step(d: Direction, x: Value, state: State) -> State:
    """it, ft = f(... + P (.) Ct-1), ct = g(...), Ct = ft (.) Ct-1 + it (.) ct,
    ot = f(... + Po (.) Ct), Ht = ot (.) h(Ct); gates in ONNX's order i, o, f, c; with
    input_forget, ft = 1 - it."""
    h, c = state
    gates = d.add(x, d.matmul(h, d.r))
    cell = d.act(1, d.gate(gates, 3))
    if not d.peepholes and not d.options["input_forget"]:
        # i, o and f are side by side and take the same function: one activation for all
        iof = d.act(0, d.gate(gates, 0, 3))
        i, o, f = (d.gate(iof, k) for k in range(3))
        c_new = d.add(d.mul(f, c), d.mul(i, cell))
        return d.mul(o, d.acts[2](c_new)), c_new
    i, o, f = (d.gate(gates, k) for k in range(3))
    p_i, p_o, p_f = d.peepholes or (None, None, None)
    if p_i is not None:
        i = d.add(i, d.mul(p_i, c))
    i = d.act(0, i)
    if d.options["input_forget"]:
        f = d.sub(d.one(i), i)
    else:
        if p_f is not None:
            f = d.add(f, d.mul(p_f, c))
        f = d.act(0, f)
    c_new = d.add(d.mul(f, c), d.mul(i, cell))
    if p_o is not None:
        o = d.add(o, d.mul(p_o, c_new))
    o = d.act(0, o)
    return d.mul(o, d.acts[2](c_new)), c_new


@dataclass(frozen=True)
class Cell:
    """One recurrent op: its gate count, default activations, states and step."""

    gates: int
    activations: tuple[str, ...]
    states: int
    step: Callable[[Direction, Value, State], State]
    input_bias: Callable[[Node, Value, Value, dict[str, int]], Value]
    """The bias added by the input projection, from Wb and Rb: both, except GRU's Rbh under
    linear_before_reset (it is multiplied by the reset gate)."""


def _both(n: Node, wb: Value, rb: Value, options: dict[str, int]) -> Value:
    return _ew(n, glow.AddOp, wb, rb)


def _gru_input_bias(n: Node, wb: Value, rb: Value, options: dict[str, int]) -> Value:
    if not options["linear_before_reset"]:
        return _both(n, wb, rb, options)
    size = rb.shape[0] // 3
    kept = n.b.concat([n.b.slice(rb, [0], [2 * size]), n.b.scalar_like(rb, 0.0, [size])], 0)
    return _ew(n, glow.AddOp, wb, kept)


RNN = Cell(1, ("Tanh",), 1, _rnn_step, _both)
GRU = Cell(3, ("Sigmoid", "Tanh"), 1, _gru_step, _gru_input_bias)
LSTM = Cell(4, ("Sigmoid", "Tanh", "Tanh"), 2, _lstm_step, _both)


# ---------------------------------------------------------------------- sequence_lens


class _Lengths:
    """Which batch entries each step is valid for, from `sequence_lens`: known at import
    (a constant mask per step, or none when every entry is valid) or at run time (one
    comparison per step)."""

    def __init__(self, n: Node, lens: Value | None, steps: int, batch: int, hidden: int):
        self.n, self.shape = n, (batch, hidden)
        self.known: np.ndarray | None = None
        self.runtime: Value | None = None
        if lens is None:
            return
        if lens.shape != (batch,):
            n.fail(f"sequence_lens has shape {fmt_shape(lens.shape)}, expected {batch} "
                   f"(the batch size)")
        if lens.is_const:
            known = lens.known.astype(np.int64)
            if known.size and (known.min() < 0 or known.max() > steps):
                n.fail(f"sequence_lens holds {known.tolist()}, outside 0..{steps} (the "
                       f"sequence length)")
            if (known < steps).any():
                self.known = known
        else:
            if lens.elem == i1 or is_float(lens.elem):
                n.fail(f"sequence_lens must hold integers, got {lens.elem}")
            self.runtime = n.b.broadcast(n.b.reshape(lens, [batch, 1]), self.shape)

    def _mask(self, valid: np.ndarray) -> Value:
        return self.n.b.from_const(np.broadcast_to(valid[:, None], self.shape))

    def valid(self, t: int) -> Value | bool:
        """True when every entry is valid at step t, False when none is, else a mask."""
        if self.runtime is not None:
            return self._compare(t)
        if self.known is None:
            return True
        valid = t < self.known
        return bool(valid.all()) or (self._mask(valid) if valid.any() else False)

    def nonempty(self) -> Value | Literal[True]:
        """The entries of nonzero length, whose final state is kept (True: all)."""
        if self.runtime is not None:
            return self._compare(0)
        if self.known is None or self.known.all():
            return True
        return self._mask(self.known > 0)

    def _compare(self, t: int) -> Value:
        assert self.runtime is not None
        step = self.n.b.scalar_like(self.runtime, t)
        return self.n.b.elementwise(glow.CmpLtOp, [step, self.runtime], result_elem=i1)


def _keep(n: Node, valid: Value | Literal[True], new: Value, old: Value) -> Value:
    return new if valid is True else n.b.select(valid, new, old)


# ---------------------------------------------------------------------- the skeleton


def _expect(n: Node, what: str, v: Value, shape: tuple[int, ...], meaning: str) -> None:
    if v.shape != shape:
        n.fail(f"{what} has shape {fmt_shape(v.shape)}, expected {fmt_shape(shape)} ({meaning})")


class Products(Protocol):
    """Where a cell's two products come from, when not from float W and R (ms_quant.py)."""

    def shapes(self) -> tuple[tuple[int, ...], tuple[int, ...]]: ...
    def product(self, which: int, x: Value, d: int) -> Value: ...


def _unroll(n: Node, cell: Cell, products: Products | None = None) -> list[Value | None]:
    x = n.input(0)
    if not is_float(x.elem):
        n.unsupported(f"{x.elem} elements (recurrent ops take floating-point ones)")
    if products is None:
        w, r = n.input(1), n.input(2)
        for name, v in (("W", w), ("R", r)):
            if v.elem != x.elem:
                n.fail(f"{name} is {v.elem}, X is {x.elem}")
    else:  # only their shapes are read below
        w_shape, r_shape = products.shapes()
        w, r = (n.b.from_const(np.zeros(s, np.float32)) for s in (w_shape, r_shape))
    direction = n.str("direction", "forward")
    if direction not in DIRECTIONS:
        n.fail(f"direction '{direction}' is not one of {', '.join(map(repr, DIRECTIONS))}")
    dirs = 2 if direction == "bidirectional" else 1
    layout = n.int("layout", 0)
    if layout not in (0, 1):
        n.fail(f"layout {layout} is not 0 or 1")
    if x.rank != 3:
        n.fail(f"X has shape {fmt_shape(x.shape)}; it must have rank 3")
    if layout:
        x = n.b.transpose(x, [1, 0, 2])
    steps, batch, inputs = x.shape
    if steps == 0 or batch == 0:
        n.unsupported(f"an empty sequence or batch (X is {fmt_shape(x.shape)})")
    if r.rank != 3:
        n.fail(f"R has shape {fmt_shape(r.shape)}; it must have rank 3")
    hidden = n.int("hidden_size", r.shape[2])
    if hidden <= 0:
        n.fail(f"hidden_size {hidden} must be positive")
    gh = cell.gates * hidden
    why = f"num_directions {dirs}, {cell.gates} gate(s) x hidden_size {hidden}"
    _expect(n, "W", w, (dirs, gh, inputs), f"{why}, input_size {inputs}")
    _expect(n, "R", r, (dirs, gh, hidden), f"{why}, hidden_size {hidden}")
    bias = n.optional(3)
    if bias is not None:
        _expect(n, "B", bias, (dirs, 2 * gh), f"num_directions {dirs}, 2 x {cell.gates} gate(s) "
                f"x hidden_size {hidden}")
    else:
        bias = n.b.scalar_like(x, 0.0, [dirs, 2 * gh])
    lengths = _Lengths(n, n.optional(4), steps, batch, hidden)
    initial = [_initial_state(n, n.optional(k), dirs, batch, hidden, layout, name)
               for k, name in ((5, "initial_h"), (6, "initial_c"))[:cell.states]]
    peepholes = n.optional(7) if cell.states == 2 else None
    if peepholes is not None:
        _expect(
            n,
            "P",
            peepholes,
            (dirs, 3 * hidden),
            f"num_directions {dirs}, 3 x hidden_size {hidden}",
        )
    clip = n.attr("clip", None)
    if clip is not None and not clip > 0:
        n.fail(f"clip {clip} must be positive")
    acts = _activations(n, cell.activations, dirs)
    options = {"input_forget": n.int("input_forget", 0),
               "linear_before_reset": n.int("linear_before_reset", 0)}

    sequence = n.b.reshape(x, [steps * batch, inputs])
    outputs, finals = [], []
    for d in range(dirs):
        wd = n.b.transpose(
            n.b.reshape(n.b.slice(w, [d, 0, 0], [1, gh, inputs]), [gh, inputs]), [1, 0]
        )
        rd = n.b.transpose(
            n.b.reshape(n.b.slice(r, [d, 0, 0], [1, gh, hidden]), [gh, hidden]), [1, 0]
        )
        wb = n.b.reshape(n.b.slice(bias, [d, 0], [1, gh]), [gh])
        rb = n.b.reshape(n.b.slice(bias, [d, gh], [1, gh]), [gh])
        dn = Direction(n, batch, hidden, rd, acts[d], None if clip is None else float(clip),
                       options=options)
        if products is not None:
            dn.recur = lambda h, d=d: products.product(1, h, d)
        if peepholes is not None:
            dn.peepholes = [
                n.b.broadcast(
                    n.b.reshape(n.b.slice(peepholes, [d, k * hidden], [1, hidden]), [hidden]),
                    [batch, hidden],
                )
                for k in range(3)
            ]
        if cell.gates == 3 and options["linear_before_reset"]:
            dn.reset_bias = n.b.broadcast(n.b.slice(rb, [2 * hidden], [hidden]), [batch, hidden])
        if products is None:
            projected = n.b.op(glow.FullyConnectedOp,
                               [sequence, wd, cell.input_bias(n, wb, rb, options)],
                               n.b.tensor([steps * batch, gh], x.elem))
        else:
            projected = n.b.elementwise(glow.AddOp, [products.product(0, sequence, d),
                                                     cell.input_bias(n, wb, rb, options)])
        ys, state = _run(dn, cell, projected, [s[d] for s in initial], lengths,
                         reverse=direction == "reverse" or d == 1)
        outputs.append(ys)
        keep = lengths.nonempty()
        finals.append([_keep(n, keep, s, n.b.scalar_like(s, 0.0)) for s in state])

    results: list[Value | None] = [None] * (1 + cell.states)
    if n.output_used(0):
        results[0] = _stack_sequence(n, outputs, layout)
    for k in range(cell.states):
        if n.output_used(1 + k):
            results[1 + k] = _stack_directions(n, [f[k] for f in finals], layout)
    return results


def _initial_state(n: Node, v: Value | None, dirs: int, batch: int, hidden: int, layout: int,
                   name: str) -> list[Value]:
    """Each direction's initial state, [batch, hidden] (zeros when not given)."""
    if v is None:
        zero = n.b.scalar_like(n.input(0), 0.0, [batch, hidden])
        return [zero] * dirs
    expected = (batch, dirs, hidden) if layout else (dirs, batch, hidden)
    _expect(
        n,
        name,
        v,
        expected,
        f"layout {layout}: "
        + (
            "batch, num_directions, hidden_size" if layout else "num_directions, batch, hidden_size"
        ),
    )
    if layout:
        v = n.b.transpose(v, [1, 0, 2])
    return [n.b.reshape(n.b.slice(v, [d, 0, 0], [1, batch, hidden]), [batch, hidden])
            for d in range(dirs)]


def _run(d: Direction, cell: Cell, projected: Value, state: list[Value], lengths: _Lengths,
         reverse: bool) -> tuple[list[Value], State]:
    """The steps of one direction: each step's output (zeros where invalid) and the final
    state."""
    n, steps = d.n, projected.shape[0] // d.batch
    width = projected.shape[1]
    zeros = n.b.scalar_like(projected, 0.0, [d.batch, d.hidden])
    ys: list[Value] = [zeros] * steps
    current: State = tuple(state)
    for t in (reversed(range(steps)) if reverse else range(steps)):
        valid = lengths.valid(t)
        if valid is False:
            continue
        x = n.b.slice(projected, [t * d.batch, 0], [d.batch, width])
        new = cell.step(d, x, current)
        ys[t] = _keep(n, valid, new[0], zeros)
        current = tuple(_keep(n, valid, a, b) for a, b in zip(new, current))
    return ys, current


def _stack_sequence(n: Node, outputs: list[list[Value]], layout: int) -> Value:
    """Y from each direction's step outputs: [steps, dirs, batch, hidden], or with layout 1
    [batch, steps, dirs, hidden]."""
    dirs, steps = len(outputs), len(outputs[0])
    batch, hidden = outputs[0][0].shape
    if layout:
        pieces = [n.b.reshape(outputs[d][t], [batch, 1, hidden])
                  for t in range(steps) for d in range(dirs)]
        return n.b.reshape(n.b.concat(pieces, 1), [batch, steps, dirs, hidden])
    pieces = [
        n.b.reshape(outputs[d][t], [1, batch, hidden]) for t in range(steps) for d in range(dirs)
    ]
    return n.b.reshape(n.b.concat(pieces, 0), [steps, dirs, batch, hidden])


def _stack_directions(n: Node, states: list[Value], layout: int) -> Value:
    """Y_h or Y_c: [dirs, batch, hidden], or with layout 1 [batch, dirs, hidden]."""
    batch, hidden = states[0].shape
    if layout:
        return n.b.concat([n.b.reshape(s, [batch, 1, hidden]) for s in states], 1)
    return n.b.concat([n.b.reshape(s, [1, batch, hidden]) for s in states], 0)


def rnn(n: Node) -> list[Value | None]:
    return _unroll(n, RNN)


def gru(n: Node) -> list[Value | None]:
    return _unroll(n, GRU)


def lstm(n: Node) -> list[Value | None]:
    return _unroll(n, LSTM)


def quantized_lstm(n: Node, products: Products) -> list[Value | None]:
    """LSTM with its products from `products` (DynamicQuantizeLSTM)."""
    return _unroll(n, LSTM, products)
