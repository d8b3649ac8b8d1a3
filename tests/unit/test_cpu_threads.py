"""Threads in the cpu backend (`conversion/glow_ir_to_loops/parallel.py`,
`targets/cpu/thread_pool.py`): the same numbers, bit for bit, for 1, 2 and 3 threads on a
corpus of kernels and small models; the pool under concurrent calls (one model from
several Python threads, two models at once), after a refused call and after fork; bad
thread counts refused."""

from __future__ import annotations

import multiprocessing
import threading

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import glow_mlir
from glow_mlir.backends.cpu import ThreadCountError
from glow_mlir.conversion.glow_ir_to_loops.parallel import PARALLEL_ATTR
from glow_mlir.runtime.compiled_model import InputError

F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, inits=()) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "threads", [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, F, None) for n in outputs],
        [numpy_helper.from_array(v, n) for n, v in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=10)


def _w(*shape, seed=0):
    return (np.random.default_rng(seed + len(shape)).standard_normal(shape) * 0.2
            ).astype(np.float32)


def resnet_block():
    """conv 3x3 (im2col) + relu, conv 1x1 (gemm), residual add, max pool, global pool."""
    return _model([
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"]),
        helper.make_node("Add", ["c2", "r1"], ["s"]),
        helper.make_node("MaxPool", ["s"], ["p"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["p"], ["y"]),
    ], [("x", [1, 16, 28, 28])], ["y", "s"],
        [("w1", _w(32, 16, 3, 3)), ("b1", _w(32)), ("w2", _w(32, 32, 1, 1)), ("b2", _w(32))])


def big_image_conv():
    """3x3 convolution on an image too large for whole-image im2col (bands), and a 7x7
    stride-2 stem (tiles or split columns)."""
    return _model([
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["x", "w7", "b7"], ["d"], pads=[3, 3, 3, 3], strides=[2, 2]),
    ], [("x", [1, 8, 96, 96])], ["c", "d"],
        [("w", _w(16, 8, 3, 3)), ("b", _w(16)), ("w7", _w(16, 8, 7, 7)), ("b7", _w(16))])


def one_row_fc():
    """A fully-connected layer on one image: one row, split by columns."""
    return _model([helper.make_node("Gemm", ["x", "w", "b"], ["y"])], [("x", [1, 1280])],
                  ["y"], [("w", _w(1280, 1000)), ("b", _w(1000))])


def strided_depthwise():
    """Depthwise 3x3 stride-2 convolutions: on a wide image (the direct form) and on a
    narrow one (input columns split by parity first), and a dense strided 5x5 one."""
    return _model([
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2],
                         group=96),
        helper.make_node("Conv", ["x2", "w", "b"], ["d"], pads=[1, 1, 1, 1], strides=[2, 2],
                         group=96),
        helper.make_node("Conv", ["x3", "w5", "b5"], ["e"], pads=[2, 2, 2, 2], strides=[3, 3]),
    ], [("x", [1, 96, 112, 112]), ("x2", [1, 96, 28, 28]), ("x3", [1, 16, 64, 64])],
        ["c", "d", "e"],
        [("w", _w(96, 1, 3, 3)), ("b", _w(96)), ("w5", _w(32, 16, 5, 5)), ("b5", _w(32))])


def one_pixel_conv():
    """Convolutions whose output is one pixel (the matrix product has one column): with
    `reassoc` sums LLVM summed them in another order once the rows were split
    (kernels_matmul.ORDERED_SUMS). Every tap of the first reads the input, so
    `trim-padded-conv-taps` keeps its 3x3 (the second becomes a 1x1 on its one pixel)."""
    return _model([
        helper.make_node("Conv", ["x", "w", "b"], ["c"]),
        helper.make_node("Conv", ["c", "w2", "b2"], ["y"], pads=[1, 1, 1, 1]),
    ], [("x", [1, 256, 3, 3])], ["y"],
        [("w", _w(512, 256, 3, 3)), ("b", _w(512)), ("w2", _w(512, 512, 3, 3)), ("b2", _w(512))])


def small_models():
    """ResNet-18 at 32x32, MobileNet-v1 at 64x64 and a BERT layer of width 256."""
    from glow_mlir import model_zoo

    return {"resnet18_32": model_zoo.resnet18(image=32, classes=10),
            "mobilenet_64": model_zoo.mobilenet_v1(image=64, classes=10, width=0.5),
            "bert_256": model_zoo.bert_layer(seq=64, hidden=256, heads=4, ffn=1024)}


def depthwise():
    return _model([
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], group=64),
        helper.make_node("Clip", ["c", "lo", "hi"], ["y"]),
    ], [("x", [1, 64, 56, 56])], ["y"],
        [("w", _w(64, 1, 3, 3)), ("b", _w(64)), ("lo", np.float32(0.0).reshape(())),
         ("hi", np.float32(6.0).reshape(()))])


