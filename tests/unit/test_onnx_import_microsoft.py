"""onnxruntime's `com.microsoft` transformer ops (Attention, the fused layer
normalizations, the GELU variants, ...) against onnxruntime, which runs them, on the
interpreter and cpu backends; the domain's registration and its errors."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import glow_mlir
from glow_mlir.frontends.onnx import UnsupportedOnnxError, import_onnx
from onnx_testing import make_model, rand, run_onnxruntime

F32 = np.float32
MS = "com.microsoft"
BACKENDS = ["interpreter", "cpu"]
B, S, H, N = 2, 5, 8, 2


def ms_model(nodes, inputs, outputs, consts=None, opset=17):
    model = make_model(nodes, inputs, outputs, consts, opset)
    model.opset_import.append(helper.make_opsetid(MS, 1))
    return model


def ms_node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, domain=MS, **attrs)


def check(model, feeds, backend, rtol=1e-4, atol=1e-5, want=None):
    """Compare with onnxruntime, or with `want` for an op it runs only on GPUs."""
    want = run_onnxruntime(model, feeds) if want is None else want
    compiled = glow_mlir.compile(model, backend=backend, cache=False, progress=False)
    got = compiled.run(feeds)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"output {i}: {g.shape} vs onnxruntime {w.shape}"
        assert g.dtype == w.dtype, f"output {i}: {g.dtype} vs onnxruntime {w.dtype}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"output {i}")
    return got


# ---------------------------------------------------------------------- activations

X = rand(B, S, H, seed=3) * 2
BIAS = rand(H, seed=4)

ACTIVATIONS = {
    "Gelu": (["x"], {}, {}),
    "BiasGelu": (["x", "bias"], {}, {"bias": BIAS}),
    "FastGelu": (["x"], {}, {}),
    "FastGelu_bias": (["x", "bias"], {}, {"bias": BIAS}),
    "QuickGelu": (["x"], {}, {}),
    "QuickGelu_alpha": (["x"], {"alpha": 1.3}, {}),
    "BiasAdd": (["x", "bias", "skip"], {}, {"bias": BIAS, "skip": rand(B, S, H, seed=5)}),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(ACTIVATIONS))
def test_activations(case, backend):
    names, attrs, consts = ACTIVATIONS[case]
    model = ms_model([ms_node(case.split("_")[0], names, ["y"], **attrs)], {"x": X}, ["y"],
                     consts)
    # onnxruntime has BiasAdd for CUDA only: its documented X + bias + skip
    want = [X + BIAS + consts["skip"]] if case == "BiasAdd" else None
    check(model, {"x": X}, backend, want=want)


# ---------------------------------------------------------------------- normalizations

GAMMA, BETA = rand(H, seed=6, low=0.5), rand(H, seed=7)
SKIP = rand(B, S, H, seed=8)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("variant", ["plain", "beta_bias_all_outputs", "skip_broadcast"])
def test_skip_layer_normalization(variant, backend):
    consts = {"gamma": GAMMA}
    names, outs = ["x", "skip", "gamma"], ["y"]
    feeds = {"x": X, "skip": SKIP}
    if variant == "beta_bias_all_outputs":
        consts |= {"beta": BETA, "bias": BIAS}
        names += ["beta", "bias"]
        outs = ["y", "mean", "inv", "sum"]
    if variant == "skip_broadcast":
        feeds["skip"] = SKIP[:1]
    node = ms_node("SkipLayerNormalization", names, outs, epsilon=1e-5)
    check(ms_model([node], feeds, outs, consts), feeds, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_skip_simplified_layer_normalization(backend):
    node = ms_node("SkipSimplifiedLayerNormalization", ["x", "skip", "gamma", "bias"],
                   ["y", "", "inv", "sum"], epsilon=1e-6)
    feeds = {"x": X, "skip": SKIP}
    check(ms_model([node], feeds, ["y", "inv", "sum"], {"gamma": GAMMA, "bias": BIAS}), feeds,
          backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("axis", [-1, 1])
def test_simplified_layer_normalization_in_the_onnx_domain(axis, backend):
    """onnxruntime's optimizer writes SimplifiedLayerNormalization without a domain."""
    scale = rand(*X.shape[axis:], seed=9)
    node = helper.make_node("SimplifiedLayerNormalization", ["x", "scale"], ["y", "inv"],
                            axis=axis, epsilon=1e-6)
    check(ms_model([node], {"x": X}, ["y", "inv"], {"scale": scale}), {"x": X}, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_layer_normalization_before_opset_17(backend):
    """onnxruntime's own LayerNormalization, which its optimizer writes at opsets < 17."""
    node = helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1,
                            epsilon=1e-5)
    check(ms_model([node], {"x": X}, ["y"], {"g": GAMMA, "b": BETA}, opset=13), {"x": X},
          backend)


