"""onnxruntime's `com.microsoft` quantized ops (what its quantizer writes: QLinearAdd,
QGemm, DynamicQuantizeMatMul, DynamicQuantizeLSTM, ...) against onnxruntime on the
interpreter and cpu backends. Integer outputs must equal onnxruntime's; float ones match
within float32 rounding."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import glow_mlir
from onnx_testing import make_model, rand, run_onnxruntime

F32 = np.float32
MS = "com.microsoft"
BACKENDS = ["interpreter", "cpu"]


def ms_model(nodes, inputs, outputs, consts=None):
    model = make_model(nodes, inputs, outputs, consts, 17)
    model.opset_import.append(helper.make_opsetid(MS, 1))
    return model


def ms_node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, domain=MS, **attrs)


def check(model, feeds, backend, rtol=1e-5, atol=1e-5, off_by_one: float = 0.0):
    """`off_by_one`: the share of integer outputs allowed to differ by 1, for an op whose
    float intermediate (a window's mean) may land within rounding of a half either way."""
    want = run_onnxruntime(model, feeds)
    got = glow_mlir.compile(model, backend=backend, cache=False, progress=False).run(feeds)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        if w.dtype.kind in "iu":
            diff = np.abs(g.astype(np.int64) - w.astype(np.int64))
            assert diff.max(initial=0) <= (1 if off_by_one else 0), f"output {i}: {g} vs {w}"
            assert np.count_nonzero(diff) <= off_by_one * diff.size, f"output {i}: {diff}"
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"output {i}")


def q8(*shape, seed=0, dtype=np.uint8):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    return rng.integers(info.min, int(info.max) + 1, shape).astype(dtype)


def scalar(v, dtype=F32):
    return np.array(v, dtype)


# ---------------------------------------------------------------------- element-wise


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8], ids=["u8", "i8"])
def test_qlinear_binary(op, dtype, backend):
    a, b = q8(2, 3, 4, seed=1, dtype=dtype), q8(4, seed=2, dtype=dtype)
    consts = {"sa": scalar(0.05), "za": scalar(7, dtype), "sb": scalar(0.11),
              "zb": scalar(-3 if dtype == np.int8 else 200, dtype),
              "sc": scalar(0.09 if op == "QLinearAdd" else 0.4), "zc": scalar(5, dtype)}
    node = ms_node(op, ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], ["c"])
    check(ms_model([node], {"a": a, "b": b}, ["c"], consts), {"a": a, "b": b}, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op,attrs", [("QLinearSigmoid", {}),
                                      ("QLinearLeakyRelu", {"alpha": 0.2})])
def test_qlinear_lookup_ops(op, attrs, backend):
    x = np.arange(256, dtype=np.uint8).reshape(4, 64)  # every value once
    consts = {"sx": scalar(0.06), "zx": scalar(128, np.uint8),
              "sy": scalar(0.03 if attrs else 0.004), "zy": scalar(150 if attrs else 0, np.uint8)}
    node = ms_node(op, ["x", "sx", "zx", "sy", "zy"], ["y"], **attrs)
    check(ms_model([node], {"x": x}, ["y"], consts), {"x": x}, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_qlinear_concat(backend):
    a, b, c = q8(2, 3, seed=3), q8(2, 2, seed=4), q8(2, 1, seed=5)
    consts = {"sy": scalar(0.1), "zy": scalar(100, np.uint8),
              "sa": scalar(0.1), "za": scalar(100, np.uint8),
              "sb": scalar(0.05), "zb": scalar(3, np.uint8),
              "sc": scalar(0.37), "zc": scalar(200, np.uint8)}
    node = ms_node("QLinearConcat", ["sy", "zy", "a", "sa", "za", "b", "sb", "zb", "c", "sc", "zc"],
                   ["y"], axis=1)
    feeds = {"a": a, "b": b, "c": c}
    check(ms_model([node], feeds, ["y"], consts), feeds, backend)


# ---------------------------------------------------------------------- pooling

POOL_PARAMS = {"sx": scalar(0.07), "zx": scalar(20, np.uint8), "sy": scalar(0.03),
               "zy": scalar(9, np.uint8)}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("channels_last", [0, 1])
def test_qlinear_global_average_pool(channels_last, backend):
    x = q8(2, 3, 5, 4, seed=6)
    node = ms_node("QLinearGlobalAveragePool", ["x", "sx", "zx", "sy", "zy"], ["y"],
                   channels_last=channels_last)
    check(ms_model([node], {"x": x}, ["y"], POOL_PARAMS), {"x": x}, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [2, 2], "strides": [2, 2]},
    {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1},
    {"kernel_shape": [3, 2], "pads": [1, 0, 1, 1], "channels_last": 1},
], ids=["plain", "pads_count_include", "channels_last"])
def test_qlinear_average_pool(attrs, backend):
    x = q8(1, 3, 6, 5, seed=7)
    node = ms_node("QLinearAveragePool", ["x", "sx", "zx", "sy", "zy"], ["y"], **attrs)
    # onnxruntime sums the window in float32, the interpreter in float64
    check(ms_model([node], {"x": x}, ["y"], POOL_PARAMS), {"x": x}, backend, off_by_one=0.05)


