"""`glow_mlir.profile(model, batches, backend=...)`: run an instrumented network on
batches of inputs and record every float edge of the lowered graph (Glow's profiling
mode, docs/Quantization.md in Glow), for `compile(..., profile=P)` to quantize with.

The graph is imported, its pre-lowering hash taken (`Profile.graph_hash`), then lowered
for the backend (`glow-graph-pipeline{phase=lower}`: the graph `quantize-graph` will see).
How the edges are recorded:

- `interpreter`: the reference evaluator runs the lowered graph op by op and hands every
  result to the recorder (`evaluate_function(..., observe=...)`), no instrumentation in
  the IR;
- `cpu`: every edge becomes an extra output of the graph, which is compiled as usual (the
  rest of the graph pipeline, native code) and run; the recorder reads the extra outputs.
  The extra outputs keep every activation alive (no buffer sharing) and stop
  fuse-activations from folding an activation into its producer (the producer's result
  has another user), so each edge is recorded as the lowered graph computes it. No new
  instruction or kernel is needed, and the run stays native speed; the cost is the
  memory of all activations at once.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from glow_mlir.analysis.quant_profile import (
    DEFAULT_BINS,
    Profile,
    ProfileError,
    Recorder,
    edge_names,
    graph_function,
    graph_hash,
)
from glow_mlir.analysis.quant_profile import input_shapes as input_shapes_of
from glow_mlir.backends import get_backend
from glow_mlir.ir.errors import UserError

if TYPE_CHECKING:
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ModuleOp

PROFILING_BACKENDS = ("interpreter", "cpu")


def profile_model(model: object, batches: Iterable[Mapping[str, object]],
                  backend: str = "cpu",
                  input_shapes: Mapping[str, object] | None = None,
                  bins: int = DEFAULT_BINS,
                  batch_names: Sequence[str] | None = None) -> Profile:
    """The profile of `model` over `batches` (each a dict of input name -> array, as
    `CompiledModel.run` takes), recorded on `backend` (module docstring). A refused
    batch is named by its number, or by `batch_names[i]` (the tools' input files)."""
    from glow_mlir.runtime.compiled_model import (
        CompiledModel,
        _signature,
        _value_checks,
        optimize_graph,
    )

    get_backend(backend)  # an unknown name: the registry's error
    if backend not in PROFILING_BACKENDS:
        raise UserError(f"profiling runs on {' or '.join(map(repr, PROFILING_BACKENDS))}, "
                        f"not '{backend}'")
    if isinstance(batches, Mapping):
        raise ProfileError("batches must be an iterable of input dicts (a list of them), "
                           "got one dict: pass [inputs]")
    if bins < 1:
        raise ProfileError(f"bins must be at least 1, got {bins}")
    batches = iter(batches)
    first = next(batches, None)
    module, is_graph = _import_binding(model, input_shapes, first)
    if not is_graph:
        raise ProfileError("profiling needs a glow graph (an ONNX model or a glow graph in "
                           "IR), not a glow_ir program")
    digest = graph_hash(module)
    shapes = input_shapes_of(graph_function(module))
    shapeless = graph_hash(module, shapes=False)
    optimize_graph(module, backend, phase="lower")
    fn = graph_function(module)
    names = edge_names(fn)
    recorder = Recorder(names, bins)
    ins, in_types, outs, out_types = _signature(module)
    checker = CompiledModel.restored(
        backend, None, [(n, tuple(t.get_shape()), _dtype(t)) for n, t in zip(ins, in_types)],  # type: ignore[attr-defined,arg-type]
        [(n, tuple(t.get_shape())) for n, t in zip(outs, out_types)],  # type: ignore[attr-defined]
        # the input values a compiled model refuses (labels, indices out of range) are
        # refused here too: a profile taken on them would record clamped garbage
        _value_checks(module, ins))
    if backend == "interpreter":
        run = _evaluator_runner(fn, recorder)
    else:
        run = _native_runner(module, fn, names, recorder, backend)
    count = 0
    for i, batch in enumerate(itertools.chain([first] if first is not None else [], batches)):
        try:
            arrays = checker.check_inputs(batch)
        except UserError as err:
            name = batch_names[i] if batch_names is not None and i < len(batch_names) \
                else f"batch #{i}"
            raise type(err)(f"{name}: {err}") from None
        recorder.record_inputs(fn, arrays)
        run(arrays)
        count += 1
    if count == 0:
        raise ProfileError("no batches to profile: give at least one dict of inputs")
    return Profile(digest, recorder.edges, count, backend, bins, shapes, shapeless)


def _import_binding(model: object, input_shapes: Mapping[str, object] | None,
                    first: object) -> tuple[ModuleOp, bool]:
    """The imported model; a dynamic one without `input_shapes` gets the shapes of the
    first batch (the batches are what it will run on; later ones must match them)."""
    from glow_mlir.frontends.onnx.errors import UnboundDimensionError
    from glow_mlir.runtime.compiled_model import _import

    try:
        return _import(model, input_shapes)
    except UnboundDimensionError:
        if input_shapes is not None or not isinstance(first, Mapping):
            raise
        shapes = {str(k): tuple(np.shape(v)) for k, v in first.items()}
        try:
            return _import(model, shapes)
        except UserError as err:
            raise type(err)(f"binding the model's dynamic dimensions to batch #0's shapes: "
                            f"{err}") from None


def _dtype(t: object) -> np.dtype:
    from glow_mlir.ir.element_types import numpy_dtype

    return numpy_dtype(t.get_element_type())  # type: ignore[attr-defined]


def _evaluator_runner(fn: func.FuncOp, recorder: Recorder):
    from glow_mlir.semantics.graph_evaluator import evaluate_function

    def run(arrays: list[np.ndarray]) -> None:
        evaluate_function(fn, arrays, recorder.observe)

    return run


def _native_runner(module: ModuleOp, fn: func.FuncOp, names, recorder: Recorder, backend: str):
    from xdsl.ir import OpResult

    from glow_mlir.runtime.compiled_model import CompiledModel, optimize_graph

    edges = [v for v in names if isinstance(v, OpResult)]  # inputs: `record_inputs`
    first = extend_outputs(fn, edges)
    optimize_graph(module, backend, phase="finish")
    compiled = CompiledModel(module, backend,
                             backend_options=get_backend(backend).keyed_options({}))

    def run(arrays: list[np.ndarray]) -> None:
        outputs = compiled.executor.run(arrays)
        for value, out in zip(edges, outputs[first:]):
            recorder.record(names[value], out)

    return run


def extend_outputs(fn: func.FuncOp, values: list) -> int:
    """Return `values` from `fn` after its own results (named `__profile_<i>`); the
    index of the first added output."""
    from xdsl.dialects import func as func_d
    from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, StringAttr

    from glow_mlir.dialects.glow import NAME_ATTR

    ret = fn.body.block.last_op
    assert isinstance(ret, func_d.ReturnOp)
    first = len(ret.operands)
    new_ret = func_d.ReturnOp(*ret.operands, *values)
    fn.body.block.add_op(new_ret)
    ret.detach()
    ret.erase()
    fn.function_type = FunctionType.from_lists(list(fn.function_type.inputs.data),
                                               [v.type for v in new_ret.operands])
    old = list(fn.res_attrs.data) if fn.res_attrs is not None else [
        DictionaryAttr({}) for _ in range(first)]
    fn.res_attrs = ArrayAttr([*old, *(DictionaryAttr({NAME_ATTR: StringAttr(f"__profile_{i}")})
                                      for i in range(len(values)))])
    return first


def load_inputs(paths: Iterable[str | os.PathLike]) -> list[dict[str, np.ndarray]]:
    """One batch per .npz file (name -> array), as glow-run's --inputs reads them."""
    batches = []
    for p in paths:
        try:
            with np.load(p) as data:
                batches.append({k: data[k] for k in data.files})
        except (OSError, ValueError) as err:
            raise UserError(f"cannot read inputs '{p}': {err}") from None
    return batches
