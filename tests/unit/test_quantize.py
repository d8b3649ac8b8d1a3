"""Profile-guided quantization from Python: the schemas' scales and offsets, KL
calibration, QuantizationConfig's checks, keep_float, and the accuracy of a quantized
LeNet against its float model."""

from __future__ import annotations

import math

import numpy as np
import pytest

import glow_mlir
from glow_mlir import model_zoo
from glow_mlir.analysis.quant_params import Schema, choose_params, kl_range
from glow_mlir.ir.errors import UserError
from glow_mlir.semantics.numerics import quantize


def _qt(scale, offset):
    from xdsl.dialects.builtin import i8

    from glow_mlir.dialects.glow_ops.types import QuantizedType

    return QuantizedType(i8, scale, offset)


@pytest.mark.parametrize("lo,hi", [(-1.0, 3.0), (0.0, 6.0), (-5.0, -1.0), (-2.5, 2.5)])
def test_asymmetric_maps_the_range_onto_all_steps_and_zero_exactly(lo, hi):
    scale, offset = choose_params(lo, hi, Schema.ASYMMETRIC)
    q = quantize(np.array([min(lo, 0), max(hi, 0), 0.0], np.float32), _qt(scale, offset))
    assert q[0] <= -127 and q[1] >= 126  # the ends reach the ends of int8
    assert q[2] == offset  # real 0 is a stored integer
    assert scale == pytest.approx((max(hi, 0) - min(lo, 0)) / 255, rel=1e-6)


def test_symmetric_schemas():
    s, z = choose_params(-1.0, 3.0, Schema.SYMMETRIC)
    assert z == 0 and s == pytest.approx(3.0 / 127, rel=1e-6)
    s, z = choose_params(-4.0, 1.0, Schema.SYMMETRIC)
    assert z == 0 and s == pytest.approx(4.0 / 128, rel=1e-6)
    # symmetric with uint8: a range without negatives uses all 256 steps from 0
    s, z = choose_params(0.0, 6.0, Schema.SYMMETRIC_UINT8)
    assert z == -128 and s == pytest.approx(6.0 / 255, rel=1e-6)
    assert choose_params(-1.0, 6.0, Schema.SYMMETRIC_UINT8) == choose_params(-1.0, 6.0,
                                                                             Schema.SYMMETRIC)
    s, z = choose_params(-1.0, 3.0, Schema.SYMMETRIC_POW2)
    assert z == 0 and math.log2(s) == int(math.log2(s)) and s >= 3.0 / 127
    assert choose_params(0.0, 0.0, Schema.ASYMMETRIC)[0] == pytest.approx(0.1)


def test_kl_clips_outliers_and_keeps_a_plain_range():
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.standard_normal(200_000), [40.0, -35.0]])
    hist, edges = np.histogram(x, bins=2048, range=(x.min(), x.max()))
    lo, hi = kl_range(hist, float(x.min()), float(x.max()), symmetric=True)
    assert -20 < lo < -2 and 2 < hi < 20  # the two outliers are clipped
    assert lo == pytest.approx(-hi, rel=1e-3)
    lo, hi = kl_range(hist, float(x.min()), float(x.max()), symmetric=False)
    assert x.min() <= lo < -2 and 2 < hi <= x.max() and (hi - lo) < 60
    u = rng.uniform(-1, 1, 100_000)  # nothing to clip in a uniform distribution
    hist, _ = np.histogram(u, bins=2048, range=(-1, 1))
    lo, hi = kl_range(hist, -1.0, 1.0, symmetric=True)
    assert lo < -0.9 and hi > 0.9


def test_config_checks_its_fields():
    with pytest.raises(UserError, match="unknown quantization schema 'nope'; .*'symmetric_pow2'"):
        glow_mlir.QuantizationConfig(schema="nope")
    with pytest.raises(UserError, match="unknown calibration 'entropy'"):
        glow_mlir.QuantizationConfig(calibration="entropy")
    with pytest.raises(UserError, match="unknown quantization precision 'int4'"):
        glow_mlir.QuantizationConfig(precision="int4")
    with pytest.raises(UserError, match="channelwise_conv must be True or False, got 'yes'"):
        glow_mlir.QuantizationConfig(channelwise_conv="yes")
    with pytest.raises(UserError, match="rowwise_fc must be True or False"):
        glow_mlir.QuantizationConfig(rowwise_fc=1)
    assert glow_mlir.QuantizationConfig(keep_float=["relu"]).keep_float == ("relu",)