VOCAB, POSITIONS, SEGMENTS = 11, 7, 2


def _embed_case(mask: bool, segments: bool, position_ids: bool):
    rng = np.random.default_rng(5)
    feeds = {"ids": rng.integers(0, VOCAB, (B, S)).astype(np.int32)}
    consts = {"word": rand(VOCAB, H, seed=10), "pos": rand(POSITIONS, H, seed=11),
              "gamma": GAMMA, "beta": BETA}
    names = ["ids", "", "word", "pos", "", "gamma", "beta", "", ""]
    if segments:
        feeds["seg"] = rng.integers(0, SEGMENTS, (B, S)).astype(np.int32)
        consts["segw"] = rand(SEGMENTS, H, seed=12)
        names[1], names[4] = "seg", "segw"
    if mask:
        m = np.ones((B, S), np.int32)
        m[1, 3:] = 0
        feeds["mask"] = m
        names[7] = "mask"
    if position_ids:
        feeds["pids"] = rng.integers(0, POSITIONS, (B, S)).astype(np.int32)
        names[8] = "pids"
    outs = ["y", "mask_index", "sum"]
    node = ms_node("EmbedLayerNormalization", names, outs, epsilon=1e-5)
    return ms_model([node], feeds, outs, consts), feeds


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mask,segments,position_ids", [
    (True, True, False), (False, False, False), (True, False, True)])
def test_embed_layer_normalization(mask, segments, position_ids, backend):
    model, feeds = _embed_case(mask, segments, position_ids)
    check(model, feeds, backend)


# ---------------------------------------------------------------------- FusedMatMul


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("trans_a,trans_b,alpha", [(0, 0, 1.0), (1, 0, 0.5), (0, 1, 2.0),
                                                   (1, 1, 0.125)])
def test_fused_matmul(trans_a, trans_b, alpha, backend):
    a = rand(3, *((4, 5) if not trans_a else (5, 4)), seed=13)
    b = rand(3, *((5, 6) if not trans_b else (6, 5)), seed=14)
    node = ms_node("FusedMatMul", ["a", "b"], ["y"], transA=trans_a, transB=trans_b,
                   alpha=alpha)
    check(ms_model([node], {"a": a, "b": b}, ["y"]), {"a": a, "b": b}, backend)


# ---------------------------------------------------------------------- attention

D = 8


def _mask(kind: str, total: int = S):
    if kind == "raw":
        m = np.ones((B, total), np.int32)
        m[1, total - 2:] = 0
        return m
    if kind == "raw3d":
        m = np.ones((B, S, total), np.int32)
        m[0, :, 0] = 0
        m[1, 2:, total - 1] = 0
        return m
    if kind == "lengths":
        return np.array([total, total - 2], np.int32)
    if kind == "ends_starts":
        return np.array([total, total - 1, 1, 0], np.int32)
    return None


