"""Helpers of the ONNX frontend tests: build small models with onnx.helper and check that
glow_mlir (importer + reference evaluator) gives onnxruntime's numbers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

from glow_mlir.frontends.onnx import import_onnx
from glow_mlir.frontends.onnx.dtypes import onnx_type_of
from glow_mlir.targets.interpreter import evaluate_module

IR_VERSION = 10
"""onnxruntime reads IR versions up to 13; 10 works with every opset it runs."""


def make_model(nodes: Sequence[onnx.NodeProto], inputs: Mapping[str, np.ndarray | tuple],
               outputs: Sequence[str], initializers: Mapping[str, np.ndarray] | None = None,
               opset: int = 17, dynamic: Mapping[str, Sequence] | None = None) -> onnx.ModelProto:
    """A model whose graph inputs are `inputs` (arrays, or (shape, dtype)), with untyped
    outputs, so the importer's own types are what is compared."""
    infos = []
    for name, spec in inputs.items():
        shape, dtype = (
            (spec.shape, spec.dtype) if isinstance(spec, (np.ndarray, np.generic)) else spec
        )
        dims = (dynamic or {}).get(name, shape)
        infos.append(helper.make_tensor_value_info(name, onnx_type_of(np.dtype(dtype)), list(dims)))
    graph = helper.make_graph(
        list(nodes), "test", infos, [helper.make_empty_tensor_value_info(o) for o in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in (initializers or {}).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=IR_VERSION)


def node_model(op_type: str, inputs: Mapping[str, np.ndarray], attrs: Mapping | None = None,
               consts: Mapping[str, np.ndarray] | None = None, n_outputs: int = 1,
               opset: int = 17, order: Sequence[str] | None = None) -> onnx.ModelProto:
    """A one-node model; `consts` become initializers; `order` lists the node's input names
    ('' for an absent optional input) when it differs from inputs then consts."""
    names = list(order) if order is not None else [*inputs, *(consts or {})]
    outs = [f"y{i}" for i in range(n_outputs)]
    node = helper.make_node(op_type, names, outs, **dict(attrs or {}))
    return make_model([node], inputs, outs, consts, opset)


def run_onnxruntime(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, dict(feeds))


def run_glow(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray],
             input_shapes=None) -> list[np.ndarray]:
    module = import_onnx(model, input_shapes)
    return evaluate_module(module, list(feeds.values()))


def assert_matches_onnxruntime(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray],
                               rtol: float = 1e-5, atol: float = 1e-6, input_shapes=None,
                               check_dtype: bool = True) -> list[np.ndarray]:
    expected = run_onnxruntime(model, feeds)
    got = run_glow(model, feeds, input_shapes)
    assert len(got) == len(expected)
    for i, (e, g) in enumerate(zip(expected, got)):
        assert g.shape == e.shape, f"output {i}: shape {g.shape}, onnxruntime {e.shape}"
        if check_dtype:
            assert g.dtype == e.dtype, f"output {i}: dtype {g.dtype}, onnxruntime {e.dtype}"
        if e.dtype.kind in "biu":
            np.testing.assert_array_equal(g, e, err_msg=f"output {i}")
        else:
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"output {i}")
    return got


def rand(*shape: int, seed: int = 0, dtype=np.float32, low: float | None = None) -> np.ndarray:
    rng = np.random.default_rng(seed + 7 * len(shape) + sum(shape))
    x = rng.standard_normal(shape)
    if low is not None:
        x = np.abs(x) + low
    return x.astype(dtype)


def model_feeds(compiled, seed: int = 0) -> dict[str, np.ndarray]:
    """Inputs for a compiled model (glow_mlir.compile): normal floats, and for an integer
    input (an attention mask) attend to all but the last quarter of the positions."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for name in compiled.input_names:
        shape, dtype = compiled.input_shapes[name], compiled.input_dtypes[name]
        if dtype.kind == "f":
            feeds[name] = rng.standard_normal(shape).astype(dtype)
        else:
            mask = np.ones(shape, dtype)
            mask[..., -shape[-1] // 4:] = 0
            feeds[name] = mask
    return feeds