def _batches(n, seed):
    rng = np.random.default_rng(seed)
    return [{"input": rng.standard_normal((1, 1, 28, 28)).astype(np.float32)} for _ in range(n)]


@pytest.fixture(scope="module")
def lenet_profile():
    return glow_mlir.profile(model_zoo.lenet(), _batches(12, seed=0), backend="interpreter")


def test_keep_float_by_kind_and_by_node(lenet_profile):
    lenet = model_zoo.lenet()
    q = glow_mlir.compile(lenet, backend="interpreter", profile=lenet_profile,
                          quantization=glow_mlir.QuantizationConfig(keep_float=["fc1", "relu"]))
    assert q.quantization.kept_float[("glow.fully_connected", "keep_float")] == 1
    assert q.quantization.kept_float[("glow.relu", "keep_float")] == 4
    assert q.quantization.quantized["glow.fully_connected"] == 2
    with pytest.raises(UserError, match="keep_float names 'conv9', which is neither"):
        glow_mlir.compile(lenet, backend="interpreter", profile=lenet_profile,
                          quantization=glow_mlir.QuantizationConfig(keep_float=["conv9"]))


def test_keep_float_by_onnx_node_name(lenet_profile):
    """An ONNX node's own name (what Netron shows) keeps its op float, as its output's
    name does."""
    lenet = model_zoo.lenet()
    (node,) = [n for n in lenet.graph.node if n.output[0] == "fc1"]
    node.name = "Dense/1"
    q = glow_mlir.compile(lenet, backend="interpreter", profile=lenet_profile,
                          quantization=glow_mlir.QuantizationConfig(keep_float=["Dense/1"]))
    assert q.quantization.kept_float[("glow.fully_connected", "keep_float")] == 1
    assert q.quantization.quantized["glow.fully_connected"] == 2


EXAMPLES = __import__("pathlib").Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def cnn_profile():
    """README's example CNN: Conv -> BatchNormalization (folded into the conv, which then
    has the batch norm's name) -> Relu -> MaxPool, three times, then Gemm."""
    rng = np.random.default_rng(0)
    batches = [{"image": rng.standard_normal((1, 3, 32, 32)).astype(np.float32)}
               for _ in range(2)]
    return glow_mlir.profile(EXAMPLES / "small_cnn.onnx", batches, backend="interpreter")


def _cnn(profile, keep):
    return glow_mlir.compile(EXAMPLES / "small_cnn.onnx", backend="interpreter",
                             profile=profile, cache=False,
                             quantization=glow_mlir.QuantizationConfig(keep_float=keep))


def test_keep_float_of_a_conv_folded_into_its_batch_norm(cnn_profile):
    """'conv1' (its ONNX node and output) keeps the op its batch norm was folded into."""
    q = _cnn(cnn_profile, ["conv1"])
    assert q.quantization.kept_float[("glow.convolution", "keep_float")] == 1
    assert q.quantization.quantized["glow.convolution"] == 2


def test_keep_float_by_onnx_op_type(cnn_profile):
    """An ONNX op type keeps every node of it, whatever glow op kind it imports as."""
    q = _cnn(cnn_profile, ["Conv", "Gemm"])
    assert q.quantization.kept_float[("glow.convolution", "keep_float")] == 3
    assert q.quantization.kept_float[("glow.fully_connected", "keep_float")] == 1
    assert "glow.convolution" not in q.quantization.quantized
    q = _cnn(cnn_profile, ["MaxPool"])
    assert q.quantization.kept_float[("glow.max_pool", "keep_float")] == 2
    assert q.quantization.quantized["glow.convolution"] == 3
    with pytest.raises(UserError, match="keep_float names 'Gelu'.*ONNX model's node names "
                                        "and op types"):
        _cnn(cnn_profile, ["Gelu"])  # no node of this model