def pointwise_projection():
    """MobileNetV2's block at 56x56: a 1x1 expansion (24 -> 144, split by output
    channels), a depthwise 3x3, a 1x1 projection (144 -> 24, split by vector tiles of
    pixels: `kernels_pointwise.split_pixels`) and the residual add."""
    return _model([
        helper.make_node("Conv", ["x", "we", "be"], ["e"]),
        helper.make_node("Relu", ["e"], ["r"]),
        helper.make_node("Conv", ["r", "wd", "bd"], ["d"], pads=[1, 1, 1, 1], group=144),
        helper.make_node("Conv", ["d", "wp", "bp"], ["p"]),
        helper.make_node("Add", ["p", "x"], ["y"]),
    ], [("x", [1, 24, 56, 56])], ["y"],
        [("we", _w(144, 24, 1, 1)), ("be", _w(144)), ("wd", _w(144, 1, 3, 3)),
         ("bd", _w(144)), ("wp", _w(24, 144, 1, 1)), ("bp", _w(24))])


def matmul():
    return _model([
        helper.make_node("Gemm", ["x", "w", "b"], ["g"]),
        helper.make_node("MatMul", ["g", "w2"], ["y"]),
    ], [("x", [130, 256])], ["y"],
        [("w", _w(256, 192)), ("b", _w(192)), ("w2", _w(192, 100))])


def batch_matmul():
    return _model([helper.make_node("MatMul", ["a", "b"], ["y"])],
                  [("a", [12, 128, 64]), ("b", [12, 64, 128])], ["y"])


def layernorm_softmax():
    return _model([
        helper.make_node("LayerNormalization", ["x", "s", "b"], ["n"], axis=-1),
        helper.make_node("Softmax", ["n"], ["y"], axis=-1),
    ], [("x", [384, 768])], ["y"], [("s", _w(768)), ("b", _w(768))])


