"""Random training graphs (hypothesis: a small CNN or MLP of drawn layers, batch, loss and
SGD settings) differentiated, then compiled by the normal pipelines for `interpreter` and
`cpu`: the loss, and every weight and momentum the step updated in place in the compiled
model's state, equal the reference evaluator's on the differentiated graph (so no pass
dropped an update or folded a weight). A fixed graph does the same for the ops with the
newest rules (layer norm, gelu, clip, max)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import glow_mlir
from glow_mlir.dialects import glow
from glow_mlir.semantics.graph_evaluator import evaluate_function
from glow_mlir.transforms.graph.differentiate import TrainingConfig, differentiate_function
from grad_testing import build_graph


@st.composite
def training_graphs(draw):
    batch = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    weights: dict[str, np.ndarray] = {}

    def weight(name, dims, scale=0.5):
        weights[name] = (rng.standard_normal(dims) * scale).astype(np.float32)
        return name

    layers = []
    conv = draw(st.booleans())
    if conv:
        c = draw(st.integers(1, 3))
        weights["x"] = rng.standard_normal((batch, c, 6, 6)).astype(np.float32)
        o = draw(st.integers(1, 4))
        stride = draw(st.integers(1, 2))
        pad = draw(st.integers(0, 1))
        pool = draw(st.sampled_from(["max", "avg", "none"]))
        layers.append(("conv", weight("cw", (o, c, 3, 3)), weight("cb", (o,)), stride, pad))
        layers.append(("act", draw(st.sampled_from([glow.ReluOp, glow.TanhOp]))))
        if pool != "none":
            layers.append(("pool", pool))
        layers.append(("flatten",))
    else:
        weights["x"] = rng.standard_normal((batch, 5)).astype(np.float32)
    hidden = draw(st.integers(2, 6))
    layers.append(("fc", "w1", "b1", hidden))
    layers.append(("act", draw(st.sampled_from([glow.ReluOp, glow.SigmoidOp, glow.TanhOp,
                                                glow.GeluOp]))))
    layers.append(("fc", "w2", "b2", 4))

    def forward(b, v):
        h = v["x"]
        for layer in layers:
            kind = layer[0]
            if kind == "conv":
                from glow_mlir.dialects.glow_ops.shapes import spatial_out

                _, w, bias, s, p = layer
                n, _, hh, ww = h.type.get_shape()
                oh, ow = spatial_out((hh, ww), (3, 3), (s, s), (p,) * 4)
                h = b.op(glow.ConvolutionOp, [h, v[w], v[bias]],
                         b.tensor([n, v[w].type.get_shape()[0], oh, ow], h),
                         kernels=[3, 3], strides=[s, s], pads=[p] * 4)
            elif kind == "act":
                h = b.unary(layer[1], h)
            elif kind == "pool":
                n, ch, hh, ww = h.type.get_shape()
                cls = glow.MaxPoolOp if layer[1] == "max" else glow.AvgPoolOp
                h = b.op(cls, [h], b.tensor([n, ch, hh // 2, ww // 2], h), kernels=[2, 2],
                         strides=[2, 2], pads=[0, 0, 0, 0])
            elif kind == "flatten":
                dims = h.type.get_shape()
                h = b.reshape(h, [dims[0], int(np.prod(dims[1:]))])
            else:
                _, w, bias, m = layer
                h = b.op(glow.FullyConnectedOp, [h, v[w], v[bias]], b.tensor([batch, m], h))
        return h

    _size_fc(layers, weights, weight)
    loss = draw(st.sampled_from(["cross_entropy", "mse"]))
    config = TrainingConfig(loss, learning_rate=draw(st.sampled_from([0.1, 0.5])),
                            momentum=draw(st.sampled_from([0.0, 0.9])),
                            l2=draw(st.sampled_from([0.0, 1e-2])),
                            l1=draw(st.sampled_from([0.0, 1e-3])))
    return weights, forward, config, batch


def _size_fc(layers, weights, weight) -> None:
    """Give the fully connected layers their weights: the first takes the flattened
    features (traced through the layers' shapes), the second `hidden` of them."""
    dims = weights["x"].shape
    for layer in layers:
        kind = layer[0]
        if kind == "conv":
            _, w, _, s, p = layer
            o = weights[w].shape[0]
            dims = (dims[0], o, (dims[2] + 2 * p - 3) // s + 1, (dims[3] + 2 * p - 3) // s + 1)
        elif kind == "pool":
            dims = (dims[0], dims[1], dims[2] // 2, dims[3] // 2)
        elif kind == "flatten":
            dims = (dims[0], int(np.prod(dims[1:])))
        elif kind == "fc":
            _, w, bias, m = layer
            weight(w, (dims[1], m))
            weight(bias, (m,))
            dims = (dims[0], m)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=training_graphs())
def test_training_step_matches_the_evaluator(backend: str, case) -> None:
    _check_step(backend, *case)


def _newer_ops(b, v):
    """fc, layer norm, gelu, clip, then the element-wise max of two fc heads."""
    h = b.op(glow.FullyConnectedOp, [v["x"], v["w1"], v["b1"]], b.tensor([3, 6], v["x"]))
    h = b.op(glow.LayerNormalizationOp, [h, v["g"], v["beta"]], h.type, epsilon=1e-5)
    h = b.unary(glow.ClipOp, b.unary(glow.GeluOp, h), min=-0.5, max=1.5)
    heads = [b.op(glow.FullyConnectedOp, [h, v[w], v[c]], b.tensor([3, 4], h))
             for w, c in (("w2", "b2"), ("w3", "b3"))]
    return b.binary(glow.MaxOp, *heads)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize("loss", ["cross_entropy", "mse"])
def test_layer_norm_gelu_clip_max_step_matches_the_evaluator(backend: str, loss: str) -> None:
    rng = np.random.default_rng(5)
    dims = {"x": (3, 5), "w1": (5, 6), "b1": (6,), "g": (6,), "beta": (6,), "w2": (6, 4),
            "b2": (4,), "w3": (6, 4), "b3": (4,)}
    weights = {n: rng.standard_normal(d).astype(np.float32) for n, d in dims.items()}
    _check_step(backend, weights, _newer_ops,
                TrainingConfig(loss, learning_rate=0.1, momentum=0.9, l2=1e-2), 3)


def _check_step(backend: str, weights, forward, config, batch) -> None:
    module = build_graph(weights, forward)
    fn = next(iter(module.ops))
    sig = differentiate_function(fn, config)
    rng = np.random.default_rng(1)
    out_shape = tuple(fn.function_type.outputs.data[0].get_shape())
    labels = (rng.integers(0, 4, (batch,)).astype(np.int64) if config.loss == "cross_entropy"
              else rng.standard_normal(out_shape).astype(np.float32))
    feed = {sig.labels: labels, **{h: weights[h] for h in sig.weights},
            **{m: rng.standard_normal(weights[h].shape).astype(np.float32)
               for h, m in zip(sig.weights, sig.momenta)}}
    carried = [*sig.weights, *sig.momenta]
    want = dict(zip([*sig.outputs, sig.loss, *sig.updated, *sig.updated_momenta],
                    evaluate_function(fn, [feed[n] for n in [sig.labels, *carried]])))
    model = glow_mlir.compile(module, backend=backend, cache=False)
    assert model.input_names == [sig.labels]  # the weights and momenta are state
    assert model.output_names == [*sig.outputs, sig.loss]
    state = model.state
    assert sorted(state) == sorted(carried)
    for name in sig.momenta:  # drawn, not the initial zeros
        state[name][...] = feed[name]
    for name, g in zip(model.output_names, model.run({sig.labels: labels})):
        np.testing.assert_allclose(g, want[name], rtol=2e-4, atol=2e-5, err_msg=name)
    for name, new in zip(carried, [*sig.updated, *sig.updated_momenta]):
        np.testing.assert_allclose(state[name], want[new], rtol=2e-4, atol=2e-5, err_msg=name)
