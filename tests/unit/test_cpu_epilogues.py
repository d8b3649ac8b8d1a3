"""Fused epilogues on the cpu (conversion/glow_ir_to_loops/epilogue.py, the shared
analysis analysis/epilogue_fusion.py with the cpu's rules): every producer form (the
convolution's im2col, im2col by chunks and by bands, register tiles, parity split,
direct form, 1x1 gemm, groups; fully_connected, mat_mul through views, batch_mat_mul)
with residual adds, biases and activations after it gives the interpreter's numbers,
fused and not; where the rules say no (a second use, another shape, an op between,
planned places that clash), nothing is fused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from onnx import helper
from xdsl.dialects import func

import glow_mlir
from glow_graphs import assert_outputs_close, clone_module, evaluate, glow_graphs
from glow_mlir.conversion.glow_ir_to_loops import epilogue, kernels_conv
from onnx_testing import make_model as _make_model
from onnx_testing import rand

# name: (C, H, W, O, kernel, stride, pad, group), with the form the cpu picks for it
CONVS = {
    "im2col": (8, 12, 12, 16, 3, 1, 1, 1),
    "im2col_chunks": (64, 32, 32, 8, 3, 1, 1, 1),  # columns of 64 channels: > 512 KiB
    "bands": (3, 70, 70, 4, 3, 1, 1, 1),  # 4900 outputs: by bands of rows
    "gemm_1x1": (16, 9, 9, 20, 1, 1, 0, 1),
    "group": (8, 10, 10, 8, 3, 1, 1, 4),  # register tiles
    "depthwise_s2": (6, 11, 40, 6, 3, 2, 1, 6),  # wide rows, stride 2: the direct form
    "split_7x7_s2": (2, 9, 45, 4, 7, 2, 3, 2),  # parity split + register tiles
}
ACTS = {"Relu": {}, "Sigmoid": {}, "Tanh": {}, "LeakyRelu": {"alpha": 0.1},
        "Clip": None}


PRODUCERS = ("convolution", "fully_connected", "mat_mul", "batch_mat_mul")


def make_model(nodes, inputs, outputs, inits):
    """onnx_testing.make_model with f32 inputs given by their shapes."""
    return _make_model(nodes, {k: (v, np.float32) for k, v in inputs.items()}, outputs, inits)


def _kernel_names(compiled) -> list[str]:
    """The kinds of the kernel functions (`main_k3_convolution_add_relu` ->
    `convolution_add_relu`)."""
    return [f.sym_name.data.split("_k", 1)[1].split("_", 1)[1]
            for f in compiled.module.walk()
            if isinstance(f, func.FuncOp) and "glow.kernel" in f.attributes]


def _compare(model, feeds, fused_kernel: str | None, rtol=1e-5, atol=2e-5):
    """The cpu's outputs against the interpreter's; `fused_kernel`: a kernel function
    whose name ends so must exist (None: no fused kernel at all)."""
    ref = glow_mlir.compile(model, "interpreter")
    cpu = glow_mlir.compile(model, "cpu", cache=False)
    names = _kernel_names(cpu)
    if fused_kernel is None:
        assert not any(n.startswith(p + "_") for n in names for p in PRODUCERS), names
    else:
        assert fused_kernel in names, names
    want, got = ref.run(feeds), cpu.run(feeds)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return names


def _conv_nodes(name, x="x", out="c"):
    c, h, w, o, k, s, p, g = CONVS[name]
    node = helper.make_node("Conv", [x, "w", "b"], [out], kernel_shape=[k, k], strides=[s, s],
                            pads=[p] * 4, group=g)
    inits = {"w": rand(o, c // g, k, k, seed=1) * 0.3, "b": rand(o, seed=2)}
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    return node, inits, (1, c, h, w), (1, o, oh, ow)


def _act_node(act, x, out):
    if act == "Clip":
        return [helper.make_node("Clip", [x, "lo", "hi"], [out])], {
            "lo": np.array(-0.5, np.float32), "hi": np.array(0.75, np.float32)}
    return [helper.make_node(act, [x], [out], **ACTS[act])], {}


@pytest.fixture(params=[True, False], ids=["fused", "unfused"])
def fuse(request, monkeypatch):
    monkeypatch.setattr(epilogue, "FUSE_EPILOGUES", request.param)
    return request.param


@pytest.mark.parametrize("form", sorted(CONVS))
def test_convolution_residual_add_relu(form, fuse):
    """ResNet's block end: conv, add of the skip, relu; one kernel when fused."""
    conv, inits, xs, cs = _conv_nodes(form)
    nodes = [conv, helper.make_node("Add", ["c", "skip"], ["a"]),
             helper.make_node("Relu", ["a"], ["r"])]
    model = make_model(nodes, {"x": xs, "skip": cs}, ["r"], inits)
    _compare(model, {"x": rand(*xs, seed=3), "skip": rand(*cs, seed=4)},
             "convolution_add_relu" if fuse else None)