# ---------------------------------------------------------------------- products


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", ["float_out", "requantized_transB_per_column", "no_bias"])
def test_qgemm(case, backend):
    a = q8(3, 6, seed=8)
    b = q8(4, 6, seed=9, dtype=np.int8) if "transB" in case else q8(6, 4, seed=9, dtype=np.int8)
    consts = {"sa": scalar(0.02), "za": scalar(130, np.uint8),
              "sb": np.array([0.01, 0.03, 0.02, 0.05], F32) if "per_column" in case
              else scalar(0.015),
              "zb": np.zeros(4, np.int8) if "per_column" in case else scalar(0, np.int8),
              "c": np.array([100, -2000, 5, 70], np.int32)}
    names = ["a", "sa", "za", "b", "sb", "zb", "c"]
    attrs = {"alpha": 1.5}
    if case == "no_bias":
        names[6] = ""
        del consts["c"]
    if "requantized" in case:
        consts |= {"sy": scalar(0.2), "zy": scalar(128, np.uint8)}
        names += ["sy", "zy"]
        attrs["transB"] = 1
    feeds = {"a": a, "b": b}
    check(ms_model([ms_node("QGemm", names, ["y"], **attrs)], feeds, ["y"], consts), feeds,
          backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("per_column,bias", [(False, True), (True, False)])
def test_dynamic_quantize_matmul(per_column, bias, backend):
    a = rand(2, 3, 6, seed=10)
    consts = {"b": q8(6, 4, seed=11, dtype=np.int8),
              "sb": np.array([0.01, 0.03, 0.02, 0.05], F32) if per_column else scalar(0.02),
              "zb": np.zeros(4 if per_column else (), np.int8)}
    names = ["a", "b", "sb", "zb"]
    if bias:
        consts["bias"] = rand(4, seed=12)
        names.append("bias")
    node = ms_node("DynamicQuantizeMatMul", names, ["y"])
    check(ms_model([node], {"a": a}, ["y"], consts), {"a": a}, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_matmul_integer_to_float(backend):
    a, b = q8(3, 5, seed=13), q8(5, 4, seed=14, dtype=np.int8)
    consts = {"sa": scalar(0.03), "sb": np.array([0.01, 0.03, 0.02, 0.05], F32),
              "za": scalar(120, np.uint8), "zb": np.array([0, 1, -2, 3], np.int8),
              "bias": rand(4, seed=15)}
    node = ms_node("MatMulIntegerToFloat", ["a", "b", "sa", "sb", "za", "zb", "bias"], ["y"])
    feeds = {"a": a, "b": b}
    check(ms_model([node], feeds, ["y"], consts), feeds, backend)


# ---------------------------------------------------------------------- LSTM

STEPS, INPUT, HIDDEN = 4, 5, 3


def _dq_lstm(direction: str, initial: bool, batch: int = 1):
    dirs = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(16)
    x = rand(STEPS, batch, INPUT, seed=17)
    consts = {
        "w": rng.integers(-128, 128, (dirs, INPUT, 4 * HIDDEN)).astype(np.int8),
        "r": rng.integers(-128, 128, (dirs, HIDDEN, 4 * HIDDEN)).astype(np.int8),
        "b": rand(dirs, 8 * HIDDEN, seed=18) * 0.1,
        "ws": np.full(dirs, 0.01, F32), "wz": np.zeros(dirs, np.int8),
        "rs": (np.arange(dirs * 4 * HIDDEN, dtype=F32).reshape(dirs, -1) + 1) * 1e-3,
        "rz": np.zeros((dirs, 4 * HIDDEN), np.int8),
    }
    names = ["x", "w", "r", "b", "", "", "", "", "ws", "wz", "rs", "rz"]
    feeds = {"x": x}
    if initial:
        feeds["h0"] = rand(dirs, batch, HIDDEN, seed=19)
        feeds["c0"] = rand(dirs, batch, HIDDEN, seed=20)
        names[5:7] = ["h0", "c0"]
    node = ms_node("DynamicQuantizeLSTM", names, ["y", "yh", "yc"], hidden_size=HIDDEN,
                   direction=direction)
    return ms_model([node], feeds, ["y", "yh", "yc"], consts), feeds


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("direction,initial", [("forward", False), ("bidirectional", True)])
def test_dynamic_quantize_lstm(direction, initial, backend):
    model, feeds = _dq_lstm(direction, initial)
    check(model, feeds, backend, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dynamic_quantize_lstm_batch_against_one_onnxruntime_thread(backend):
    """With several threads onnxruntime may split the batch of a step's product into
    chunks quantized apart (its batch_parallel_ path): one thread quantizes the whole
    batch, as the importer does."""
    import onnxruntime as ort

    model, feeds = _dq_lstm("bidirectional", True, batch=3)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    want = ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    got = glow_mlir.compile(model, backend=backend, cache=False, progress=False).run(feeds)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------- errors

_U8 = {"s": scalar(0.1), "z": scalar(128, np.uint8), "zi": scalar(0, np.int8), "s0": scalar(0.0)}


@pytest.mark.parametrize("inputs,message", [
    (["a", "s", "zi", "a", "s", "z", "s", "z"], "zero point of type i8 for a ui8 tensor"),
    (["a", "s", "z", "a", "s", "z", "s", "zi"], "zero point of type i8 for a ui8 tensor"),
    (["a", "s", "z", "ai", "s", "zi", "s", "z"], r"B \(input #3\) is i8, but input #0 is ui8"),
    (["a", "s", "z", "a", "s", "z", "s0", "z"],
     r"the output scale \(input #6 's0'\) is \[0.0\]; it must be finite and nonzero"),
])
@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
def test_qlinear_binary_type_mismatches_and_a_zero_scale_are_import_errors(op, inputs,
                                                                          message):
    """onnxruntime rejects the type mismatches; with output scale 0 its result is whatever
    MLAS makes of a division by zero."""
    from glow_mlir.frontends.onnx import OnnxImportError, import_onnx

    a, ai = q8(4, seed=1), q8(4, seed=2, dtype=np.int8)
    node = ms_node(op, inputs, ["c"], name="q")
    model = ms_model([node], {"a": a, "ai": ai}, ["c"], _U8)
    with pytest.raises(OnnxImportError, match=f"node 'q' .*{message}"):
        import_onnx(model)


@pytest.mark.parametrize("op,inputs,message", [
    ("QLinearSigmoid", ["a", "s", "z", "s", "zi"], "zero point of type i8 for a ui8"),
    ("QLinearSigmoid", ["a", "s", "z", "s0", "z"], r"output scale \(input #3 's0'\)"),
    ("QLinearLeakyRelu", ["a", "s", "z", "s0", "z"], r"output scale \(input #3 's0'\)"),
    ("QLinearConcat", ["s0", "z", "a", "s", "z"], r"output scale \(input #0 's0'\)"),
    ("QLinearConcat", ["s", "zi", "ai", "s", "zi", "a", "s", "z"],
     r"input #5 is ui8, but input #0 is i8"),
    ("QLinearGlobalAveragePool", ["x", "s", "z", "s", "zi"], "zero point of type i8"),
    ("QLinearAveragePool", ["x", "s", "z", "s0", "z"], r"output scale \(input #3 's0'\)"),
])
def test_other_qlinear_ops_check_zero_point_types_and_the_output_scale(op, inputs, message):
    from glow_mlir.frontends.onnx import OnnxImportError, import_onnx

    attrs = {"QLinearConcat": {"axis": 0}, "QLinearAveragePool": {"kernel_shape": [2, 2]}}
    a, ai, x = q8(4, seed=1), q8(4, seed=2, dtype=np.int8), q8(1, 2, 4, 4, seed=3)
    node = ms_node(op, inputs, ["c"], name="q", **attrs.get(op, {}))
    model = ms_model([node], {"a": a, "ai": ai, "x": x}, ["c"], _U8)
    with pytest.raises(OnnxImportError, match=f"node 'q' .*{message}"):
        import_onnx(model)


def test_qgemm_refuses_a_zero_output_scale():
    from glow_mlir.frontends.onnx import OnnxImportError, import_onnx

    a, b = q8(2, 3, seed=1), q8(3, 4, seed=2)
    node = ms_node("QGemm", ["a", "s", "z", "b", "s", "z", "", "s0", "z"], ["c"], name="q")
    model = ms_model([node], {"a": a}, ["c"], {**_U8, "b": b})
    with pytest.raises(OnnxImportError, match=r"node 'q' .*output scale \(input #7 's0'\)"):
        import_onnx(model)
