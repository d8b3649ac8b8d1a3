"""An unbound input dimension told in a tool's flags.

The importer's `UnboundDimensionError` says how to bind the dims in the Python API
(`input_shapes=`, `specialize='first-call'`); a tool user needs `--input-shape`, with the
shapes of the inputs they gave when those have the unbound inputs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from glow_mlir.ir.errors import UserError


@contextmanager
def unbound_dims_in_flags(inputs: Sequence[str] = (), specialize: str = "") -> Iterator[None]:
    """Rewrites the fix of an `UnboundDimensionError` raised inside: `--input-shape`, from
    the first of `inputs` (.npz files) when it has the unbound inputs, and `specialize`
    (the tool's flag for compiling at the call, if it has one)."""
    try:
        yield
    except UserError as err:
        from glow_mlir.frontends.onnx.errors import UnboundDimensionError

        if isinstance(err, UnboundDimensionError):
            err.args = (err.with_fix(binding_fix(err, inputs, specialize)),)
        raise


def binding_fix(err, inputs: Sequence[str] = (), specialize: str = "") -> str:
    """How to bind `err`'s unbound dims with --input-shape."""
    from glow_mlir.dialects.glow_ops.types import fmt_shape
    from glow_mlir.runtime.profiling import load_inputs

    also = f", or {specialize}" if specialize else ""
    if inputs:
        try:
            (batch,) = load_inputs(list(inputs)[:1])
        except UserError:  # unreadable: the tool says so where it reads them
            batch = {}
        shapes = {n: batch[n].shape for n in err.inputs if n in batch}
        if shapes:
            flags = " ".join(f"--input-shape {n}={fmt_shape(s)}" for n, s in shapes.items())
            return f"Bind them with the shapes in '{inputs[0]}': {flags}{also}"
    if err.example is None:
        return f"Bind them with --input-shape NAME=1x2x3{also}"
    name, shape = err.example
    return (f"Bind them with --input-shape, e.g. --input-shape {name}="
            f"{fmt_shape(shape) if shape is not None else '1x...'}{also}")