def test_keep_float_errors_quote_the_name_as_given():
    """An ONNX node name whose op the graph does not keep is named as the user typed it,
    not by its output's name."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"], name="Pass/1"),
         helper.make_node("Relu", ["y"], ["z"], name="Act/1")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    prof = glow_mlir.profile(model, [{"x": np.ones((2, 3), np.float32)}],
                             backend="interpreter")
    q = glow_mlir.compile(model, backend="interpreter", profile=prof, cache=False,
                          quantization=glow_mlir.QuantizationConfig(keep_float=["Act/1"]))
    assert q.quantization.kept_float[("glow.relu", "keep_float")] == 1
    with pytest.raises(UserError, match="keep_float names 'Pass/1', which") as err:
        glow_mlir.compile(model, backend="interpreter", profile=prof, cache=False,
                          quantization=glow_mlir.QuantizationConfig(keep_float=["Pass/1"]))
    assert "'y'" not in str(err.value).split("which")[0]


def test_keep_float_none_is_empty_and_other_types_are_user_errors():
    assert glow_mlir.QuantizationConfig(keep_float=None).keep_float == ()
    with pytest.raises(UserError, match="keep_float must be a list .* got int"):
        glow_mlir.QuantizationConfig(keep_float=3)
    with pytest.raises(UserError, match="keep_float names ops by str .* got 3"):
        glow_mlir.QuantizationConfig(keep_float=["relu", 3])


def test_quantization_needs_a_profile(lenet_profile):
    lenet = model_zoo.lenet()
    with pytest.raises(UserError, match="quantization needs a profile"):
        glow_mlir.compile(lenet, backend="interpreter",
                          quantization=glow_mlir.QuantizationConfig())


def test_profile_from_a_file(tmp_path, lenet_profile):
    path = tmp_path / "p.json"
    lenet_profile.save(path)
    q = glow_mlir.compile(model_zoo.lenet(), backend="interpreter", profile=str(path))
    assert q.quantization.quantized["glow.convolution"] == 2


@pytest.mark.parametrize("schema,calibration", [("asymmetric", "minmax"),
                                                ("symmetric", "minmax"),
                                                ("symmetric_uint8", "kl"),
                                                ("symmetric_pow2", "minmax")])
def test_quantized_lenet_agrees_with_float(lenet_profile, schema, calibration):
    """Top-1 of the int8 LeNet against the float one on inputs the profile never saw
    (random weights, random data: agreement, not accuracy). Every conv and fully
    connected layer runs in int8."""
    lenet = model_zoo.lenet()
    f = glow_mlir.compile(lenet, backend="interpreter")
    q = glow_mlir.compile(lenet, backend="interpreter", profile=lenet_profile,
                          quantization=glow_mlir.QuantizationConfig(schema, calibration))
    assert q.quantization.quantized["glow.convolution"] == 2
    assert q.quantization.quantized["glow.fully_connected"] == 3
    tests = _batches(40, seed=1)
    want = np.array([f.run(b)[0].argmax() for b in tests])
    got = np.array([q.run(b)[0].argmax() for b in tests])
    assert np.mean(got == want) >= 0.9


def test_a_quantized_cpu_model_saves_and_loads(tmp_path, lenet_profile):
    lenet = model_zoo.lenet()
    q = glow_mlir.compile(lenet, backend="cpu", profile=lenet_profile, cache=False)
    x = _batches(1, seed=4)[0]
    want = q.run(x)[0]
    q.save(tmp_path / "q.glow")
    back = glow_mlir.load(tmp_path / "q.glow")
    assert np.array_equal(back.run(x)[0], want)
    interp = glow_mlir.compile(lenet, backend="interpreter", profile=lenet_profile)
    edge = lenet_profile.get("logits")
    step = (max(edge.max, 0.0) - min(edge.min, 0.0)) / 255  # the logits' int8 step
    # one step per layer at most where a rounding tie falls the other way
    assert np.max(np.abs(want - interp.run(x)[0])) <= 3 * step * (1 + 1e-6)


def _if_model():
    """y = (relu(x) if sum(x) > 0 else x - 1) + x."""
    from onnx import TensorProto, helper

    F = TensorProto.FLOAT
    n = helper.make_node
    then_g = helper.make_graph([n("Relu", ["x"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", F, None)])
    else_g = helper.make_graph([n("Sub", ["x", "one"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", F, None)])
    graph = helper.make_graph(
        [n("ReduceSum", ["x"], ["s"], keepdims=0), n("Greater", ["s", "zero"], ["c"]),
         n("If", ["c"], ["r"], then_branch=then_g, else_branch=else_g),
         n("Add", ["r", "x"], ["y"], name="out")], "g",
        [helper.make_tensor_value_info("x", F, [2, 3])],
        [helper.make_tensor_value_info("y", F, [2, 3])],
        [helper.make_tensor("zero", F, [], [0.0]), helper.make_tensor("one", F, [], [1.0])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_ops_inside_a_region_are_reported_as_float():
    model = _if_model()
    rng = np.random.default_rng(0)
    batches = [{"x": rng.standard_normal((2, 3)).astype(np.float32)} for _ in range(3)]
    prof = glow_mlir.profile(model, batches, backend="interpreter")
    report = glow_mlir.compile(model, backend="interpreter", profile=prof).quantization
    why = "inside a glow.if region"
    assert report.kept_float[("glow.relu", why)] == 1
    assert report.kept_float[("glow.sub", why)] == 1
    assert why in report.summary()


def _add_const_erf_model():
    """y = erf(relu(x) + c): an add with a constant operand, then an op with no int8 rule."""
    from onnx import TensorProto, helper

    F = TensorProto.FLOAT
    n = helper.make_node
    graph = helper.make_graph(
        [n("Relu", ["x"], ["r"]), n("Add", ["r", "c"], ["s"]), n("Erf", ["s"], ["y"])], "g",
        [helper.make_tensor_value_info("x", F, [2, 3])],
        [helper.make_tensor_value_info("y", F, [2, 3])],
        [helper.make_tensor("c", F, [3], [-0.5, 0.25, 1.0])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_constant_operands_take_their_own_range_and_ruleless_ops_are_reported():
    """A constant operand is not in the profile (it records computed values) but its range
    is known: the add is quantized, not left float for 'no profile'; the erf, which has
    no int8 rule, is reported as float rather than left out of the summary."""
    model = _add_const_erf_model()
    rng = np.random.default_rng(0)
    batches = [{"x": rng.standard_normal((2, 3)).astype(np.float32)} for _ in range(3)]
    prof = glow_mlir.profile(model, batches, backend="interpreter")
    q = glow_mlir.compile(model, backend="interpreter", profile=prof)
    report = q.quantization
    assert report.quantized["glow.add"] == 1
    assert not any(why == "no profile" for _, why in report.kept_float)
    assert report.kept_float[("glow.erf", "no int8 rule")] == 1
    assert "glow.erf 1 (no int8 rule)" in report.summary()
    x = batches[0]["x"]
    want = glow_mlir.compile(model, backend="interpreter")(x)[0]
    np.testing.assert_allclose(q(x)[0], want, atol=0.03)


def test_relus_after_convolutions_run_no_kernel(cnn_profile):
    """quantize-graph gives a conv followed by a relu the relu's range (zero point -128),
    so the int8 relu keeps every value: eliminate-noops drops it and no kernel runs it."""
    q = glow_mlir.compile(EXAMPLES / "small_cnn.onnx", backend="cpu", profile=cnn_profile,
                          trace=True, cache=False)
    assert q.quantization.quantized["glow.relu"] == 3
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)
    got = q(x)[0]
    kernels = [e["name"] for e in q.trace["traceEvents"] if e.get("ph") == "X"]
    assert any(k.startswith("convolution") for k in kernels)
    assert not any(k.startswith("relu") for k in kernels), kernels
    interp = glow_mlir.compile(EXAMPLES / "small_cnn.onnx", backend="interpreter",
                               profile=cnn_profile, cache=False)
    np.testing.assert_allclose(got, interp(x)[0], atol=0.01)


def _torch_named_model():
    """Two convolutions named as torch.onnx.export names them: node '/c1/Conv', output
    '/c1/Conv_output_0' (the graph's name hint drops the trailing '_0')."""
    from onnx import TensorProto, helper

    F = TensorProto.FLOAT
    n = helper.make_node
    rng = np.random.default_rng(0)
    w1, w2 = (rng.standard_normal(s).astype(np.float32) for s in ((4, 2, 3, 3), (3, 4, 1, 1)))
    graph = helper.make_graph(
        [n("Conv", ["x", "c1.weight"], ["/c1/Conv_output_0"], name="/c1/Conv", pads=[1] * 4),
         n("Relu", ["/c1/Conv_output_0"], ["/Relu_output_0"], name="/Relu"),
         n("Conv", ["/Relu_output_0", "c2.weight"], ["/c2/Conv_output_0"], name="/c2/Conv"),
         n("Relu", ["/c2/Conv_output_0"], ["y"], name="/Relu_1")], "g",
        [helper.make_tensor_value_info("x", F, [1, 2, 6, 6])],
        [helper.make_tensor_value_info("y", F, [1, 3, 6, 6])],
        [helper.make_tensor("c1.weight", F, w1.shape, w1.ravel()),
         helper.make_tensor("c2.weight", F, w2.shape, w2.ravel())])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("keep,kept_convs", [(["Conv"], 2), (["/c1/Conv"], 1),
                                             (["/c1/Conv_output_0"], 1), (["Relu"], 0)])
def test_keep_float_on_torch_exported_names(keep, kept_convs):
    """keep_float by op type, node name or output name on a torch export's names, whose
    trailing '_0' the graph's names do not have."""
    model = _torch_named_model()
    rng = np.random.default_rng(1)
    batches = [{"x": rng.standard_normal((1, 2, 6, 6)).astype(np.float32)} for _ in range(2)]
    prof = glow_mlir.profile(model, batches, backend="interpreter")
    report = glow_mlir.compile(model, backend="interpreter", profile=prof,
                               quantization=glow_mlir.QuantizationConfig(keep_float=keep)
                               ).quantization
    assert report.kept_float[("glow.convolution", "keep_float")] == kept_convs
    assert report.quantized["glow.convolution"] == 2 - kept_convs


def test_an_add_of_a_constant_between_float_ops_stays_float():
    """GELU's `erf(x / sqrt 2) + 1` between a float erf and a float mul: quantizing the
    add alone would only put a quantize and a dequantize around it."""
    from onnx import TensorProto, helper

    F = TensorProto.FLOAT
    n = helper.make_node
    graph = helper.make_graph(
        [n("Erf", ["x"], ["e"]), n("Add", ["e", "one"], ["a"]), n("Mul", ["x", "a"], ["y"])],
        "g", [helper.make_tensor_value_info("x", F, [2, 3])],
        [helper.make_tensor_value_info("y", F, [2, 3])],
        [helper.make_tensor("one", F, [], [1.0])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    rng = np.random.default_rng(0)
    batches = [{"x": rng.standard_normal((2, 3)).astype(np.float32)} for _ in range(2)]
    prof = glow_mlir.profile(model, batches, backend="interpreter")
    q = glow_mlir.compile(model, backend="interpreter", profile=prof)
    assert q.quantization.kept_float[("glow.add", "a constant beside float operands")] == 1
    assert "glow.add" not in q.quantization.quantized


def _embedding_model():
    """An embedding lookup as transformers export it: Gather(table, ids) + position rows,
    then a MatMul by constant weights."""
    from onnx import TensorProto, helper

    F = TensorProto.FLOAT
    n = helper.make_node
    rng = np.random.default_rng(0)
    table = (rng.standard_normal((50, 16)) * 0.1).astype(np.float32)
    pos = (rng.standard_normal((6, 16)) * 0.1).astype(np.float32)
    w = rng.standard_normal((16, 8)).astype(np.float32)
    graph = helper.make_graph(
        [n("Gather", ["table", "ids"], ["e"]), n("Add", ["e", "pos"], ["s"]),
         n("MatMul", ["s", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 6])],
        [helper.make_tensor_value_info("y", F, [1, 6, 8])],
        [helper.make_tensor("table", F, table.shape, table.ravel()),
         helper.make_tensor("pos", F, pos.shape, pos.ravel()),
         helper.make_tensor("w", F, w.shape, w.ravel())])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_embedding_tables_are_stored_int8(backend):
    """A gather of a constant table keeps its rows' scale: the table is stored as int8
    bytes (a quarter of its float size in the constant area), its indices stay integers,
    and the lookup matches the float model within the table's quantization step."""
    model = _embedding_model()
    rng = np.random.default_rng(1)
    batches = [{"ids": rng.integers(0, 50, (1, 6))} for _ in range(3)]
    prof = glow_mlir.profile(model, batches, backend=backend)
    q = glow_mlir.compile(model, backend=backend, profile=prof, cache=False)
    f = glow_mlir.compile(model, backend=backend, cache=False)
    assert q.quantization.quantized["glow.gather"] == 1
    assert q.memory.constant_bytes < f.memory.constant_bytes / 3
    ids = batches[0]["ids"]
    got, want = q(ids)[0], f(ids)[0]
    assert np.max(np.abs(got - want)) < 0.05 * np.max(np.abs(want))
