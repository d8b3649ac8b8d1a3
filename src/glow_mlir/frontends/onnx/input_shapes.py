"""Static shapes for the graph inputs: dynamic dimensions bound by the caller.

Glow's graph is statically shaped, so every dynamic dimension must get a value, like
Glow's `-onnx-define-symbol`. `input_shapes` maps an input name to its whole shape
(`{"input": (1, 3, 224, 224)}`), or a symbol name to its value (`{"batch": 1}`); a symbol
bound through one input binds it in every input that uses it.

What counts as dynamic: a `dim_param` (`batch`), a dim with no value, and `dim_value: -1`,
which some exporters write and onnxruntime reads as dynamic (`DYNAMIC`). A declared 0 is a
size, as ONNX and onnxruntime read it (a zero-size input), so an unbound 0 stays 0; but
some exporters also write 0 for "unknown", so a whole-input shape given for that input
binds it to any size (`ZERO`), as it would bind a dynamic dim. Every other declared size
must be given as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from onnx import TensorShapeProto, ValueInfoProto

from glow_mlir.frontends.onnx.errors import OnnxImportError, UnboundDimensionError

Dim = int | str | None
"""A declared dimension: a size, a symbol, or unknown (None)."""

DYNAMIC = -1
"""The one negative `dim_value` that means a dynamic dimension (others are errors,
`validation.py`)."""
ZERO = 0
"""A declared size that a given shape may replace."""


def dim_of(d: TensorShapeProto.Dimension) -> Dim:
    """One `TensorShapeProto.Dimension` as a `Dim`."""
    kind = d.WhichOneof("value")
    if kind == "dim_value":
        return None if d.dim_value == DYNAMIC else int(d.dim_value)
    return (d.dim_param or None) if kind == "dim_param" else None


def declared_dims(info: ValueInfoProto) -> list[Dim] | None:
    """The input's declared dims, or None when the model gives no shape at all."""
    tensor = info.type.tensor_type
    if not tensor.HasField("shape"):
        return None
    return [dim_of(d) for d in tensor.shape.dim]


def _fmt(dims: Sequence[Dim]) -> str:
    return "x".join("?" if d is None else str(d) for d in dims) if dims else "scalar"