ATTENTION = {
    "plain": {},
    "raw_mask": {"mask": "raw"},
    "raw3d_mask": {"mask": "raw3d"},
    "lengths_mask": {"mask": "lengths"},
    "ends_starts_mask": {"mask": "ends_starts"},
    "unidirectional_raw_mask": {"mask": "raw", "attrs": {"unidirectional": 1}},
    "qkv_sizes_scale": {"attrs": {"qkv_hidden_sizes": [4, 4, 8], "scale": 0.3}},
    "attention_bias_no_bias": {"attention_bias": True, "bias": False},
    "past_present": {"past": 3, "attrs": {"unidirectional": 1}},
    "mask_filter_value": {"mask": "raw", "attrs": {"mask_filter_value": -1000.0}},
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(ATTENTION))
def test_attention(case, backend):
    spec = ATTENTION[case]
    attrs = {"num_heads": N, **spec.get("attrs", {})}
    sizes = attrs.get("qkv_hidden_sizes", [D, D, D])
    x = rand(B, S, H, seed=20)
    feeds = {"x": x}
    consts = {"w": rand(H, sum(sizes), seed=21) * 0.5}
    names = ["x", "w", "", "", "", "", ""]
    if spec.get("bias", True):
        consts["bias"] = rand(sum(sizes), seed=22)
        names[2] = "bias"
    past = spec.get("past", 0)
    if spec.get("mask"):
        feeds["mask"] = _mask(spec["mask"], S + past)
        names[3] = "mask"
    if past:
        feeds["past"] = rand(2, B, N, past, D // N, seed=23)
        names[4] = "past"
    if spec.get("attention_bias"):
        feeds["ab"] = rand(1, N, S, S, seed=24)
        names[5] = "ab"
    while names and names[-1] == "":
        names.pop()
    outs = ["y", "present"] if past else ["y"]
    model = ms_model([ms_node("Attention", names, outs, **attrs)], feeds, outs, consts)
    check(model, feeds, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", ["self", "cross_bias_mask", "past_unidirectional"])
def test_multi_head_attention(case, backend):
    length = S if case != "cross_bias_mask" else 3
    feeds = {"q": rand(B, S, D, seed=30), "k": rand(B, length, D, seed=31),
             "v": rand(B, length, D if case == "past_unidirectional" else 2 * D, seed=32)}
    names = ["q", "k", "v"]
    consts = {}
    attrs = {"num_heads": N}
    outs = ["y"]
    if case == "cross_bias_mask":
        consts["bias"] = rand(4 * D, seed=33)
        feeds["mask"] = _mask("raw", length)
        names += ["bias", "mask"]
    if case == "past_unidirectional":
        feeds["pk"] = rand(B, N, 2, D // N, seed=34)
        feeds["pv"] = rand(B, N, 2, D // N, seed=35)
        names += ["", "", "", "pk", "pv"]
        attrs["unidirectional"] = 1
        outs = ["y", "present_k", "present_v"]
    model = ms_model([ms_node("MultiHeadAttention", names, outs, **attrs)], feeds, outs, consts)
    check(model, feeds, backend)


# ---------------------------------------------------------------------- the domain


def test_an_unknown_microsoft_op_is_listed_with_its_domain():
    nodes = [ms_node("FusedConvFoo", ["x"], ["a"], name="foo"),
             ms_node("Gelu", ["x"], ["b"], name="ok"),
             helper.make_node("Relu", ["x"], ["c"], domain="ai.onnx.ml", name="ml")]
    model = ms_model(nodes, {"x": X}, ["a", "b", "c"])
    model.opset_import.append(helper.make_opsetid("ai.onnx.ml", 3))
    with pytest.raises(UnsupportedOnnxError) as info:
        import_onnx(model)
    text = str(info.value)
    assert "com.microsoft.FusedConvFoo: op type not supported (1 time: 'foo')" in text
    assert "ai.onnx.ml.Relu: ops of domain 'ai.onnx.ml' are not supported" in text
    assert "'ok'" not in text
    assert len(info.value.entries) == 2


def test_a_microsoft_op_without_the_domain_imported_is_version_1_as_in_onnxruntime():
    """onnxruntime's optimizer leaves models in memory without the domain's opset_import,
    and onnxruntime runs them."""
    model = make_model([ms_node("Gelu", ["x"], ["y"], name="g")], {"x": X}, ["y"])
    check(model, {"x": X}, "interpreter")


def test_a_microsoft_op_at_an_unknown_version_is_listed():
    model = make_model([ms_node("Gelu", ["x"], ["y"], name="g")], {"x": X}, ["y"])
    model.opset_import.append(helper.make_opsetid(MS, 7))
    with pytest.raises(UnsupportedOnnxError, match="com.microsoft.Gelu: op type not supported "
                       "at opset 7"):
        import_onnx(model)


@pytest.mark.parametrize("node,message", [
    (ms_node("Attention", ["x", "w"], ["y"], num_heads=2, do_rotary=1), "do_rotary=1"),
    (ms_node("FusedMatMul", ["x", "x"], ["y"], transBatchA=1), "transBatchA"),
    (ms_node("MultiHeadAttention", ["x"], ["y"], num_heads=2), "packed QKV"),
])
def test_unsupported_features_are_named(node, message):
    model = ms_model([node], {"x": X}, ["y"], {"w": rand(H, 3 * D)})
    with pytest.raises(UnsupportedOnnxError, match=message):
        import_onnx(model)


def test_a_bad_attention_weight_is_an_import_error():
    from glow_mlir.frontends.onnx import OnnxImportError

    node = ms_node("Attention", ["x", "w"], ["y"], num_heads=3, name="att")
    model = ms_model([node], {"x": X}, ["y"], {"w": rand(H, 3 * D)})
    with pytest.raises(OnnxImportError, match="node 'att'.*qkv_hidden_sizes"):
        import_onnx(model)



# ---------------------------------------------------------------------- attributes


def test_each_converter_declares_onnxruntimes_attributes():
    """The declared names and types are those of onnxruntime's contrib schemas."""
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_state

    from glow_mlir.frontends.onnx.table import MICROSOFT_CONVERTERS

    schemas = {s.name: s for s in ort_state.get_all_operator_schema()
               if s.domain == MS and s.since_version == 1}
    for op, entries in MICROSOFT_CONVERTERS.items():
        declared = entries[0].convert.attributes
        theirs = {name: int(a.type) for name, a in schemas[op].attributes.items()}
        assert declared == theirs, op


@pytest.mark.parametrize("node,message", [
    (ms_node("SkipLayerNormalization", ["x", "x", "g"], ["y"], epsilon="abc", name="sln"),
     "node 'sln' .*attribute 'epsilon' is STRING, but SkipLayerNormalization takes FLOAT"),
    (ms_node("SkipLayerNormalization", ["x", "x", "g"], ["y"], epsilon=-1.0, name="sln"),
     "node 'sln' .*'epsilon' is -1.0; it must be a finite number >= 0"),
    (ms_node("Attention", ["x", "w"], ["y"], num_heads=0, name="att"),
     "node 'att' .*'num_heads' is 0; it must be at least 1"),
    (ms_node("Attention", ["x", "w"], ["y"], num_heads=-2, name="att"),
     "node 'att' .*'num_heads' is -2; it must be at least 1"),
    (ms_node("Attention", ["x", "w"], ["y"], num_heads="x", name="att"),
     "node 'att' .*attribute 'num_heads' is STRING, but Attention takes INT"),
    (ms_node("Attention", ["x", "w"], ["y"], num_heads=2, mask_filter_value="q", name="att"),
     "node 'att' .*attribute 'mask_filter_value' is STRING, but Attention takes FLOAT"),
    (ms_node("Attention", ["x", "w"], ["y"], num_heads=2, qkv_hidden_sizes=[16, 16, -8],
             name="att"), "node 'att'.*qkv_hidden_sizes"),
    (ms_node("MultiHeadAttention", ["x", "x", "x"], ["y"], num_heads=0, name="mha"),
     "node 'mha' .*'num_heads' is 0; it must be at least 1"),
    (ms_node("MultiHeadAttention", ["x", "x", "x"], ["y"], num_heads=3, name="mha"),
     "node 'mha' .*'num_heads' 3 does not divide the hidden size"),
])
def test_bad_attributes_are_import_errors(node, message):
    from glow_mlir.frontends.onnx import OnnxImportError

    model = ms_model([node], {"x": X}, ["y"], {"w": rand(H, 3 * D), "g": rand(H)})
    with pytest.raises(OnnxImportError, match=message) as info:
        import_onnx(model)
    assert not isinstance(info.value, UnsupportedOnnxError)


@pytest.mark.parametrize("node,message", [
    # com.microsoft's Gelu has no `approximate` (the ONNX domain's does): onnxruntime
    # rejects the model rather than compute the tanh form
    (ms_node("Gelu", ["x"], ["y"], approximate="tanh"),
     r"com.microsoft.Gelu: attribute 'approximate' \(Gelu takes: none\)"),
    (ms_node("FastGelu", ["x"], ["y"], bogus_attr=3),
     r"com.microsoft.FastGelu: attribute 'bogus_attr' \(FastGelu takes: none\)"),
    (ms_node("QuickGelu", ["x"], ["y"], beta=3.0),
     r"attribute 'beta' \(QuickGelu takes: alpha\)"),
])
def test_unknown_attributes_are_unsupported(node, message):
    with pytest.raises(UnsupportedOnnxError, match=message):
        import_onnx(ms_model([node], {"x": X}, ["y"]))