def pools():
    return _model([
        helper.make_node("MaxPool", ["x"], ["m"], kernel_shape=[3, 3], strides=[2, 2]),
        helper.make_node("AveragePool", ["x"], ["a"], kernel_shape=[2, 2], strides=[2, 2]),
        # the branch pools of Inception-v3 and GoogLeNet (kernels_pool._pool_plane)
        helper.make_node("AveragePool", ["x"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         count_include_pad=1),
        helper.make_node("MaxPool", ["x"], ["q"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        # kernels_pool._avg_pool_rows
        helper.make_node("AveragePool", ["x"], ["r"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1]),
        # SqueezeNet's and AlexNet's small 3x3/2 max pools (kernels_pool_rows.NARROW_ROWS)
        helper.make_node("MaxPool", ["x2"], ["m2"], kernel_shape=[3, 3], strides=[2, 2]),
        helper.make_node("MaxPool", ["m2"], ["m3"], kernel_shape=[3, 3], strides=[2, 2]),
    ], [("x", [1, 64, 112, 112]), ("x2", [1, 64, 27, 27])], ["m", "a", "p", "q", "r", "m3"])


def elementwise():
    return _model([
        helper.make_node("Mul", ["x", "y"], ["m"]),
        helper.make_node("Add", ["m", "x"], ["a"]),
        helper.make_node("Sigmoid", ["a"], ["s"]),
        helper.make_node("Tanh", ["s"], ["t"]),
    ], [("x", [1, 64, 64, 64]), ("y", [1, 64, 64, 64])], ["t"])


# ---------------------------------------------------------------- fused epilogues


def conv_chunks_add_relu():
    """ResNet's block end on a 3x3 convolution whose im2col columns come in chunks of
    input channels (the epilogue after the last chunk), and on a large image (bands)."""
    return _model([
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c", "skip"], ["a"]),
        helper.make_node("Relu", ["a"], ["y"]),
        helper.make_node("Conv", ["x2", "w2", "b2"], ["d"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["d"], ["y2"]),
    ], [("x", [1, 64, 32, 32]), ("skip", [1, 64, 32, 32]), ("x2", [1, 8, 96, 96])],
        ["y", "y2"],
        [("w", _w(64, 64, 3, 3)), ("b", _w(64)), ("w2", _w(16, 8, 3, 3)), ("b2", _w(16))])


def linear_bias_tanh():
    """BERT's linear layer: a product on a view of [1, 128, 256], its bias added, then an
    activation; and a product with blocks of k (the epilogue after the last block)."""
    return _model([
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Add", ["m", "b"], ["a"]),
        helper.make_node("Tanh", ["a"], ["y"]),
        helper.make_node("MatMul", ["x2", "w2"], ["m2"]),
        helper.make_node("Add", ["m2", "skip"], ["a2"]),
        helper.make_node("Sigmoid", ["a2"], ["y2"]),
    ], [("x", [1, 128, 256]), ("x2", [64, 768]), ("skip", [64, 256])], ["y", "y2"],
        [("w", _w(256, 512)), ("b", _w(512)), ("w2", _w(768, 256))])


def one_row_fc_sigmoid():
    """A fully-connected layer on one image (split by columns), a residual added, then
    an activation."""
    return _model([helper.make_node("Gemm", ["x", "w", "b"], ["g"]),
                   helper.make_node("Add", ["g", "r"], ["a"]),
                   helper.make_node("Sigmoid", ["a"], ["y"])],
                  [("x", [1, 1280]), ("r", [1, 1000])], ["y"],
                  [("w", _w(1280, 1000)), ("b", _w(1000))])


def attention_scores():
    """The attention scores: batched product, mask added, scaled by a constant."""
    return _model([
        helper.make_node("MatMul", ["q", "k"], ["s"]),
        helper.make_node("Add", ["s", "mask"], ["m"]),
        helper.make_node("Mul", ["m", "scale"], ["y"]),
    ], [("q", [12, 128, 64]), ("k", [12, 64, 128]), ("mask", [12, 128, 128])], ["y"],
        [("scale", np.float32(0.125).reshape(()))])


FUSED = {f.__name__: f for f in (conv_chunks_add_relu, linear_bias_tanh,
                                 one_row_fc_sigmoid, attention_scores)}
PRODUCERS = ("convolution", "fully_connected", "mat_mul", "batch_mat_mul")


def _fused_kernels(model) -> list[str]:
    """The kernel functions computing a producer and its epilogue
    (`main_k3_convolution_add_relu`)."""
    from xdsl.dialects import func

    names = [f.sym_name.data.split("_k", 1)[1].split("_", 1)[1]
             for f in model.module.walk()
             if isinstance(f, func.FuncOp) and "glow.kernel" in f.attributes]
    return [n for n in names if any(n.startswith(p + "_") for p in PRODUCERS)]


@pytest.mark.parametrize("name", sorted(FUSED))
def test_fused_epilogues_give_the_same_bits_on_any_thread_count(name):
    onnx_model = FUSED[name]()
    outputs = {}
    for threads in (1, 2, 3):
        model = glow_mlir.compile(onnx_model, num_threads=threads, cache=False)
        assert _fused_kernels(model), "no epilogue was fused"
        if threads > 1:
            assert _parallel_loops(model) > 0, "no fused kernel was split"
        outputs[threads] = model(*_inputs(model))
    for threads in (2, 3):
        for got, want in zip(outputs[threads], outputs[1]):
            assert got.tobytes() == want.tobytes(), f"{name}: {threads} threads differ"


@pytest.mark.parametrize("split", ["pixels", "channels", "none"])
def test_im2col_splits_give_the_same_bits(split, monkeypatch):
    """Each way of sharing an im2col convolution (`kernels_conv.IM2COL_SPLIT`: bands of
    output rows, blocks of output channels, or the filling and the product split
    separately) on 2 and 3 threads gives the one-thread bits: whole-image columns in one
    chunk and in chunks of input channels, with a fused epilogue, and large images by
    bands."""
    from glow_mlir.conversion.glow_ir_to_loops import kernels_conv

    outputs = {}
    for threads in (1, 2, 3):
        monkeypatch.setattr(kernels_conv, "IM2COL_SPLIT", split)
        model = glow_mlir.compile(conv_chunks_add_relu(), num_threads=threads, cache=False)
        assert threads == 1 or _parallel_loops(model) > 0
        outputs[threads] = model(*_inputs(model))
    for threads in (2, 3):
        for got, want in zip(outputs[threads], outputs[1]):
            assert got.tobytes() == want.tobytes(), f"{split}: {threads} threads differ"


def short_rows_convs():
    """Inception-v3's short rows (`short_rows.short_product`): a 3x3 on a 5x5 image
    (25 columns), in chunks of input channels (IM2COL_BYTES set by the test) with a
    residual add, a 1x7 on a 12x12 one (144 columns), and a 5x5 on a 25x25 one (625
    columns: the last 49 as `short_rows.tail_rows`)."""
    return _model([
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c", "skip"], ["a"]),
        helper.make_node("Relu", ["a"], ["y"]),
        helper.make_node("Conv", ["x2", "w2", "b2"], ["d"], pads=[0, 3, 0, 3]),
        helper.make_node("Relu", ["d"], ["y2"]),
        helper.make_node("Conv", ["x3", "w3", "b3"], ["e"], pads=[2, 2, 2, 2]),
        helper.make_node("Relu", ["e"], ["y3"]),
    ], [("x", [1, 96, 5, 5]), ("skip", [1, 200, 5, 5]), ("x2", [1, 40, 12, 12]),
        ("x3", [1, 12, 25, 25])], ["y", "y2", "y3"],
        [("w", _w(200, 96, 3, 3)), ("b", _w(200)), ("w2", _w(52, 40, 1, 7)), ("b2", _w(52)),
         ("w3", _w(24, 12, 5, 5)), ("b3", _w(24))])


@pytest.mark.parametrize("split", ["pixels", "channels", "none"])
def test_short_rows_give_the_same_bits(split, monkeypatch, record_calls):
    """The short-row products (`short_rows.short_product`), split over 2 and 3 threads
    each way of IM2COL_SPLIT (with "none" they split their own rows), give the one-thread
    bits."""
    from glow_mlir.conversion.glow_ir_to_loops import kernels_conv, short_rows

    monkeypatch.setattr(kernels_conv, "IM2COL_SPLIT", split)
    monkeypatch.setattr(kernels_conv, "IM2COL_BYTES", 25 * 640 * 4)  # 2, 4, 12 chunks
    seen = record_calls(short_rows, "short_product", lambda *a: a[3])
    outputs = {}
    for threads in (1, 2, 3):
        model = glow_mlir.compile(short_rows_convs(), num_threads=threads, cache=False)
        assert threads == 1 or _parallel_loops(model) > 0
        outputs[threads] = model(*_inputs(model))
    assert seen[:3] == [25, 144, 49]  # one thread: whole rows, the 25x25's last columns
    if split == "pixels":  # bands of output rows: 2 + 3 rows of 5, 6 rows of 12
        assert {10, 15, 72} <= set(seen)
    for threads in (2, 3):
        for got, want in zip(outputs[threads], outputs[1]):
            assert got.tobytes() == want.tobytes(), f"{split}: {threads} threads differ"


def test_im2col_split_auto_picks_by_pixels_per_thread(monkeypatch):
    """`auto`: bands of rows when each thread gets IM2COL_MIN_BAND pixels (a 3x3 at
    32x32 on 2 threads: 512), output channels otherwise (one output row)."""
    from glow_mlir.conversion.glow_ir_to_loops import kernels_conv

    class Em:
        threads, parallel_depth = 2, 0

    em = Em()
    assert kernels_conv._im2col_split(em, 64, 32, 32, 10**8) == ("pixels", 16)
    assert kernels_conv._im2col_split(em, 64, 7, 7, 10**8) == ("channels", 32)
    assert kernels_conv._im2col_split(em, 64, 1, 1, 10**8) == ("channels", 32)
    assert kernels_conv._im2col_split(em, 64, 32, 32, 1000) == (None, 0)  # too small
    monkeypatch.setattr(kernels_conv, "IM2COL_SPLIT", "pixels")
    assert kernels_conv._im2col_split(em, 64, 7, 7, 10**8) == ("pixels", 4)
    monkeypatch.setattr(kernels_conv, "IM2COL_SPLIT", "none")
    assert kernels_conv._im2col_split(em, 64, 32, 32, 10**8) == (None, 0)


CORPUS = {f.__name__: f for f in (resnet_block, big_image_conv, one_pixel_conv, depthwise,
                                  one_row_fc, strided_depthwise, pointwise_projection,
                                  matmul, batch_matmul, layernorm_softmax, pools,
                                  elementwise)}
CORPUS.update({name: (lambda name=name: small_models()[name]) for name in small_models()})


def _inputs(model, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(model.input_shapes[n]).astype(model.input_dtypes[n])
            if model.input_dtypes[n].kind == "f"
            else np.ones(model.input_shapes[n], model.input_dtypes[n])
            for n in model.input_names]


def _parallel_loops(model) -> int:
    return sum(PARALLEL_ATTR in op.attributes for op in model.module.walk())


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_thread_counts_give_the_same_bits(name):
    onnx_model = CORPUS[name]()
    outputs = {}
    for threads in (1, 2, 3):
        model = glow_mlir.compile(onnx_model, num_threads=threads, cache=False)
        if threads == 1:
            assert _parallel_loops(model) == 0  # the one-thread code is the serial code
        else:
            assert _parallel_loops(model) > 0, "no kernel of the corpus model was split"
        outputs[threads] = model(*_inputs(model))
    for threads in (2, 3):
        for got, want in zip(outputs[threads], outputs[1]):
            assert got.tobytes() == want.tobytes(), f"{name}: {threads} threads differ"


def test_projections_split_by_pixels_expansions_by_channels(monkeypatch):
    """The narrowing 1x1 (144 -> 24) splits its 49 vector tiles of pixels, the widening one
    (24 -> 144) its output channels (`split_pixels`); the same bits either way."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro, kernels_pointwise

    if gemm_micro.width() != 64 or 56 * 56 % gemm_micro.width():
        pytest.skip("vector tiles of another width")
    assert kernels_pointwise.split_pixels(56 * 56, 144, 24, helper_f32())
    assert not kernels_pointwise.split_pixels(56 * 56, 24, 144, helper_f32())
    assert not kernels_pointwise.split_pixels(28 * 28, 144, 24, helper_f32())  # no vector tiles
    proto = pointwise_projection()
    x = np.random.default_rng(3).standard_normal((1, 24, 56, 56)).astype(np.float32)
    want = glow_mlir.compile(proto, num_threads=1, cache=False)(x)[0]
    real = kernels_pointwise.parallel_ranges
    for on in (True, False):
        splits: list[tuple[int, int]] = []  # (what is split, its granule) per 1x1

        def spy(em, total, granule, *args, splits=splits, **kw):
            splits.append((total, granule))
            return real(em, total, granule, *args, **kw)

        monkeypatch.setattr(kernels_pointwise, "parallel_ranges", spy)
        monkeypatch.setattr(kernels_pointwise, "SPLIT_PIXELS", on)
        got = glow_mlir.compile(proto, num_threads=3, cache=False)(x)[0]
        rows = kernels_pointwise.ROWS
        assert sorted(splits) == sorted([(144, rows), (49, 1) if on else (24, rows)])
        assert got.tobytes() == want.tobytes()


def test_unpaired_expansions_split_by_pixels(monkeypatch):
    """A vector-tiled 1x1 expansion not paired with a depthwise convolution (8 -> 64 at
    64x64) splits its 64 vector tiles of pixels on 2 and 3 threads, like the projections
    (`split_pixels`); paired, by output channels (`conv_pairs`); the bits of one thread."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro, kernels_pointwise

    if gemm_micro.width() != 64:
        pytest.skip("vector tiles of another width")
    f32 = helper_f32()
    for threads in (2, 3):  # MobileNetV2's 16 -> 96 at 112x112
        assert kernels_pointwise.split_pixels(112 * 112, 16, 96, f32, threads)
        assert not kernels_pointwise.split_pixels(112 * 112, 16, 96, f32, threads, paired=True)
        assert kernels_pointwise.split_pixels(112 * 112, 96, 16, f32, threads, paired=True)
    assert not kernels_pointwise.split_pixels(112 * 112, 16, 96, f32)  # one thread
    proto = _model([helper.make_node("Conv", ["x", "w", "b"], ["y"])], [("x", [1, 8, 64, 64])],
                   ["y"], [("w", _w(64, 8, 1, 1)), ("b", _w(64))])
    x = np.random.default_rng(6).standard_normal((1, 8, 64, 64)).astype(np.float32)
    want = glow_mlir.compile(proto, num_threads=1, cache=False)(x)[0]
    real = kernels_pointwise.parallel_ranges
    for threads in (2, 3):
        splits: list[tuple[int, int]] = []

        def spy(em, total, granule, *args, splits=splits, **kw):
            splits.append((total, granule))
            return real(em, total, granule, *args, **kw)

        monkeypatch.setattr(kernels_pointwise, "parallel_ranges", spy)
        got = glow_mlir.compile(proto, num_threads=threads, cache=False)(x)[0]
        assert splits == [(64, 1)]
        assert got.tobytes() == want.tobytes(), threads


def expansion_depthwise(c: int, o: int, hw: int):
    """A 1x1 expansion (c -> o) + clip, a depthwise 3x3 + clip reading it, and a 1x1
    projection back to c with the residual add (MobileNetV2's block)."""
    clip = [("lo", np.float32(0.0).reshape(())), ("hi", np.float32(6.0).reshape(()))]
    return _model([
        helper.make_node("Conv", ["x", "we", "be"], ["e"]),
        helper.make_node("Clip", ["e", "lo", "hi"], ["r"]),
        helper.make_node("Conv", ["r", "wd", "bd"], ["d"], pads=[1, 1, 1, 1], group=o),
        helper.make_node("Clip", ["d", "lo", "hi"], ["s"]),
        helper.make_node("Conv", ["s", "wp", "bp"], ["p"]),
        helper.make_node("Add", ["p", "x"], ["y"]),
    ], [("x", [1, c, hw, hw])], ["y"],
        [("we", _w(o, c, 1, 1)), ("be", _w(o)), ("wd", _w(o, 1, 3, 3)), ("bd", _w(o)),
         ("wp", _w(c, o, 1, 1)), ("bp", _w(c)), *clip])


def _kernel_names(model) -> list[str]:
    from xdsl.dialects import func

    return [f.sym_name.data for f in model.module.walk()
            if isinstance(f, func.FuncOp) and "glow.kernel" in f.attributes]


@pytest.mark.parametrize("c,o,hw", [(24, 144, 56), (32, 88, 28), (64, 384, 14)])
def test_expansion_and_depthwise_share_one_region(c, o, hw, monkeypatch):
    """The expansion and the depthwise convolution after it run in one kernel function
    with one parallel loop (`conv_pairs`) on 2 and 3 threads, with groups of equal and
    unequal sizes (88 channels: 11 blocks of 8), and give the bits of one thread and of
    the two kernels split apart (PAIRS off)."""
    from glow_mlir.conversion.glow_ir_to_loops import conv_pairs

    proto = expansion_depthwise(c, o, hw)
    one = glow_mlir.compile(proto, num_threads=1, cache=False)
    assert not any("_then_" in n for n in _kernel_names(one))
    want = one(*_inputs(one))
    for threads in (2, 3):
        for on in (True, False):
            monkeypatch.setattr(conv_pairs, "PAIRS", on)
            model = glow_mlir.compile(proto, num_threads=threads, cache=False)
            pairs = [n for n in _kernel_names(model) if "_then_" in n]
            assert len(pairs) == (1 if on else 0), _kernel_names(model)
            got = model(*_inputs(model))
            for g, w in zip(got, want):
                assert g.tobytes() == w.tobytes(), f"{threads} threads, pairs {on} differ"


def test_pairs_only_where_the_expansion_part_fits(monkeypatch):
    """`conv_pairs.MAX_PART_BYTES`: MobileNetV2's 16->96 and MobileNet-v1's 32->64 at
    112x112 (2.4 and 1.6 MB a thread of two) split apart, their 56x56 pairs (0.8-0.9 MB)
    stay; 0 lifts the limit. An 88-channel 28x28 expansion (276 KB) under a 100 KB limit:
    no pair on 2 threads (138 KB a thread), a pair on 3 (92 KB); the one-thread bits."""
    from glow_mlir.conversion.glow_ir_to_loops import conv_pairs

    assert not conv_pairs.fits(96, 112 * 112, 2) and not conv_pairs.fits(64, 112 * 112, 2)
    assert conv_pairs.fits(144, 56 * 56, 2) and conv_pairs.fits(128, 56 * 56, 2)
    monkeypatch.setattr(conv_pairs, "MAX_PART_BYTES", 0)
    assert conv_pairs.fits(96, 112 * 112, 2)
    proto = expansion_depthwise(32, 88, 28)
    one = glow_mlir.compile(proto, num_threads=1, cache=False)
    want = one(*_inputs(one))
    monkeypatch.setattr(conv_pairs, "MAX_PART_BYTES", 100_000)
    for threads, paired in ((2, False), (3, True)):
        model = glow_mlir.compile(proto, num_threads=threads, cache=False)
        assert any("_then_" in n for n in _kernel_names(model)) == paired, threads
        for g, w in zip(model(*_inputs(model)), want):
            assert g.tobytes() == w.tobytes(), threads


def test_pairs_keep_the_expansion_input_live(monkeypatch):
    """MobileNetV2's block at 112x112 (here 16 -> 48 at 72x72, past the depthwise kernel's
    MAX_WIDTH): the stride-2 depthwise convolution (the direct form, its channels split
    first) pairs with its expansion on 2 and 3 threads; the expansion's input stays live
    through the depthwise convolution (`conv_pairs.keep_reads_live`: its dealloc moves
    after it, so the plan cannot put the depthwise output there, as it did in
    MobileNetV2), not with KEEP_LIVE off; the bits of one thread either way."""
    from glow_mlir.conversion.glow_ir_to_loops import conv_pairs
    from glow_mlir.dialects import glow_ir

    clip = [("lo", np.float32(0.0).reshape(())), ("hi", np.float32(6.0).reshape(()))]
    proto = _model([
        helper.make_node("Conv", ["x", "w0", "b0"], ["a"]),
        helper.make_node("Conv", ["a", "we", "be"], ["e"]),
        helper.make_node("Clip", ["e", "lo", "hi"], ["r"]),
        helper.make_node("Conv", ["r", "wd", "bd"], ["d"], pads=[1, 1, 1, 1], group=48,
                         strides=[2, 2]),
        helper.make_node("Clip", ["d", "lo", "hi"], ["y"]),
    ], [("x", [1, 8, 72, 72])], ["y"],
        [("w0", _w(16, 8, 1, 1)), ("b0", _w(16)), ("we", _w(48, 16, 1, 1)), ("be", _w(48)),
         ("wd", _w(48, 1, 3, 3)), ("bd", _w(48)), *clip])
    one = glow_mlir.compile(proto, num_threads=1, cache=False)
    want = one(*_inputs(one))[0]
    real = conv_pairs.keep_reads_live
    for threads, keep in ((2, True), (3, True), (2, False)):
        lives: list[bool] = []

        def spy(fn, em, threads_, lives=lives):
            moved = real(fn, em, threads_)
            ops = list(fn.body.ops)
            convs = [i for i, op in enumerate(ops) if isinstance(op, glow_ir.ConvolutionOp)]
            a = glow_ir.root_buffer(ops[convs[1]].operands[1])
            freed = next(i for i, op in enumerate(ops)
                         if isinstance(op, glow_ir.DeallocActivationOp) and op.buffer is a)
            lives.append(moved and freed > convs[2])
            return moved

        monkeypatch.setattr(conv_pairs, "KEEP_LIVE", keep)
        monkeypatch.setattr(conv_pairs, "keep_reads_live", spy)
        model = glow_mlir.compile(proto, num_threads=threads, cache=False)
        assert lives == [keep]
        assert [n for n in _kernel_names(model) if "_then_" in n], _kernel_names(model)
        got = model(*_inputs(model))[0]
        assert got.tobytes() == want.tobytes(), (threads, keep)


def test_column_split_weighs_the_scalar_columns(monkeypatch):
    """A one-row product splits its columns so that the part holding the columns past the
    micro-kernel's last whole vector (scalar loops, SCALAR_COLUMN_COST each) costs no more
    than the others (`parallel.balanced_size`); the same bits whatever the split."""
    from glow_mlir.conversion.glow_ir_to_loops import gemm_micro, kernels_matmul, parallel

    assert parallel.balanced_size(1000, 64, 2, 1.0) == 512  # equal parts, the rest last
    assert parallel.balanced_size(1000, 64, 2, 9.0) == 640  # 640 | 320 + 40 x 9
    for groups in (2, 3, 4, 7):
        for cost in (1.0, 3.0, 9.0, 40.0):
            per = parallel.balanced_size(1000, 64, groups, cost)
            assert per % 64 == 0 and 2 <= -(-1000 // per) <= groups
    assert kernels_matmul.tail_cost(1024, True) == 1.0
    assert kernels_matmul.tail_cost(1000, False) == 1.0
    if gemm_micro.width() == 64:  # 40 left: 2 vectors and 8 scalar columns; all vectors
        # with the weights in zero-padded panels (`kernels_matmul.vector_columns`)
        cost = kernels_matmul.SCALAR_COLUMN_COST
        assert kernels_matmul.tail_cost(1000, True) == (32 + 8 * cost) / 40
        assert kernels_matmul.tail_cost(1000, True, panels=64) == 1.0
    proto = one_row_fc()
    x = np.random.default_rng(4).standard_normal((1, 1280)).astype(np.float32)
    want = glow_mlir.compile(proto, num_threads=1, cache=False)(x)[0]
    for cost in (1.0, 9.0, 40.0):
        monkeypatch.setattr(kernels_matmul, "SCALAR_COLUMN_COST", cost)
        for threads in (2, 3):
            got = glow_mlir.compile(proto, num_threads=threads, cache=False)(x)[0]
            assert got.tobytes() == want.tobytes(), (cost, threads)


@pytest.mark.parametrize("k,m,split", [(512, 1000, True), (96, 200, False)])
def test_one_image_head_splits_by_the_weights_it_streams(k, m, split):
    """A fully-connected layer on one image counts the bytes of weights it streams
    (`kernels_matmul.column_work`): ResNet-18's 512 -> 1000 head (512k multiply-adds,
    2 MB of weights) splits its columns on 2 and 3 threads, a 96 -> 200 one stays serial;
    the bits of one thread either way."""
    from glow_mlir.conversion.glow_ir_to_loops import kernels_matmul, parallel

    assert (kernels_matmul.column_work(1, k, m) >= parallel.PARALLEL_MIN_WORK) == split
    assert (1 * k * m >= parallel.PARALLEL_MIN_WORK) is False  # the multiply-adds alone
    proto = _model([helper.make_node("Gemm", ["x", "w", "b"], ["y"])], [("x", [1, k])],
                   ["y"], [("w", _w(k, m)), ("b", _w(m))])
    x = np.random.default_rng(5).standard_normal((1, k)).astype(np.float32)
    want = glow_mlir.compile(proto, num_threads=1, cache=False)(x)[0]
    for threads in (2, 3):
        model = glow_mlir.compile(proto, num_threads=threads, cache=False)
        assert _parallel_loops(model) == (1 if split else 0)
        assert model(x)[0].tobytes() == want.tobytes(), threads


def helper_f32():
    from xdsl.dialects.builtin import f32

    return f32


def test_resnet18_threads_bit_for_bit():
    from glow_mlir import model_zoo

    onnx_model = model_zoo.resnet18()
    one = glow_mlir.compile(onnx_model, num_threads=1)
    two = glow_mlir.compile(onnx_model, num_threads=2)
    assert _parallel_loops(two) > 10
    x = _inputs(one)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(one(*x), two(*x)))


def test_one_thread_llvm_ir_calls_no_pool():
    from glow_mlir.targets.cpu.jit import unoptimized_ir

    one = glow_mlir.compile(matmul(), num_threads=1, cache=False)
    two = glow_mlir.compile(matmul(), num_threads=2, cache=False)
    assert "glow_parallel_for" not in unoptimized_ir(one.module)
    assert "glow_parallel_for" in unoptimized_ir(two.module)


def _sequential_then_hammer(models, threads=4, calls=15):
    inputs = [[_inputs(m, seed) for seed in range(threads)] for m in models]
    expected = [[m(*x) for x in xs] for m, xs in zip(models, inputs)]
    wrong, errors = [], []
    barrier = threading.Barrier(threads)

    def work(t):
        barrier.wait()
        for c in range(calls):
            k = (t + c) % len(models)
            try:
                got = models[k](*inputs[k][t])
            except Exception as err:  # noqa: BLE001 - reported
                errors.append(repr(err))
                continue
            if not all(g.tobytes() == e.tobytes() for g, e in zip(got, expected[k][t])):
                wrong.append((t, c))

    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join(timeout=300)
    assert not any(th.is_alive() for th in pool), "deadlock"
    return wrong, errors


def test_concurrent_calls_of_one_model_share_the_pool():
    model = glow_mlir.compile(resnet_block(), num_threads=2, cache=False)
    assert _parallel_loops(model) > 0
    assert _sequential_then_hammer([model]) == ([], [])


def test_two_models_at_once():
    a = glow_mlir.compile(matmul(), num_threads=2, cache=False)
    b = glow_mlir.compile(layernorm_softmax(), num_threads=3, cache=False)
    assert _sequential_then_hammer([a, b]) == ([], [])


def test_a_refused_call_leaves_the_pool_working():
    model = glow_mlir.compile(matmul(), num_threads=2, cache=False)
    x = _inputs(model)
    want = model(*x)
    with pytest.raises(InputError):
        model(np.zeros((3, 3), np.float32))
    assert all(a.tobytes() == b.tobytes() for a, b in zip(model(*x), want))


def _child(model, x, queue):
    queue.put([o.tobytes() for o in model(*x)])


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="needs fork")
def test_the_pool_restarts_in_a_forked_child():
    model = glow_mlir.compile(matmul(), num_threads=2, cache=False)
    x = _inputs(model)
    want = [o.tobytes() for o in model(*x)]  # the pool's threads run in this process
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child, args=(model, x, queue))
    child.start()
    got = queue.get(timeout=120)
    child.join(timeout=60)
    assert got == want


def test_the_pool_wakes_threads_with_its_mutex_released():
    """Every condition-variable wake-up in the pool's runtime comes after the mutex is
    released (a thread woken while it is held sleeps again on the mutex: a second wake-up
    per parallel region, ~2 us of each thread's CPU time on this 2-vCPU guest)."""
    from glow_mlir.targets.cpu.thread_pool import runtime_ir

    lines = [line.strip() for line in runtime_ir("x86_64-unknown-linux-gnu").splitlines()]
    wakes = [i for i, line in enumerate(lines)
             if "@pthread_cond_broadcast(" in line or "@pthread_cond_signal(" in line]
    assert len(wakes) >= 3
    for i in wakes:
        j = i - 1
        while not any(f"@pthread_mutex_{op}(" in lines[j] for op in ("lock", "unlock")):
            assert not lines[j].endswith(":"), f"no mutex call before line {i} in its block"
            j -= 1
        assert "@pthread_mutex_unlock(" in lines[j], lines[i]


@pytest.mark.parametrize("bad", [0, -1, 257, 2.5, "2", True])
def test_bad_thread_counts_are_refused(bad):
    with pytest.raises(ThreadCountError, match="num_threads"):
        glow_mlir.compile(matmul(), num_threads=bad, cache=False)


def test_more_threads_than_cores_warns(monkeypatch):
    """Right but slow (every parallel region waits for threads that wait for a core): a
    warning, not an error (a saved model or bundle may run on a larger machine)."""
    import warnings

    from glow_mlir.backends import cpu

    monkeypatch.setattr(cpu, "default_threads", lambda: 2)
    with pytest.warns(cpu.OversubscribedWarning, match="3 threads are more than the 2 "
                                                       "cores this process may run on"):
        model = glow_mlir.compile(matmul(), num_threads=3, cache=False)
    assert model.num_threads == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error", cpu.OversubscribedWarning)
        assert glow_mlir.compile(matmul(), cache=False).num_threads == 2  # the default


def test_default_is_the_cores_of_the_process():
    import os

    from glow_mlir.backends import get_backend

    cpu = get_backend("cpu")
    cores = len(os.sched_getaffinity(0))
    assert cpu.keyed_options(cpu.check_options({}))["num_threads"] == cores
    assert cpu.keyed_options(cpu.check_options({"num_threads": 3}))["num_threads"] == 3
    assert cpu.keyed_options(cpu.check_options({"num_threads": None}))["num_threads"] == cores
    assert "num_threads" not in get_backend("interpreter").keyed_options({})



def _tool(*args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                          check=False)


def test_glow_compile_threads(tmp_path):
    path = tmp_path / "mm.onnx"
    onnx.save(matmul(), str(path))
    r = _tool("glow_mlir.tools.glow_compile", str(path), "--emit", "llvm-ir", "--threads", "2")
    assert r.returncode == 0, r.stderr
    assert "@glow_parallel_for" in r.stdout
    r = _tool("glow_mlir.tools.glow_compile", str(path), "--emit", "llvm-ir")
    assert r.returncode == 0 and "@glow_parallel_for" not in r.stdout  # 1 by default
    r = _tool("glow_mlir.tools.glow_compile", str(path), "--emit", "llvm", "--threads", "2")
    assert r.returncode == 1 and "--emit llvm-ir shows the threaded code" in r.stderr
    r = _tool("glow_mlir.tools.glow_compile", str(path), "--emit-bundle", str(tmp_path / "b"),
              "--network-name", "mm", "--threads", "2")
    assert r.returncode == 0, r.stderr
    assert "#define MM_NUM_THREADS  2" in (tmp_path / "b" / "mm.h").read_text()
    r = _tool("glow_mlir.tools.glow_compile", str(path), "--save", str(tmp_path / "m.glow"),
              "--threads", "3")
    assert r.returncode == 0, r.stderr
    from glow_mlir.backends.cpu import default_threads

    more = "glow-compile: warning: 3 threads are more than the"  # one line, no source path
    assert (more in r.stderr) == (default_threads() < 3), r.stderr
    r = _tool("glow_mlir.tools.glow_run", str(tmp_path / "m.glow"), "--threads", "2")
    assert r.returncode == 1 and "drop --threads" in r.stderr  # compiled already
    saved = glow_mlir.load(tmp_path / "m.glow")
    assert saved.num_threads == 3
    fresh = glow_mlir.compile(matmul(), num_threads=1, cache=False)
    x = _inputs(fresh)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(saved(*x), fresh(*x)))