def bind_input_shapes(inputs: Sequence[ValueInfoProto],
                      given: Mapping[str, Sequence[int] | int] | None,
                      readers: Mapping[str, str] | None = None) -> list[tuple[int, ...]]:
    """Every input's static shape, or an error naming each dimension left unbound (and,
    from `readers`, the node that reads the input first: an LSTM's sequence length)."""
    given = dict(given or {})
    declared = {i.name: declared_dims(i) for i in inputs}
    symbols_in_model = {d for dims in declared.values() if dims for d in dims if isinstance(d, str)}
    symbols: dict[str, int] = {}
    shapes: dict[str, tuple[int, ...]] = {}

    for key, value in given.items():
        if key in declared:
            shapes[key] = _given_shape(key, value, declared[key])
        elif key in symbols_in_model:
            if isinstance(value, (tuple, list)) and len(value) == 1:  # `--input-shape batch=4`
                value = value[0]
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise OnnxImportError(f"the value given for symbolic dimension '{key}' must be "
                                      f"a non-negative int, got {value!r}")
            symbols[key] = value
        else:
            names = ", ".join(f"'{n}'" for n in declared) or "none"
            syms = ", ".join(f"'{s}'" for s in sorted(symbols_in_model)) or "none"
            raise OnnxImportError(f"a shape is given for '{key}', which is neither a graph input "
                                  f"(inputs: {names}) nor a symbolic dimension (symbols: {syms})")

    for name, bound in shapes.items():
        for d, size in zip(declared[name] or [], bound):
            if isinstance(d, str):
                if symbols.setdefault(d, size) != size:
                    raise OnnxImportError(
                        f"symbolic dimension '{d}' is bound to both {symbols[d]} and {size} "
                        f"(input '{name}' has shape {_fmt(bound)})")

    unbound: list[str] = []
    example: str | None = None  # the first input with an unbound dim, as a binding
    example_shape: tuple[str, tuple[int, ...] | None] | None = None
    unbound_inputs: list[str] = []
    result = []
    for info in inputs:
        if info.name in shapes:
            result.append(shapes[info.name])
            continue
        dims = declared[info.name]
        if dims is None:
            unbound.append(f"input '{info.name}' has no shape in the model")
            example = example or _example_binding(info.name, None, symbols)
            example_shape = example_shape or (info.name, None)
            unbound_inputs.append(info.name)
            result.append(())
            continue
        shape = []
        for i, d in enumerate(dims):
            if isinstance(d, int):
                shape.append(d)
            elif isinstance(d, str) and d in symbols:
                shape.append(symbols[d])
            else:
                what = f"'{d}'" if d else "dynamic"
                reader = (readers or {}).get(info.name)
                unbound.append(f"input '{info.name}' dim {i} is {what} (shape {_fmt(dims)}"
                               + (f", read by {reader})" if reader else ")"))
                example = example or _example_binding(info.name, dims, symbols)
                example_shape = example_shape or (info.name, _example_shape(dims, symbols))
                if info.name not in unbound_inputs:
                    unbound_inputs.append(info.name)
                shape.append(-1)
        result.append(tuple(shape))
    if unbound:
        raise UnboundDimensionError.of(
            unbound, f"Bind them, e.g. {example}, or compile with specialize='first-call' "
            "to compile at each new input signature", tuple(unbound_inputs), example_shape)
    return result


def _example_shape(dims: list[Dim], symbols: dict[str, int]) -> tuple[int, ...]:
    """The declared dims with every unbound one 1."""
    return tuple(d if isinstance(d, int) else symbols.get(d, 1) if isinstance(d, str) else 1
                 for d in dims)


def _example_binding(name: str, dims: list[Dim] | None, symbols: dict[str, int]) -> str:
    """How to bind input `name`'s shape, for the message: its declared dims with every
    unbound one 1, in the API's and the tools' spelling."""
    if dims is None:
        return (f"input_shapes={{'{name}': (1, ...)}} (glow-run/glow-compile: "
                f"--input-shape {name}=1x...)")
    shape = list(_example_shape(dims, symbols))
    api = "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
    return (f"input_shapes={{'{name}': {api}}} (glow-run/glow-compile: "
            f"--input-shape {name}={'x'.join(map(str, shape))})")


def _given_shape(name: str, value: object, dims: list[Dim] | None) -> tuple[int, ...]:
    """`value`, given for input `name` (anything a caller passed), as a shape."""
    try:
        if not isinstance(value, Iterable):
            raise TypeError(value)
        shape = tuple(int(d) for d in value)
    except (TypeError, ValueError):  # ValueError: int("a")
        raise OnnxImportError(f"the shape given for input '{name}' must be a sequence of ints, "
                              f"got {value!r}") from None
    negative = [i for i, d in enumerate(shape) if d < 0]
    if negative:
        raise OnnxImportError(f"the shape given for input '{name}', {_fmt(shape)}, has a negative "
                              f"dim {negative[0]} ({shape[negative[0]]})")
    if dims is not None:
        if len(dims) != len(shape):
            raise OnnxImportError(
                f"the shape given for input '{name}', {_fmt(shape)}, has rank "
                f"{len(shape)}, but the model declares {_fmt(dims)} (rank {len(dims)})"
            )
        for i, (d, s) in enumerate(zip(dims, shape)):
            if isinstance(d, int) and d != s and d != ZERO:
                raise OnnxImportError(f"the shape given for input '{name}', {_fmt(shape)}, differs "
                                      f"from the model's {_fmt(dims)} in dim {i}")
    return shape
