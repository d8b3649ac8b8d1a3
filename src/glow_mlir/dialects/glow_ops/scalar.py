"""Scalar bodies: what one result element of an element-wise op is, as an expression of
the operand elements at the same index (and the op's float attributes).

    from glow_mlir.dialects.glow_ops.scalar import X, exp
    X / (1 + abs(X))            # glow.softsign
    1 / (1 + exp(-X))           # a sigmoid

An op declares its body with the `ScalarBody` trait (`traits.py`); the reference evaluator
(`targets/interpreter/kernels/scalar_bodies.py`) runs it with numpy in the operand dtype,
the CPU loop generator (`conversion/glow_ir_to_loops/kernels_elementwise.py`) emits it as
`arith`/`math` ops for one element, so an op with a body needs no kernel of its own on
either. Bodies are float math: numbers are float constants, operands floating-point.

The tree is plain data (no numpy, no xDSL), so the dialect does not depend on the
backends that interpret it.
"""

from __future__ import annotations

from dataclasses import dataclass

FUNCTIONS = {
    # name: arity
    "add": 2, "sub": 2, "mul": 2, "div": 2, "max": 2, "min": 2,
    "neg": 1, "abs": 1, "exp": 1, "log": 1, "sqrt": 1, "tanh": 1, "erf": 1,
}
"""What a body may apply; every interpreter of bodies implements each of them."""


class Expr:
    """A scalar expression; Python's arithmetic operators build bigger ones."""

    def __add__(self, other: Expr | float) -> Expr:
        return Call("add", (self, lift(other)))

    def __radd__(self, other: Expr | float) -> Expr:
        return Call("add", (lift(other), self))

    def __sub__(self, other: Expr | float) -> Expr:
        return Call("sub", (self, lift(other)))

    def __rsub__(self, other: Expr | float) -> Expr:
        return Call("sub", (lift(other), self))

    def __mul__(self, other: Expr | float) -> Expr:
        return Call("mul", (self, lift(other)))

    def __rmul__(self, other: Expr | float) -> Expr:
        return Call("mul", (lift(other), self))

    def __truediv__(self, other: Expr | float) -> Expr:
        return Call("div", (self, lift(other)))

    def __rtruediv__(self, other: Expr | float) -> Expr:
        return Call("div", (lift(other), self))

    def __neg__(self) -> Expr:
        return Call("neg", (self,))

    def __abs__(self) -> Expr:
        return Call("abs", (self,))


@dataclass(frozen=True)
class Arg(Expr):
    """Operand `index`'s element."""

    index: int


@dataclass(frozen=True)
class Const(Expr):
    """A float constant (rounded to the element type where it is used)."""

    value: float


@dataclass(frozen=True)
class Attr(Expr):
    """The op's float attribute `name` (a required one)."""

    name: str


@dataclass(frozen=True)
class Call(Expr):
    """`fn` (one of `FUNCTIONS`) applied to `args`."""

    fn: str
    args: tuple[Expr, ...]

    def __post_init__(self) -> None:
        if FUNCTIONS.get(self.fn) != len(self.args):
            raise ValueError(f"scalar function {self.fn} of {len(self.args)} arguments")


def lift(value: Expr | float) -> Expr:
    return value if isinstance(value, Expr) else Const(float(value))


def _fn(name: str):
    def apply(*args: Expr | float) -> Expr:
        return Call(name, tuple(lift(a) for a in args))

    apply.__name__ = name
    return apply


exp = _fn("exp")
log = _fn("log")
sqrt = _fn("sqrt")
tanh = _fn("tanh")
erf = _fn("erf")
maximum = _fn("max")
minimum = _fn("min")

X = Arg(0)
"""The first operand's element."""
Y = Arg(1)
"""The second operand's element."""


def functions_of(expr: Expr) -> set[str]:
    """The scalar functions `expr` applies."""
    if isinstance(expr, Call):
        return {expr.fn}.union(*(functions_of(a) for a in expr.args))
    return set()
