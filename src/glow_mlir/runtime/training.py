"""`glow_mlir.train`: an ONNX model trained by SGD, one compiled step at a time.

The model is imported, `differentiate`d (transforms/graph/differentiate.py) and then
compiled like any graph: the graph pipeline, IRGen, the instruction pipeline, memory
planning and the backend. The step's trainable weights, momenta and running statistics
are its state: mutable weights that the step updates in place and that stay in the
compiled model between steps (the cpu's mutable area, the interpreter's weight buffers;
`CompiledModel.state`). A step copies the batch and labels in and the outputs and loss
out, no weight.

The importer folds what it can at import, so a weight of the graph may be an
initializer transposed or reshaped (Gemm's `transB`); each trained weight is matched to
its initializer by name and by its initial values (equal as they are, transposed or
reshaped), which gives the way back for `weights` and `export()`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from onnx import ModelProto, numpy_helper

from glow_mlir.backends.registry import DEFAULT_BACKEND
from glow_mlir.ir.errors import UserError
from glow_mlir.runtime.compiled_model import as_array


class TrainingInputError(UserError, ValueError):
    """A step's inputs or labels that do not fit the training graph."""


@dataclass(frozen=True)
class _Origin:
    """How a graph weight comes from an ONNX initializer: its name and "same",
    "transpose" or "reshape" (None: no initializer gives it; not exportable)."""

    initializer: str | None
    how: str = "same"

    def to_onnx(self, array: np.ndarray, shape: Sequence[int]) -> np.ndarray:
        if self.how == "transpose":
            return array.T
        return array.reshape(shape)


def _origin(handle: str, array: np.ndarray, inits: Mapping[str, np.ndarray]) -> _Origin:
    from glow_mlir.ir.resources import _sanitize

    named = [n for n in inits if _sanitize(n) == handle]  # else a clash's `_1`, `_2`, ...
    named += [n for n in inits if _sanitize(n) == handle.rsplit("_", 1)[0]]
    for name in named:
        init = inits[name]
        if init.shape == array.shape and np.array_equal(init, array):
            return _Origin(name)
        if init.ndim == 2 and init.T.shape == array.shape and np.array_equal(init.T, array):
            return _Origin(name, "transpose")
        if init.size == array.size and np.array_equal(init.reshape(array.shape), array):
            return _Origin(name, "reshape")
    return _Origin(None)


def _unbound_message(proto: ModelProto, batch: int | None) -> str | None:
    """The dims of the model's inputs that train cannot bind, and what to do: batch_size
    binds every input's first dim, the others must be declared in the model. None when
    every dim is bound as far as it can tell."""
    from glow_mlir.frontends.onnx.input_shapes import declared_dims

    inits = {t.name for t in proto.graph.initializer}
    unbound, first, other = [], False, False
    for info in proto.graph.input:
        if info.name in inits:
            continue
        dims = declared_dims(info)
        if dims is None:
            unbound.append(f"input '{info.name}' has no shape")
            other = True
            continue
        for i, d in enumerate(dims):
            if isinstance(d, int) or (i == 0 and batch is not None):
                continue
            unbound.append(f"input '{info.name}' dim {i} is {f'{d!r}' if d else 'dynamic'}")
            first, other = first or i == 0, other or i > 0
    if not unbound:
        return None
    fixes = []
    if first:
        fixes.append("give train batch_size=N, which binds every input's first dim")
    if other:
        fixes.append("train binds only the first dim (batch_size): declare the others in "
                     "the model (onnx.tools.update_model_dims.update_inputs_outputs_dims)")
    return f"training needs static shapes, but {'; '.join(unbound)}: {'; and '.join(fixes)}"


