"""ONNX's Attention (opsets 23-25), RotaryEmbedding (23) and LinearAttention (27) beyond
the node suite's small cases: larger shapes against onnxruntime on the interpreter and
cpu, the mask forms the suite leaves out (checked against onnx's reference evaluator),
and the errors."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

import glow_mlir
from glow_mlir.frontends.onnx import OnnxImportError, import_onnx
from glow_mlir.runtime.compiled_model import InputError
from onnx_testing import make_model, rand, run_onnxruntime

BACKENDS = ["interpreter", "cpu"]
B, NQ, NKV, S, L, H = 2, 8, 2, 12, 16, 16
"""Batch, query heads, kv heads (GQA: 4 query heads share one), query and key lengths, head
size: larger than the node suite's, so a head mapped to the wrong kv head shows."""


def attention_model(feeds, attrs=None, outputs=("y",), opset=23, order=None):
    names = list(order) if order is not None else list(feeds)
    node = helper.make_node("Attention", names, list(outputs), **dict(attrs or {}))
    return make_model([node], feeds, [o for o in outputs if o], opset=opset)


def compiled_run(model, feeds, backend):
    compiled = glow_mlir.compile(model, backend=backend, cache=False, progress=False)
    return compiled.run(feeds)


def assert_close(got, want, rtol=1e-4, atol=1e-5):
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"output {i}: {g.shape} vs {w.shape}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"output {i}")


def qkv(seed=0, q_heads=NQ, kv_heads=NKV):
    return {"q": rand(B, q_heads, S, H, seed=seed), "k": rand(B, kv_heads, L, H, seed=seed + 1),
            "v": rand(B, kv_heads, L, H, seed=seed + 2)}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("variant", ["gqa", "gqa_causal_past", "bool_mask_3d_form"])
def test_matches_onnxruntime(variant, backend):
    feeds = qkv()
    attrs: dict = {}
    order = None
    outputs: tuple = ("y",)
    if variant == "gqa_causal_past":
        feeds["past_key"] = rand(B, NKV, 5, H, seed=9)
        feeds["past_value"] = rand(B, NKV, 5, H, seed=10)
        order = ["q", "k", "v", "", "past_key", "past_value"]
        attrs = {"is_causal": 1}
        outputs = ("y", "present_key", "present_value")
    elif variant == "bool_mask_3d_form":
        feeds = {"q": feeds["q"].transpose(0, 2, 1, 3).reshape(B, S, NQ * H),
                 "k": feeds["k"].transpose(0, 2, 1, 3).reshape(B, L, NKV * H),
                 "v": feeds["v"].transpose(0, 2, 1, 3).reshape(B, L, NKV * H),
                 "mask": np.random.default_rng(3).random((B, 1, S, L)) < 0.7}
        feeds["mask"][..., 0] = True  # onnxruntime gives a fully masked row NaNs
        attrs = {"q_num_heads": NQ, "kv_num_heads": NKV, "scale": 0.2}
    model = attention_model(feeds, attrs, outputs, order=order)
    assert_close(compiled_run(model, feeds, backend), run_onnxruntime(model, feeds))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mask_shape", [(L - 4,), (NQ, S, L), (1, NQ, 1, L)])
