"""glow-mlir as an ONNX backend (`onnx.backend.base.Backend`), so standard ONNX tooling,
ONNX's backend test runner included, can drive it:

    import glow_mlir.onnx_backend as backend
    rep = backend.prepare(model)            # compiled once
    outputs = rep.run([x])                  # or rep.run({"x": x}); many times
    outputs = backend.run_model(model, [x])
    outputs = backend.run_node(node, [x, y])

Outputs are a tuple that can also be indexed by output name (ONNX's `namedtupledict`).
The device is where the compiled model runs: glow-mlir runs on the host, so "CPU" is the
one device; which glow-mlir backend compiles it ("interpreter" now, "cpu" and "accel"
later) is the `backend` keyword of `prepare`, as in `glow_mlir.compile`. A model with
unbound dims, or whose shape-like inputs (Reshape's shape, TopK's K, ...) are graph inputs,
compiles at its first `run` and again at each new signature (`specialize="first-call"`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

import glow_mlir
from glow_mlir.ir.errors import UserError
from glow_mlir.runtime.compiled_model import InputError
from glow_mlir.runtime.specialized import SpecializingModel


class DeviceError(UserError):
    """A device glow-mlir cannot run on."""


def _check_device(device: str) -> None:
    if not GlowBackend.supports_device(device):
        raise DeviceError(f"glow-mlir runs on device 'CPU' only, not {device!r}")


def _as_array(value: Any) -> np.ndarray:
    return numpy_helper.to_array(value) if isinstance(value, TensorProto) else np.asarray(value)


class GlowBackendRep(BackendRep):
    """A model compiled once; `run` takes its inputs positionally (a list or tuple in the
    graph's input order, initializers excluded), by name (a dict), or a single array."""

    def __init__(self, compiled: glow_mlir.CompiledModel | SpecializingModel):
        self.compiled = compiled

    @property
    def input_names(self) -> list[str]:
        return self.compiled.input_names

    @property
    def output_names(self) -> list[str]:
        return self.compiled.output_names

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        if isinstance(inputs, Mapping):
            named = {name: _as_array(v) for name, v in inputs.items()}
        else:
            if isinstance(inputs, (np.ndarray, TensorProto)):
                inputs = [inputs]
            values = list(inputs)
            if len(values) != len(self.input_names):
                names = ", ".join(self.input_names) or "none"
                raise InputError(f"the model takes {len(self.input_names)} input(s) ({names}), "
                                f"got {len(values)}")
            named = {name: _as_array(v) for name, v in zip(self.input_names, values)}
        outputs = self.compiled.run(named)
        return namedtupledict("Outputs", self.output_names)(*outputs)


class GlowBackend(Backend):
    """`onnx.backend.base.Backend` over `glow_mlir.compile`."""

    @classmethod
    def prepare(cls, model: ModelProto, device: str = "CPU", backend: str = "interpreter",
                input_shapes: Mapping[str, Sequence[int] | int] | None = None,
                **kwargs: Any) -> GlowBackendRep:
        """Compile `model`. `backend` is the glow-mlir backend that compiles it;
        `input_shapes` binds symbolic dimensions, as in `glow_mlir.compile`. Other keyword
        arguments (ONNX's runner passes tolerances to every call) are ignored.

        Unlike the base class, this does not run `onnx.checker.check_model`: the importer
        checks what it relies on and reports every unsupported feature at once, while the
        checker rejects models that glow-mlir and onnxruntime run well (untyped graph
        outputs, as `run_node` and many tests build)."""
        _check_device(device)
        if not isinstance(model, ModelProto):
            raise UserError(f"prepare takes an onnx.ModelProto, got {type(model).__name__}")
        from glow_mlir.frontends.onnx import UnboundDimensionError, UnsupportedOnnxError
        from glow_mlir.runtime.specialized import RUNTIME_VALUE

        try:
            return GlowBackendRep(glow_mlir.compile(model, backend=backend,
                                                    input_shapes=input_shapes))
        except (UnboundDimensionError, UnsupportedOnnxError) as err:
            # Unbound dims, or shape-like inputs fed at run time: compile at the first call
            # (`runtime/specialized.py`). Anything else unsupported stays an error here.
            tensors_only = all(i.type.WhichOneof("value") == "tensor_type"
                               for i in model.graph.input)
            runtime_values_only = not isinstance(err, UnsupportedOnnxError) or all(
                RUNTIME_VALUE.search(e.why) for e in err.entries)
            if input_shapes or not tensors_only or not runtime_values_only:
                raise
        return GlowBackendRep(glow_mlir.compile(model, backend=backend, specialize="first-call"))

    @classmethod
    def run_model(cls, model: ModelProto, inputs: Any, device: str = "CPU",
                  **kwargs: Any) -> tuple[np.ndarray, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: NodeProto, inputs: Any, device: str = "CPU",
                 outputs_info: Sequence[tuple[np.dtype, tuple[int, ...]]] | None = None,
                 **kwargs: Any) -> tuple[np.ndarray, ...]:
        """Run one node on `inputs` (arrays for its non-empty inputs, in order, or a dict by
        input name). The node becomes a one-node model whose inputs are typed by the given
        arrays, at opset `opset_version` (default: the newest the installed onnx knows)."""
        _check_device(device)
        opset = kwargs.pop("opset_version", None)
        super().run_node(node, inputs, device, **({"opset_version": opset} if opset else {}))
        model = make_node_model(node, inputs, opset, outputs_info)
        return cls.run_model(model, inputs, device, **kwargs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        try:
            return Device(device).type == DeviceType.CPU
        except (AttributeError, ValueError):
            return False


def make_node_model(node: NodeProto, inputs: Any, opset: int | None = None,
                    outputs_info: Sequence[tuple[np.dtype, tuple[int, ...]]] | None = None,
                    ) -> ModelProto:
    """A model holding only `node`; its graph inputs are the node's non-empty inputs, typed
    by `inputs` (positional or by name). Outputs are typed by `outputs_info` when given and
    left untyped otherwise (the importer infers them)."""
    names = [name for name in node.input if name]
    if isinstance(inputs, Mapping):
        missing = [n for n in names if n not in inputs]
        if missing:
            raise InputError(f"run_node: no value for input(s) {', '.join(missing)} of the "
                            f"{node.op_type} node")
        arrays = [_as_array(inputs[n]) for n in names]
    else:
        arrays = [_as_array(v) for v in inputs]
        if len(arrays) != len(names):
            raise InputError(f"run_node: the {node.op_type} node has {len(names)} input(s) "
                            f"({', '.join(names) or 'none'}), got {len(arrays)} value(s)")
    graph_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype),
                                                  a.shape) for n, a in zip(names, arrays)]
    out_names = [name for name in node.output if name]
    if outputs_info is not None:
        graph_outputs = [helper.make_tensor_value_info(
            n, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), shape)
            for n, (dtype, shape) in zip(out_names, outputs_info)]
    else:
        graph_outputs = [helper.make_empty_tensor_value_info(n) for n in out_names]
    graph = helper.make_graph([node], f"{node.op_type}_node", graph_inputs, graph_outputs)
    version = opset or onnx.defs.onnx_opset_version()
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(node.domain, version)])


prepare = GlowBackend.prepare
run_model = GlowBackend.run_model
run_node = GlowBackend.run_node
supports_device = GlowBackend.supports_device