class Trainer:
    """One compiled SGD step of a model (`glow_mlir.train`)."""

    def __init__(self, model: ModelProto | str | os.PathLike | bytes,
                 loss: str = "cross_entropy", learning_rate: float = 0.01,
                 momentum: float = 0.0, l1: float = 0.0, l2: float = 0.0,
                 batch_size: int | None = None, trainable: Sequence[str] | None = None,
                 backend: str = DEFAULT_BACKEND, cache: bool = True,
                 batch_norm: str = "train", **backend_options: object):
        from glow_mlir.frontends.onnx import import_onnx
        from glow_mlir.frontends.onnx.loading import load_model
        from glow_mlir.ir.resources import _sanitize, resource_table
        from glow_mlir.runtime.compiled_model import compile_model
        from glow_mlir.transforms.graph.differentiate import (
            TrainingConfig,
            TrainingError,
            differentiate_function,
        )

        if batch_size is not None and (isinstance(batch_size, bool)
                                       or not isinstance(batch_size, int) or batch_size < 1):
            raise TrainingError(f"batch_size must be a positive integer, got {batch_size!r}")
        config = TrainingConfig(loss, learning_rate, momentum, l1, l2, batch_size or 0,
                                batch_norm=batch_norm)
        config.check()  # before anything is imported: fail fast
        if "input_shapes" in backend_options:
            # compile()'s option, which would reach compile_model with the imported graph
            raise TrainingError("train takes batch_size=N, which binds every input's first "
                                "dim, not input_shapes: declare the other dims in the model "
                                "(onnx.tools.update_model_dims.update_inputs_outputs_dims)")
        self._proto, base_dir = load_model(model)
        inits = {t.name: numpy_helper.to_array(t, base_dir)
                 for t in self._proto.graph.initializer}
        handles = None
        if trainable is not None:
            if isinstance(trainable, str):
                trainable = [trainable]
            unknown = [n for n in trainable if n not in inits]
            if unknown:
                raise TrainingError(
                    f"no initializer named {', '.join(map(repr, unknown))} to train (the "
                    f"model's initializers: {', '.join(sorted(inits)) or 'none'})")
            handles = tuple(_sanitize(n) for n in trainable)
        from glow_mlir.frontends.onnx import UnboundDimensionError

        try:
            module = import_onnx(self._proto, self._input_shapes(batch_size))
        except UnboundDimensionError as err:
            # the importer's message suggests compile()'s input_shapes= and specialize=,
            # which train does not take: say what train binds instead
            message = _unbound_message(self._proto, batch_size)
            if message is None:
                raise
            raise TrainingError(message) from err
        fn = next(iter(module.ops))
        table = resource_table(module)
        self.signature = sig = differentiate_function(
            fn, TrainingConfig(loss, learning_rate, momentum, l1, l2, batch_size or 0, handles,
                               batch_norm))
        self.loss = loss
        weights = {h: np.array(table.get(h)) for h in [*sig.weights, *sig.stats]}
        self._origins = {h: _origin(h, a, inits) for h, a in weights.items()}
        self._init_shapes = {n: a.shape for n, a in inits.items()}
        self._init_dtypes = {n: a.dtype for n, a in inits.items()}
        options: dict[str, Any] = dict(backend_options)  # the backend checks them
        self.model = compile_model(module, backend, cache=cache, **options)
        self._state = self.model.state  # live arrays, updated by each step
        missing = [n for n in [*sig.weights, *sig.momenta, *sig.stats] if n not in self._state]
        if missing:
            raise TrainingError(f"backend '{backend}' does not keep the state "
                                f"({', '.join(missing)}) between runs: train on cpu or "
                                f"interpreter")
        self._loss_index = self.model.output_names.index(sig.loss)
        self.labels_shape = self.model.input_shapes[sig.labels]
        self.labels_dtype = self.model.input_dtypes[sig.labels]
        self.steps = 0

    def _input_shapes(self, batch: int | None) -> dict[str, tuple[int, ...] | int] | None:
        """Every input's first dim bound to `batch` (the others as declared)."""
        if batch is None:
            return None
        from glow_mlir.frontends.onnx.input_shapes import declared_dims

        inits = {t.name for t in self._proto.graph.initializer}
        shapes: dict[str, tuple[int, ...] | int] = {}
        symbols: dict[str, int] = {}
        for i in self._proto.graph.input:
            if i.name in inits:
                continue
            # a symbol, a missing value and -1 are dynamic (`input_shapes.dim_of`)
            dims = declared_dims(i) or []
            if not dims or any(not isinstance(d, int) for d in dims[1:]):
                # its other dims unbound: bind its first dim's symbol, if it has one, and
                # leave the rest to the importer (which names what stays unbound)
                if dims and isinstance(dims[0], str):
                    symbols[dims[0]] = batch
                continue
            if isinstance(dims[0], int) and dims[0] not in (0, batch):
                from glow_mlir.transforms.graph.differentiate import TrainingError

                raise TrainingError(f"input '{i.name}' has batch {dims[0]}, "
                                    f"not batch_size {batch}")
            shapes[i.name] = (batch, *(d for d in dims[1:] if isinstance(d, int)))  # all
        return {**symbols, **shapes}

    # ------------------------------------------------------------------ stepping
    def _labels(self, labels: object) -> np.ndarray:
        arr = np.asarray(labels)
        want = self.labels_shape
        if self.loss == "cross_entropy":
            if arr.shape != want or arr.dtype.kind not in "iu":
                raise TrainingInputError(
                    f"labels are {arr.dtype} of shape {arr.shape}; cross_entropy takes integer "
                    f"class indices of shape {want}")
            classes = self.model.output_shapes[self.signature.outputs[0]][-1]
            if arr.size and (arr.min() < 0 or arr.max() >= classes):
                raise TrainingInputError(f"labels must be class indices in [0, {classes}), got "
                                         f"values from {arr.min()} to {arr.max()}")
        elif arr.shape != want:
            raise TrainingInputError(f"labels have shape {arr.shape}; mse takes targets of the "
                                     f"output's shape {want}")
        return np.ascontiguousarray(arr, dtype=self.labels_dtype)

    def step(self, inputs: Mapping[str, object] | object, labels: object) -> float:
        """One SGD step on a batch; returns the batch's loss (before the update)."""
        sig = self.signature
        if not isinstance(inputs, Mapping):
            if len(sig.inputs) != 1:
                raise TrainingInputError(f"the model has inputs {', '.join(sig.inputs)}: "
                                         f"pass a dict name -> array")
            inputs = {sig.inputs[0]: inputs}
        feed = dict(inputs)
        extra = [n for n in feed if n not in sig.inputs]
        if extra:
            raise TrainingInputError(f"unknown input(s) {', '.join(map(repr, extra))} (the "
                                     f"model's inputs: {', '.join(sig.inputs)})")
        feed[sig.labels] = self._labels(labels)
        missing = [n for n in sig.inputs if n not in feed]
        if missing:
            raise TrainingInputError(f"missing input(s) {', '.join(map(repr, missing))}")
        arrays = {}
        for n in sig.inputs:
            x = as_array(feed[n])
            want, dtype = self.model.input_shapes[n], self.model.input_dtypes[n]
            if x.shape != want or x.dtype != dtype:
                raise TrainingInputError(f"input '{n}' is {x.dtype} of shape {x.shape}; "
                                         f"expected {dtype} of shape {want}")
            arrays[n] = x
        arrays[sig.labels] = feed[sig.labels]
        # checked above: straight to the executor, which updates the state in place
        outs = self.model.executor.run([arrays[n] for n in self.model.input_names])
        self.steps += 1
        return float(outs[self._loss_index])

    # ------------------------------------------------------------------ results
    @property
    def weights(self) -> dict[str, np.ndarray]:
        """The trained weights (and batch norms' running statistics) by initializer name,
        in the ONNX model's layout (a weight no initializer gives keeps its graph name)."""
        out = {}
        for h in [*self.signature.weights, *self.signature.stats]:
            a = self._state[h].copy()
            o = self._origins[h]
            if o.initializer is None:
                out[h] = a
            else:
                out[o.initializer] = o.to_onnx(a, self._init_shapes[o.initializer])
        return out

    def export(self) -> ModelProto:
        """The inference model with the trained weights (a copy of the given one)."""
        missing = [h for h, o in self._origins.items() if o.initializer is None]
        if missing:
            raise UserError(f"cannot export: weight(s) {', '.join(missing)} were computed at "
                            f"import from initializers, and no initializer holds them as "
                            f"they are, transposed or reshaped")
        trained = self.weights
        proto = ModelProto()
        proto.CopyFrom(self._proto)
        for t in proto.graph.initializer:
            if t.name in trained:
                t.CopyFrom(numpy_helper.from_array(
                    trained[t.name].astype(self._init_dtypes[t.name]), t.name))
        return proto


def train(model: ModelProto | str | os.PathLike | bytes, loss: str = "cross_entropy",
          learning_rate: float = 0.01, momentum: float = 0.0, batch_size: int | None = None,
          trainable: Sequence[str] | None = None, backend: str = DEFAULT_BACKEND,
          l1: float = 0.0, l2: float = 0.0, cache: bool = True, batch_norm: str = "train",
          **backend_options: object) -> Trainer:
    return Trainer(model, loss, learning_rate, momentum, l1, l2, batch_size, trainable,
                   backend, cache, batch_norm, **backend_options)


__all__ = ["Trainer", "TrainingInputError", "train"]