def test_mask_broadcast_and_padding(mask_shape, backend):
    """A float mask of rank 1 (shorter than the keys: padded with -inf), rank 3 (heads,
    queries, keys) and rank 4 broadcasting over batch and queries, with a softcap and
    the post-bias scores as the qk output: against onnx's reference."""
    feeds = {**qkv(seed=4), "mask": rand(*mask_shape, seed=5)}
    model = attention_model(feeds, {"softcap": 3.0, "qk_matmul_output_mode": 2},
                            ("y", "", "", "qk"))
    want = ReferenceEvaluator(model).run(None, feeds)
    assert_close(compiled_run(model, feeds, backend), want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fully_masked_row_is_zero(backend):
    """A query row that may see no key gives zeros (the reference's guard), not NaN, in Y
    and in the softmax output."""
    feeds = {**qkv(seed=6), "mask": np.ones((S, L), bool)}
    feeds["mask"][3] = False
    model = attention_model(feeds, {"qk_matmul_output_mode": 3}, ("y", "", "", "probs"))
    got = compiled_run(model, feeds, backend)
    assert_close(got, ReferenceEvaluator(model).run(None, feeds))
    assert not np.isnan(got[0]).any() and not got[0][:, :, 3].any()


@pytest.mark.parametrize("backend", BACKENDS)
def test_nonpad_kv_seqlen_and_window(backend):
    """Opset 25: per-batch valid key counts known only at run time, with a causal sliding
    window aligned to each batch's last valid key."""
    feeds = {**qkv(seed=7), "nonpad": np.array([L, L - 5], np.int64)}
    model = attention_model(feeds, {"is_causal": 1, "left_window_size": 3}, opset=25,
                            order=["q", "k", "v", "", "", "", "nonpad"])
    want = ReferenceEvaluator(model).run(None, feeds)
    assert_close(compiled_run(model, feeds, backend), want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("interleaved", [0, 1])
def test_rotary_embedding_3d_partial(interleaved, backend):
    """The 3-D form, a rotary dim below the head size, position ids: against the
    reference."""
    heads, size, dim, positions = 4, 16, 8, 40
    feeds = {"x": rand(B, S, heads * size, seed=11),
             "cos": np.cos(rand(positions, dim // 2, seed=12)),
             "sin": np.sin(rand(positions, dim // 2, seed=12)),
             "ids": np.random.default_rng(13).integers(0, positions, (B, S))}
    node = helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "ids"], ["y"],
                            num_heads=heads, rotary_embedding_dim=dim, interleaved=interleaved)
    model = make_model([node], feeds, ["y"], opset=23)
    want = ReferenceEvaluator(model).run(None, feeds)
    assert_close(compiled_run(model, feeds, backend), want)


@pytest.mark.parametrize("bad", [L + 1, -1])
def test_nonpad_kv_seqlen_beyond_the_keys_is_refused(bad):
    """A count outside [0, keys] was run (as if all keys were valid); onnxruntime refuses
    it, and so does check_inputs now, before anything runs."""
    feeds = {**qkv(seed=7), "nonpad": np.array([L, bad], np.int64)}
    model = attention_model(feeds, opset=24, order=["q", "k", "v", "", "", "", "nonpad"])
    compiled = glow_mlir.compile(model, backend="interpreter", cache=False, progress=False)
    with pytest.raises(InputError) as info:
        compiled.run(feeds)
    assert str(info.value) == (f"input 'nonpad' at [1] is {bad}: Attention nonpad_kv_seqlen "
                               f"of {L} keys must be in [0, {L + 1}) (1 bad value(s))")
    feeds["nonpad"] = np.array([L, 0], np.int64)  # both ends are counts it takes
    compiled.run(feeds)


ERRORS = {
    "3d_without_heads": (lambda f: {k: v.reshape(B, -1, NKV * H) if k != "q" else
                                    v.reshape(B, -1, NQ * H) for k, v in f.items()},
                         {}, "attribute 'q_num_heads'"),
    "heads_not_multiple": (lambda f: {**f, "k": f["k"][:, :1].repeat(3, 1),
                                      "v": f["v"][:, :1].repeat(3, 1)},
                           {}, "not a multiple of K's and V's 3 heads"),
    "mask_too_long": (lambda f: {**f, "mask": rand(S, L + 1)}, {}, "at most the 16 keys"),
    "mask_no_broadcast": (lambda f: {**f, "mask": rand(3, S, L)}, {}, "does not broadcast"),
    "bad_mode": (lambda f: f, {"qk_matmul_output_mode": 4}, "qk_matmul_output_mode 4"),
    "bad_precision": (lambda f: f, {"softmax_precision": 6}, "softmax_precision 6"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_name_node_and_what(case):
    make, attrs, words = ERRORS[case]
    feeds = make(qkv())
    model = attention_model(feeds, attrs)
    with pytest.raises(OnnxImportError, match="Attention") as info:
        import_onnx(model)
    assert words in str(info.value)


def test_rotary_dim_error():
    feeds = {"x": rand(B, NQ, S, H), "cos": rand(B, S, 3), "sin": rand(B, S, 3)}
    model = make_model([helper.make_node("RotaryEmbedding", ["x", "cos", "sin"], ["y"],
                                         rotary_embedding_dim=7)], feeds, ["y"], opset=23)
    with pytest.raises(OnnxImportError, match="rotary_embedding_dim 7 must be even"):
        import_onnx(model)


@pytest.mark.parametrize("bad", [40, -1])
def test_rotary_position_ids_out_of_the_caches_are_refused_as_such(bad):
    """As onnxruntime: ids in [0, positions), refused before running, in one message that
    names RotaryEmbedding (not the Gather it is lowered to)."""
    positions = 40
    ids = np.zeros((B, S), np.int64)
    ids[1, 2] = bad
    feeds = {"x": rand(B, NQ, S, H, seed=1), "cos": rand(positions, H // 2, seed=2),
             "sin": rand(positions, H // 2, seed=3), "ids": ids}
    model = make_model([helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "ids"],
                                         ["y"])], feeds, ["y"], opset=23)
    compiled = glow_mlir.compile(model, backend="interpreter", cache=False, progress=False)
    with pytest.raises(InputError) as info:
        compiled.run(feeds)
    assert str(info.value) == (
        f"input 'ids' at [1, 2] is {bad}: RotaryEmbedding position_ids into caches of "
        f"{positions} positions must be in [0, {positions}) (1 bad value(s))")


def linear_attention_model(feeds, order, **attrs):
    node = helper.make_node("LinearAttention", order, ["y", "state"], **attrs)
    return make_model([node], feeds, ["y", "state"], opset=27)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("rule", ["gated_delta", "gated"])
def test_linear_attention_gqa_longer(rule, backend):
    """Ten steps, three query heads per kv head, a per-head decay and a past state: against
    the reference (onnxruntime has no LinearAttention)."""
    steps, q_heads, kv_heads, dk, dv = 10, 6, 2, 8, 4
    key = rand(B, steps, kv_heads, dk, seed=21)
    key /= np.linalg.norm(key, axis=-1, keepdims=True)  # the delta rule wants unit keys
    feeds = {"q": rand(B, steps, q_heads * dk, seed=20), "k": key.reshape(B, steps, -1),
             "v": rand(B, steps, kv_heads * dv, seed=22),
             "past": rand(B, kv_heads, dk, dv, seed=23) * 0.1,
             "decay": -np.abs(rand(B, steps, kv_heads, seed=24)) * 0.2}
    order = ["q", "k", "v", "past", "decay"]
    if rule == "gated_delta":
        feeds["beta"] = np.random.default_rng(25).random((B, steps, kv_heads)).astype(np.float32)
        order.append("beta")
    model = linear_attention_model(feeds, order, q_num_heads=q_heads, kv_num_heads=kv_heads,
                                   update_rule=rule)
    want = ReferenceEvaluator(model).run(None, feeds)
    assert_close(compiled_run(model, feeds, backend), want)


def test_linear_attention_rule_needs_its_inputs():
    feeds = {"q": rand(B, 3, 8), "k": rand(B, 3, 8), "v": rand(B, 3, 8)}
    model = linear_attention_model(feeds, ["q", "k", "v"], q_num_heads=1, kv_num_heads=1,
                                   update_rule="gated")
    with pytest.raises(OnnxImportError, match="update_rule 'gated' requires input 'decay'"):
        import_onnx(model)
