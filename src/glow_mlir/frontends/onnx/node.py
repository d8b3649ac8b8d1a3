"""What a converter sees of one ONNX node: its inputs as `Value`s, its attributes with
ONNX's defaults, which outputs anyone uses, and the opset it was written against."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn, overload

import numpy as np
from onnx import AttributeProto, NodeProto, helper, numpy_helper

from glow_mlir.frontends.onnx import dtypes
from glow_mlir.frontends.onnx.builder import GraphBuilder, Value

_REQUIRED = object()


class Node:
    """One ONNX node bound to the builder and the values computed so far."""

    def __init__(self, proto: NodeProto, label: str, opset: int, builder: GraphBuilder,
                 values: Mapping[str, Value | None], used: set[str],
                 inline: Callable[..., list[Value | None]] | None = None):
        self.proto = proto
        self.inline = inline
        """Translates a subgraph attribute in place (If's taken branch), or into a block
        given as second argument (a `glow.if` branch); see the importer."""
        self.op_type = proto.op_type
        self.label = label
        self.opset = opset
        self.b = builder
        self._values = values
        self._used = used
        self._attrs = {a.name: a for a in proto.attribute}

    # ------------------------------------------------------------------ diagnostics
    def fail(self, message: str) -> NoReturn:
        self.b.fail(message)

    def unsupported(self, why: str) -> NoReturn:
        self.b.unsupported(why)

    # ------------------------------------------------------------------ inputs
    @property
    def num_inputs(self) -> int:
        return len(self.proto.input)

    def has(self, i: int) -> bool:
        """Is optional input `i` given (present and not the empty name)?"""
        return i < len(self.proto.input) and self.proto.input[i] != ""

    def input(self, i: int) -> Value:
        if not self.has(i):
            self.fail(f"input #{i} is missing")
        return self._known(self.proto.input[i])

    def optional(self, i: int) -> Value | None:
        return self._known(self.proto.input[i]) if self.has(i) else None

    def inputs(self) -> list[Value]:
        """Every given input, in order (for variadic ops)."""
        return [self._known(name) for name in self.proto.input if name]

    def outer(self, name: builtins.str) -> Value | None:
        """The value named `name` so far, if any (what a subgraph of the node would see)."""
        return self._values.get(name)

    def _known(self, name: builtins.str) -> Value:
        # None marks a value nobody could compute; the importer converts a node only when
        # all its inputs are known
        value = self._values[name]
        assert value is not None, name
        return value

    def const(self, i: int) -> np.ndarray | None:
        """Input `i`'s value when known at import (None when absent or computed at run time)."""
        v = self.optional(i)
        return v.const if v is not None else None

    def require_const(self, i: int, what: str) -> np.ndarray:
        """Input `i` must be known at import: Glow's graph has static shapes and parameters."""
        v = self.input(i)
        if v.const is None:
            self.unsupported(f"{what} (input #{i} '{self.proto.input[i]}') is computed at run "
                             f"time; it must be a constant")
        return v.const

    def const_ints(self, i: int, what: str) -> list[int] | None:
        """An optional int list input (axes, pads, ...), None when absent."""
        if not self.has(i):
            return None
        return [int(x) for x in self.require_const(i, what).reshape(-1)]

    # ------------------------------------------------------------------ attributes
    def has_attr(self, name: str) -> bool:
        return name in self._attrs

    def attr(self, name: str, default: Any = _REQUIRED) -> Any:
        a = self._attrs.get(name)
        if a is None:
            if default is _REQUIRED:
                self.fail(f"requires attribute '{name}'")
            return default
        value = helper.get_attribute_value(a)
        if a.type == AttributeProto.STRING:
            return value.decode("utf-8", errors="replace")
        if a.type == AttributeProto.STRINGS:
            return [s.decode("utf-8", errors="replace") for s in value]
        return value

    def int(self, name: str, default: Any = _REQUIRED) -> int:
        return int(self.attr(name, default))

    def float(self, name: str, default: Any = _REQUIRED) -> float:
        return float(self.attr(name, default))

    def str(self, name: str, default: Any = _REQUIRED) -> str:
        return str(self.attr(name, default))

    # `int`, `float`, `str` below are the methods above: annotations name the builtins
    @overload
    def ints(self, name: builtins.str) -> list[builtins.int]: ...
    @overload
    def ints(self, name: builtins.str, default: Sequence[builtins.int]) -> list[builtins.int]: ...
    @overload
    def ints(self, name: builtins.str, default: None) -> list[builtins.int] | None: ...
    def ints(self, name: builtins.str, default: Any = _REQUIRED) -> list[builtins.int] | None:
        value = self.attr(name, default)
        return None if value is None else [int(v) for v in value]

    @overload
    def floats(self, name: builtins.str) -> list[builtins.float]: ...
    @overload
    def floats(self, name: builtins.str,
               default: Sequence[builtins.float]) -> list[builtins.float]: ...
    @overload
    def floats(self, name: builtins.str, default: None) -> list[builtins.float] | None: ...
    def floats(self, name: builtins.str, default: Any = _REQUIRED) -> list[builtins.float] | None:
        value = self.attr(name, default)
        return None if value is None else [float(v) for v in value]

    def tensor(self, name: builtins.str) -> np.ndarray | None:
        """A tensor attribute as an array (a view of its bytes), None when absent."""
        a = self._attrs.get(name)
        if a is None:
            return None
        if not dtypes.is_supported(a.t.data_type):
            self.unsupported(f"attribute '{name}' has element type "
                             f"{dtypes.dtype_name(a.t.data_type)}, which is not supported")
        return numpy_helper.to_array(a.t)

    def choice(self, name: builtins.str, default: builtins.str,
               supported: Sequence[builtins.str]) -> builtins.str:
        """A string attribute whose other legal values the importer does not support."""
        value = self.str(name, default)
        if value not in supported:
            self.unsupported(f"{name} '{value}' is not supported "
                             f"(supported: {', '.join(map(repr, supported))})")
        return value

    # ------------------------------------------------------------------ outputs
    @property
    def num_outputs(self) -> builtins.int:
        return len(self.proto.output)

    def output_used(self, i: builtins.int) -> bool:
        """Does a later node or the graph's outputs read output `i`?"""
        return i < len(self.proto.output) and self.proto.output[i] in self._used

    def normalize_axis(self, axis: builtins.int, rank: builtins.int,
                       what: builtins.str = "axis") -> builtins.int:
        if not -rank <= axis < max(rank, 1):
            self.fail(f"{what} {axis} is out of range for rank {rank}")
        return axis + rank if axis < 0 else axis
