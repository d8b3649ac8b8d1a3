"""What a converter sees of one Caffe2 OperatorDef: its inputs as the ONNX importer's
`Value`s, its arguments by name with Caffe2's defaults, which outputs anyone reads, and
`onnx(...)`, which runs one of the ONNX converters on these values where Caffe2's op means
what an ONNX op means once its arguments are renamed (the builder and its checks shared).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import onnx

from glow_mlir.frontends.onnx.builder import GraphBuilder, Value
from glow_mlir.frontends.onnx.node import Node

_REQUIRED = object()


class C2Op:
    """One OperatorDef bound to the builder and the blobs computed so far."""

    def __init__(self, proto: Any, label: str, builder: GraphBuilder,
                 values: dict[str, Value], used: set[str]):
        self.proto = proto
        self.type: str = proto.type
        self.label = label
        self.b = builder
        self._values = values
        self._used = used
        self._args = {a.name: a for a in proto.arg}

    # ------------------------------------------------------------------ diagnostics
    def fail(self, message: str) -> NoReturn:
        self.b.fail(message)

    def unsupported(self, why: str) -> NoReturn:
        self.b.unsupported(why)

    # ------------------------------------------------------------------ inputs, outputs
    @property
    def num_inputs(self) -> int:
        return len(self.proto.input)

    @property
    def num_outputs(self) -> int:
        return len(self.proto.output)

    def input(self, i: int) -> Value:
        if i >= len(self.proto.input):
            self.fail(f"input #{i} is missing ({len(self.proto.input)} given)")
        return self._values[self.proto.input[i]]

    def optional(self, i: int) -> Value | None:
        return self.input(i) if i < len(self.proto.input) else None

    def inputs(self) -> list[Value]:
        return [self._values[name] for name in self.proto.input]

    def output_used(self, i: int) -> bool:
        """Does a later op or the net's external outputs read output `i`?"""
        return i < len(self.proto.output) and self.proto.output[i] in self._used

    def weights(self, i: int, what: str) -> Value:
        """Input `i`, which must be known at import (a filter, a bias): Glow's loader reads
        these as constants too."""
        v = self.input(i)
        if not v.is_const:
            self.unsupported(f"the {what} (input #{i} '{self.proto.input[i]}') is computed "
                             f"at run time; it must be filled by the init net")
        return v

    # ------------------------------------------------------------------ arguments
    def has(self, name: str) -> bool:
        return name in self._args

    def argument(self, name: str) -> Any:
        """The Argument message itself (None when absent), for its other fields."""
        return self._args.get(name)

    def _arg(self, name: str, field: str, default: Any) -> Any:
        a = self._args.get(name)
        if a is None:
            if default is _REQUIRED:
                self.fail(f"requires argument '{name}'")
            return default
        if field in ("f", "i", "s") and not a.HasField(field):
            kinds = [k for k in ("f", "i", "s") if a.HasField(k)]
            if field == "f" and kinds == ["i"]:
                return float(a.i)
            self.fail(f"argument '{name}' must be {_KIND[field]}")
        return getattr(a, field)

    def int(self, name: str, default: Any = _REQUIRED) -> int:
        return int(self._arg(name, "i", default))

    def float(self, name: str, default: Any = _REQUIRED) -> float:
        return float(self._arg(name, "f", default))

    def str(self, name: builtins.str, default: Any = _REQUIRED) -> builtins.str:
        value = self._arg(name, "s", default)
        return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else value

    def bytes(self, name: builtins.str) -> builtins.bytes:
        return builtins.bytes(self._arg(name, "s", _REQUIRED))

    def ints(self, name: builtins.str, default: Any = _REQUIRED) -> list[builtins.int]:
        if name not in self._args:
            if default is _REQUIRED:
                self.fail(f"requires argument '{name}'")
            return list(default)
        return [builtins.int(v) for v in self._args[name].ints]

    def floats(self, name: builtins.str, default: Any = _REQUIRED) -> list[builtins.float]:
        if name not in self._args:
            if default is _REQUIRED:
                self.fail(f"requires argument '{name}'")
            return list(default)
        return [builtins.float(v) for v in self._args[name].floats]

    def order(self) -> builtins.str:
        """The `order` argument, NCHW (the default) or NHWC."""
        order = self.str("order", "NCHW")
        if order not in ("NCHW", "NHWC"):
            self.unsupported(f"order '{order}' (supported: 'NCHW', 'NHWC')")
        return order

    def normalize_axis(self, axis: builtins.int, rank: builtins.int,
                       what: builtins.str = "axis") -> builtins.int:
        if not -rank <= axis < max(rank, 1):
            self.fail(f"{what} {axis} is out of range for rank {rank}")
        return axis + rank if axis < 0 else axis

    # ------------------------------------------------------------------ ONNX converters
    def onnx(self, convert: Callable[[Node], Any], op_type: builtins.str,
             inputs: Sequence[Value | None], opset: builtins.int = 13,
             outputs: builtins.int = 1,
             **attrs: Any) -> Any:
        """`convert` (an ONNX converter) on an ONNX node `op_type` with these inputs and
        attributes; errors name this Caffe2 op (the builder's context)."""
        names = [f"#{i}" if v is not None else "" for i, v in enumerate(inputs)]
        values = {n: v for n, v in zip(names, inputs) if v is not None}
        proto = onnx.helper.make_node(op_type, names, [f"out{i}" for i in range(outputs)],
                                      **{k: v for k, v in attrs.items() if v is not None})
        return convert(Node(proto, self.label, opset, self.b, values, set()))


_KIND = {"f": "a float (f)", "i": "an int (i)", "s": "a string (s)"}