@pytest.mark.parametrize("form", ["im2col", "group", "split_7x7_s2", "gemm_1x1"])
def test_residual_into_the_first_convolution(form, fuse, monkeypatch):
    """ResNet's downsampling block: conv A, then conv B, then A + B computed in place in
    A's buffer: fused after B, the result (A) is also a source, read element for element
    before its store; the register tiles (which store overlapping tiles twice) apply it
    after the tiles. Without im2col too (the tile forms)."""
    for im2col in (True, False):
        monkeypatch.setattr(kernels_conv, "IM2COL", im2col)
        conv, inits, xs, _ = _conv_nodes(form, out="ca")
        c, _, _, o, k, s, p, g = CONVS[form]
        conv_b = helper.make_node("Conv", ["x", "wb", "bb"], ["cb"], kernel_shape=[k, k],
                                  strides=[s, s], pads=[p] * 4, group=g)
        inits = {**inits, "wb": rand(o, c // g, k, k, seed=5) * 0.3, "bb": rand(o, seed=6)}
        nodes = [conv, helper.make_node("Relu", ["ca"], ["ra"]), conv_b,
                 helper.make_node("Add", ["ra", "cb"], ["a"]),
                 helper.make_node("Relu", ["a"], ["r"])]
        model = make_model(nodes, {"x": xs}, ["r"], inits)
        _compare(model, {"x": rand(*xs, seed=3)}, "convolution_add_relu" if fuse else None)


@pytest.mark.parametrize("act", sorted(ACTS))
def test_convolution_bias_and_activations(act, fuse):
    """conv + add of a per-position tensor + each activation, and a conv with its own
    fused activation followed by a multiply."""
    conv, inits, xs, cs = _conv_nodes("im2col")
    act_nodes, act_inits = _act_node(act, "a", "r")
    nodes = [conv, helper.make_node("Add", ["c", "t"], ["a"]), *act_nodes,
             helper.make_node("Mul", ["r", "m"], ["y"])]
    model = make_model(nodes, {"x": xs, "t": cs, "m": cs}, ["y"], {**inits, **act_inits})
    kind = {"LeakyRelu": "leaky_relu"}.get(act, act.lower())
    _compare(model, {"x": rand(*xs, seed=3), "t": rand(*cs, seed=4), "m": rand(*cs, seed=5)},
             f"convolution_add_{kind}_mul" if fuse else None)


def test_bert_linear_bias_gelu(fuse):
    """BERT's linear layer: MatMul of a 3-D input (a mat_mul on a 2-D view of it), the
    bias added to a view of the product, then the GELU's erf chain: the bias goes into
    a fully_connected (`fold-matmul-add` through the reshapes) and the gelu is fused
    through the view; GELU's x * 0.5 * (1 + erf(x / sqrt 2)) reads the biased value
    twice, not a chain, but the cpu makes it one gelu (`fuse_gelu`), which is."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"]),
             helper.make_node("Add", ["mm", "bias"], ["y"]),
             helper.make_node("Div", ["y", "sq2"], ["d"]),
             helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["e1"]),
             helper.make_node("Mul", ["y", "e1"], ["g"]),
             helper.make_node("Mul", ["g", "half"], ["out"])]
    inits = {"w": rand(24, 40, seed=1), "bias": rand(40, seed=2),
             "sq2": np.array(np.sqrt(2), np.float32), "one": np.array(1, np.float32),
             "half": np.array(0.5, np.float32)}
    model = make_model(nodes, {"x": (1, 6, 24)}, ["out"], inits)
    _compare(model, {"x": rand(1, 6, 24, seed=3)}, "fully_connected_gelu" if fuse else None)


@pytest.mark.parametrize("lead", [(1, 5, 7), (2, 3, 4, 5)])
def test_linear_on_nhwc_is_one_fully_connected(lead, fuse):
    """ConvNeXt's pointwise MLP on [N, H, W, C] (and a rank-3 [B, T, C] one): MatMul by a
    2-D weight, Add of a [M] bias, an activation, MatMul, Add: two fully_connected kernels with
    the bias inside (no broadcast, no element_add), the interpreter's and onnxruntime's
    numbers, bit for bit on 1, 2 and 3 threads."""
    from onnx_testing import run_onnxruntime

    nodes = [helper.make_node("MatMul", ["x", "w1"], ["m1"]),
             helper.make_node("Add", ["m1", "b1"], ["y1"]),
             helper.make_node("Relu", ["y1"], ["g"]),
             helper.make_node("MatMul", ["g", "w2"], ["m2"]),
             helper.make_node("Add", ["b2", "m2"], ["y"])]
    inits = {"w1": rand(40, 96, seed=1) * 0.2, "b1": rand(96, seed=2),
             "w2": rand(96, 40, seed=3) * 0.2, "b2": rand(40, seed=4)}
    model = make_model(nodes, {"x": (*lead, 40)}, ["y"], inits)
    feeds = {"x": rand(*lead, 40, seed=5)}
    names = _compare(model, feeds, "fully_connected_relu" if fuse else None)
    assert not any(n.split("_")[0] in ("broadcast", "element", "mat", "batched")
                   for n in names), names
    want = run_onnxruntime(model, feeds)[0]
    runs = [glow_mlir.compile(model, "cpu", num_threads=t, cache=False).run(feeds)[0]
            for t in (1, 2, 3)]
    np.testing.assert_allclose(runs[0], want, rtol=1e-5, atol=2e-5)
    assert runs[0].tobytes() == runs[1].tobytes() == runs[2].tobytes()


@pytest.mark.parametrize("lead", [(9,), (1, 5, 7), (2, 3, 4, 5)])
def test_linear_without_bias_fuses_its_activation(lead, fuse):
    """A MatMul by a 2-D weight with no bias (whisper's k_proj, ConvNeXt's zero biases
    folded away) then an activation, on any rank: the same gemm kernel as a
    fully_connected's, the activation applied where each element is final
    (`mat_mul_relu`), the interpreter's and onnxruntime's numbers, the same bits on 1,
    2 and 3 threads."""
    from onnx_testing import run_onnxruntime

    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]),
             helper.make_node("Relu", ["m"], ["y"])]
    model = make_model(nodes, {"x": (*lead, 40)}, ["y"], {"w": rand(40, 72, seed=1)})
    feeds = {"x": rand(*lead, 40, seed=2)}
    names = _compare(model, feeds, "mat_mul_relu" if fuse else None)
    assert not any(n in ("relu", "element_max") for n in names) or not fuse, names
    want = run_onnxruntime(model, feeds)[0]
    runs = [glow_mlir.compile(model, "cpu", num_threads=t, cache=False).run(feeds)[0]
            for t in (1, 2, 3)]
    np.testing.assert_allclose(runs[0], want, rtol=1e-5, atol=2e-5)
    assert runs[0].tobytes() == runs[1].tobytes() == runs[2].tobytes()


def test_fully_connected_residual_and_tanh(fuse):
    """Gemm (fully_connected with its bias) + residual add + tanh."""
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["fc"]),
             helper.make_node("Add", ["fc", "r"], ["a"]),
             helper.make_node("Tanh", ["a"], ["y"])]
    model = make_model(nodes, {"x": (5, 12), "r": (5, 9)}, ["y"],
                       {"w": rand(12, 9, seed=1), "b": rand(9, seed=2)})
    _compare(model, {"x": rand(5, 12, seed=3), "r": rand(5, 9, seed=4)},
             "fully_connected_add_tanh" if fuse else None)


def test_batch_mat_mul_mask_add(fuse):
    """Attention scores plus a mask of the same shape, then a scale."""
    nodes = [helper.make_node("MatMul", ["q", "k"], ["s"]),
             helper.make_node("Add", ["s", "mask"], ["m"]),
             helper.make_node("Mul", ["m", "scale"], ["y"])]
    model = make_model(nodes, {"q": (3, 5, 8), "k": (3, 8, 7), "mask": (3, 5, 7)}, ["y"],
                       {"scale": np.array(0.125, np.float32)})
    _compare(model, {"q": rand(3, 5, 8, seed=1), "k": rand(3, 8, 7, seed=2),
                     "mask": rand(3, 5, 7, seed=3)},
             "batch_mat_mul_add_splat_mul" if fuse else None)


@pytest.mark.parametrize("mask_shape", [(1, 1, 1, 16), (1, 1, 16, 16), (1, 3, 16, 1),
                                        (1, 3, 1, 16)])
def test_scores_read_a_shared_scale_and_mask(mask_shape):
    """Two layers' attention scores, each scaled by one shared splat and plus one shared
    broadcast mask (BERT's exports): the second product's epilogue reads the splat's
    value and the mask's first period (`epilogue.known_content`; a mask repeated along
    leading dims only: [1, 1, 1, S] and [1, 1, S, S]; along the last or with heads
    it reads the broadcast tensor), the interpreter's numbers."""
    h, n, d = 3, 16, 8
    nodes = [helper.make_node("MatMul", ["q1", "k1"], ["s1"]),
             helper.make_node("Mul", ["s1", "scale"], ["m1"]),
             helper.make_node("Add", ["m1", "mask"], ["y1"]),
             helper.make_node("MatMul", ["q2", "k2"], ["s2"]),
             helper.make_node("Mul", ["s2", "scale"], ["m2"]),
             helper.make_node("Add", ["m2", "mask"], ["y2"])]
    shapes = {"q1": (1, h, n, d), "k1": (1, h, d, n), "q2": (1, h, n, d), "k2": (1, h, d, n),
              "mask": mask_shape}
    model = make_model(nodes, shapes, ["y1", "y2"], {"scale": np.array(0.125, np.float32)})
    feeds = {k: rand(*v, seed=i) for i, (k, v) in enumerate(shapes.items())}
    names = _compare(model, feeds, "batch_mat_mul_mul_add")
    assert names.count("batch_mat_mul_mul_add") >= 1, names


@pytest.mark.parametrize("k", [300, 384])
@pytest.mark.parametrize("ctile", [True, False])
def test_large_k_gemm_finishes_after_the_last_block_of_k(fuse, k, ctile, monkeypatch):
    """A product whose k is split in blocks (k x 512 panel of B over 256 KiB, several row
    blocks; k with a remainder block and a multiple of the block): the epilogue runs on
    the panel's rows of C after the last block of k, with and without the tile."""
    from glow_mlir.conversion.glow_ir_to_loops import kernels_matmul

    monkeypatch.setattr(kernels_matmul, "CTILE", ctile)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"]),
             helper.make_node("Add", ["mm", "t"], ["y"]),
             helper.make_node("Relu", ["y"], ["r"])]
    model = make_model(nodes, {"x": (9, k), "t": (9, 520)}, ["r"], {"w": rand(k, 520, seed=1)})
    _compare(model, {"x": rand(9, k, seed=2), "t": rand(9, 520, seed=3)},
             "mat_mul_add_relu" if fuse else None, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- must not fuse


def test_not_fused_when_the_output_is_used_twice():
    """The convolution's output is also a model output: it must be stored as it is."""
    conv, inits, xs, cs = _conv_nodes("im2col")
    nodes = [conv, helper.make_node("Add", ["c", "skip"], ["a"]),
             helper.make_node("Relu", ["a"], ["r"])]
    model = make_model(nodes, {"x": xs, "skip": cs}, ["r", "c"], inits)
    names = _compare(model, {"x": rand(*xs, seed=3), "skip": rand(*cs, seed=4)}, None)
    assert "elementwise" in names, names


def test_not_fused_across_a_broadcast():
    """Add of a per-channel tensor (another shape): the broadcast between is no
    element-wise instruction of the producer's shape."""
    conv, inits, xs, cs = _conv_nodes("im2col")
    nodes = [conv, helper.make_node("Add", ["c", "t"], ["a"])]
    model = make_model(nodes, {"x": xs, "t": (1, cs[1], 1, 1)}, ["a"], inits)
    _compare(model, {"x": rand(*xs, seed=3), "t": rand(1, cs[1], 1, 1, seed=4)}, None)


def test_not_fused_across_another_op():
    """conv, max pool, relu: the pool between ends any epilogue."""
    conv, inits, xs, _ = _conv_nodes("im2col")
    nodes = [conv, helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Sigmoid", ["p"], ["r"])]
    model = make_model(nodes, {"x": xs}, ["r"], inits)
    _compare(model, {"x": rand(*xs, seed=3)}, None)


def test_places_that_clash_are_not_fused():
    """The planned places decide too: an epilogue whose result shares bytes with what
    the producer reads is refused (`_places_allow`), checked on a program where the
    result is placed on the producer's input."""
    from glow_mlir.analysis.epilogue_fusion import epilogues
    from glow_mlir.conversion.glow_ir_to_loops.emitter import Emitter
    from glow_mlir.dialects import glow_ir
    from glow_mlir.frontends.onnx import import_onnx
    from glow_mlir.runtime.compiled_model import optimize_graph
    from glow_mlir.targets.instructions import lower_to_instructions

    conv, inits, xs, _ = _conv_nodes("gemm_1x1")
    nodes = [conv, helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Sigmoid", ["r"], ["y"])]
    module = optimize_graph(import_onnx(make_model(nodes, {"x": xs}, ["y"], inits)), "cpu")
    lower_to_instructions(module)
    fn = next(op for op in module.walk() if isinstance(op, glow_ir.FuncOp))
    ops = list(fn.body.ops)
    (ep,) = epilogues(ops, epilogue.cpu_rules()).values()
    em = Emitter.__new__(Emitter)
    area = object()
    producer_in = ep.producer.operands[1]
    em.places = {v: (area, (1 << 20) * i) for i, v in enumerate(
        {v for op in ops if isinstance(op, glow_ir.InstrOp) for v in op.operands})}
    assert epilogue._places_allow(ep, em)
    em.places[ep.result] = em.places[producer_in]
    assert not epilogue._places_allow(ep, em)


# ---------------------------------------------------------------- random graphs

PRODUCER_FAMILIES = ("convolution", "fully_connected", "mat_mul", "batch_mat_mul",
                     "batched_add", "activation", "binary", "unary")
_FUSED_SEEN: list[bool] = []


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(glow_graphs(families=PRODUCER_FAMILIES, max_ops=6, min_ops=2,
                   fused_activations=True))
def test_random_graphs_with_products_and_element_wise_ops(g):
    """Random graphs of products, convolutions and element-wise ops through the whole cpu
    pipeline (whatever it fuses) against the reference evaluator."""
    want = evaluate(g)
    cpu = glow_mlir.compile(clone_module(g), "cpu", cache=False)
    names = _kernel_names(cpu)
    _FUSED_SEEN.append(any(n.startswith(p + "_") for n in names for p in PRODUCERS))
    assert_outputs_close(g, want, cpu(*g.inputs), what=g.description)


def test_random_graphs_did_fuse():
    """The random graphs above include fused epilogues (the test means something)."""
    if not _FUSED_SEEN:
        pytest.skip("run with the random-graph test")
    assert any(_FUSED_SEEN)
