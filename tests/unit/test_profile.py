"""glow_mlir.profile: the recorded edges (min, max, histogram) on the interpreter and on
cpu, the histogram rescaling of Glow's generateTensorHistogram, the profile file, the
graph hash, glow-compile --dump-profile, and the errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import glow_mlir
from glow_mlir import model_zoo
from glow_mlir.analysis.quant_profile import EdgeProfile, ProfileError, rebin
from glow_mlir.ir.errors import UserError
from glow_mlir.runtime.compiled_model import InputError
from glow_mlir.tools import glow_compile


def _batches(n: int, seed: int = 0, shape=(1, 1, 28, 28)) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [{"input": rng.standard_normal(shape).astype(np.float32) * (1 + i)}
            for i in range(n)]


@pytest.fixture(scope="module")
def lenet():
    return model_zoo.lenet()


@pytest.fixture(scope="module")
def profile(lenet):
    return glow_mlir.profile(lenet, _batches(3), backend="interpreter")


def test_histogram_of_one_batch_is_numpys():
    x = np.random.default_rng(1).standard_normal(5000)
    e = EdgeProfile("n", 0)
    e.record(x, bins=64)
    want, _ = np.histogram(x, bins=64, range=(x.min(), x.max()))
    assert (e.min, e.max) == (x.min(), x.max())
    # numpy puts a value on an inner bin edge into the upper bin, as Glow's getBin does
    assert np.abs(e.histogram - want).sum() <= 2 and e.histogram.sum() == x.size


def test_a_wider_batch_rescales_the_histogram_keeping_every_count():
    rng = np.random.default_rng(2)
    e = EdgeProfile("n", 0)
    a, b = rng.uniform(-1, 1, 3000), rng.uniform(-4, 2, 1000)
    e.record(a, bins=100)
    e.record(b, bins=100)
    assert (e.min, e.max) == (min(a.min(), b.min()), max(a.max(), b.max()))
    assert e.histogram.sum() == 4000
    # the mass of the first batch lies where [-1, 1] falls in the new bins
    edges = np.linspace(e.min, e.max, 101)
    inside = (edges[:-1] >= -1.1) & (edges[1:] <= 1.1)
    want, _ = np.histogram(np.concatenate([a, b]), bins=100, range=(e.min, e.max))
    assert abs(int(e.histogram[inside].sum()) - int(want[inside].sum())) <= 0.03 * 4000


def test_rebin_moves_each_count_into_the_overlapping_bins():
    hist = np.array([4, 0, 0, 6])
    out = rebin(hist, 0.0, 4.0, 0.0, 8.0)  # each new bin is two old ones
    assert out.tolist() == [4, 6, 0, 0]
    assert rebin(np.array([10]), 0.0, 1.0, -1.0, 1.0).tolist() == [10]


def test_profile_records_every_float_edge_and_the_input(lenet, profile):
    batches = _batches(3)
    nodes = {e.node for e in profile}
    assert {"input", "conv1", "relu1", "pool1", "fc1", "logits"} <= nodes
    x = np.stack([b["input"] for b in batches])
    edge = profile.get("input")
    assert (edge.min, edge.max) == (float(x.min()), float(x.max()))
    assert edge.histogram.sum() == x.size
    model = glow_mlir.compile(lenet, backend="interpreter")
    logits = np.stack([model.run(b)[0] for b in batches])
    out = profile.get("logits")
    assert out.min == pytest.approx(float(logits.min()), abs=1e-5)
    assert out.max == pytest.approx(float(logits.max()), abs=1e-5)
    relu = profile.get("relu1")
    assert relu.min == 0.0 and relu.max == profile.get("conv1").max
    assert profile.batches == 3 and profile.backend == "interpreter"


def test_cpu_records_what_the_interpreter_records(lenet, profile):
    cpu = glow_mlir.profile(lenet, _batches(3), backend="cpu")
    assert cpu.graph_hash == profile.graph_hash
    assert {k for k in cpu.edges} == {k for k in profile.edges}
    for e in cpu:
        want = profile.get(e.node, e.output)
        assert e.min == pytest.approx(want.min, abs=1e-4)
        assert e.max == pytest.approx(want.max, abs=1e-4)
        assert e.histogram.sum() == want.histogram.sum()
        # a value next to a bin edge may land in the neighbouring bin
        assert np.abs(e.histogram - want.histogram).sum() <= 0.01 * want.histogram.sum() + 4


def test_save_and_load_round_trip_as_json_and_yaml(tmp_path, profile):
    path = tmp_path / "p.yaml"
    profile.save(path)
    back = glow_mlir.Profile.load(path)
    assert back.graph_hash == profile.graph_hash and back.batches == 3
    for e in profile:
        b = back.get(e.node, e.output)
        assert (b.min, b.max) == (e.min, e.max)
        assert np.array_equal(b.histogram, e.histogram)
    doc = json.loads(path.read_text())
    assert {"node", "output", "min", "max", "histogram"} <= set(doc["edges"][0])
    yaml = pytest.importorskip("yaml")
    block = tmp_path / "block.yaml"
    block.write_text(yaml.safe_dump(doc))  # a hand-edited block-style YAML file reads too
    assert glow_mlir.Profile.load(block).get("conv1").max == profile.get("conv1").max


def test_the_hash_is_the_graphs(lenet, profile):
    again = glow_mlir.profile(lenet, _batches(1, seed=5), backend="interpreter")
    assert again.graph_hash == profile.graph_hash  # other data, same graph
    other = glow_mlir.profile(model_zoo.mlp(), [{"input": np.zeros((1, 784), np.float32)}],
                              backend="interpreter")
    assert other.graph_hash != profile.graph_hash


def test_a_profile_of_another_graph_is_refused(profile):
    with pytest.raises(ProfileError, match="recorded on another graph"):
        glow_mlir.compile(model_zoo.mlp(), backend="interpreter", profile=profile)


def test_changed_weights_change_the_hash(lenet, profile):
    import copy

    from onnx import numpy_helper

    edited = copy.deepcopy(lenet)
    w = edited.graph.initializer[0]
    arr = numpy_helper.to_array(w).copy()
    arr.flat[0] += 1.0
    w.CopyFrom(numpy_helper.from_array(arr, w.name))
    with pytest.raises(ProfileError, match="another graph"):
        glow_mlir.compile(edited, backend="interpreter", profile=profile)


def test_empty_batches_are_an_error(lenet):
    with pytest.raises(ProfileError, match="no batches"):
        glow_mlir.profile(lenet, [], backend="interpreter")
    with pytest.raises(ProfileError, match="iterable of input dicts"):
        glow_mlir.profile(lenet, {"input": np.zeros((1, 1, 28, 28), np.float32)})


def test_a_wrong_batch_names_its_number(lenet):
    batches = _batches(2) + [{"input": np.zeros((2, 2), np.float32)}]
    with pytest.raises(InputError, match=r"batch #2: input 'input' has shape 2x2"):
        glow_mlir.profile(lenet, batches, backend="interpreter")


def test_profiling_runs_on_interpreter_and_cpu_only(lenet):
    with pytest.raises(UserError, match="profiling runs on 'interpreter' or 'cpu'"):
        glow_mlir.profile(lenet, _batches(1), backend="accel")


def test_a_damaged_profile_file_is_an_error(tmp_path, profile):
    path = tmp_path / "p.json"
    profile.save(path)
    doc = json.loads(path.read_text())
    doc["edges"][0]["histogram"] = [1, 2]
    path.write_text(json.dumps(doc))
    with pytest.raises(ProfileError,
                       match="edge #0 .* the histogram has 2 counts, the profile.s bins is 2048"):
        glow_mlir.Profile.load(path)
    path.write_text("[1, 2")
    with pytest.raises(ProfileError, match="neither JSON nor YAML|not a glow-mlir profile"):
        glow_mlir.Profile.load(path)
    with pytest.raises(ProfileError, match="cannot read the profile"):
        glow_mlir.Profile.load(tmp_path / "missing.json")


def test_glow_compile_dumps_and_loads_a_profile(tmp_path, lenet, capsys):
    import onnx

    model = tmp_path / "lenet.onnx"
    onnx.save(lenet, model)
    inputs = []
    for i, batch in enumerate(_batches(2)):
        inputs += ["--inputs", str(tmp_path / f"x{i}.npz")]
        np.savez(tmp_path / f"x{i}.npz", **batch)
    prof = tmp_path / "P.yaml"
    capsys.readouterr()
    glow_compile.main([str(model), "--backend", "interpreter", "--dump-profile", str(prof),
                       *inputs])
    loaded = glow_mlir.Profile.load(prof)
    assert loaded.batches == 2 and loaded.get("conv1") is not None
    said = capsys.readouterr()
    assert said.out == "" and said.err == (f"glow-compile: wrote '{prof}': {len(loaded)} edges "
                                           f"over 2 batch(es) on interpreter\n")
    glow_compile.main([str(model), "--backend", "interpreter", "--load-profile", str(prof),
                       "--emit", "optimized-graph", "-o", str(tmp_path / "q.mlir")])
    text = (tmp_path / "q.mlir").read_text()
    assert "glow.convolution" in text and "!glow.quant<i8" in text
    # --keep-float takes a comma-separated list, as quantize-graph's keep-float= does
    kept = []
    for flags in (["--keep-float", "fc1,relu"], ["--keep-float", "fc1", "--keep-float", "relu"]):
        glow_compile.main([str(model), "--backend", "interpreter", "--load-profile", str(prof),
                           *flags, "--emit", "optimized-graph", "-o", str(tmp_path / "k.mlir")])
        kept.append((tmp_path / "k.mlir").read_text())
    assert kept[0] == kept[1] != text
    np.savez(tmp_path / "bad.npz", input=np.zeros((3, 3), np.float32))
    capsys.readouterr()
    for bad, message in (
            (["--dump-profile", str(prof)], "needs batches to run"),
            (["--load-profile", str(prof), "--keep-float", "nope", "--emit", "instr"],
             "keep_float names 'nope'"),
            (["--load-profile", str(prof), "--emit", "graph"],
             "--emit graph prints the graph as imported"),
            (["--inputs", inputs[1]], "--inputs are the batches --dump-profile runs"),
            (["--dump-profile", str(prof), *inputs[:2], "--inputs", str(tmp_path / "bad.npz")],
             f"inputs '{tmp_path / 'bad.npz'}': input 'input' has shape 3x3")):
        with pytest.raises(SystemExit) as done:
            glow_compile.main([str(model), *bad])
        assert done.value.code == 1
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err


def test_an_edge_without_finite_values_has_no_range_and_stays_float(tmp_path, lenet):
    nan = [{"input": np.full((1, 1, 28, 28), np.nan, np.float32)}]
    prof = glow_mlir.profile(lenet, nan, backend="interpreter")
    assert not prof.get("input").seen
    path = tmp_path / "nan.json"
    prof.save(path)
    doc = json.loads(path.read_text())  # strict JSON: no Infinity
    edge = next(e for e in doc["edges"] if e["node"] == "input")
    assert (edge["min"], edge["max"], edge["histogram"]) == (None, None, [])
    back = glow_mlir.Profile.load(path)
    assert not back.get("input").seen
    compiled = glow_mlir.compile(lenet, backend="interpreter", profile=back)
    assert not compiled.quantization.quantized
    assert ("glow.convolution", "the profile saw no finite values") in \
        compiled.quantization.kept_float


def test_a_binary_file_is_not_a_profile(tmp_path):
    path = tmp_path / "weights.bin"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ProfileError, match=r"'.*weights.bin' is not a profile"):
        glow_mlir.Profile.load(path)


def _edit(tmp_path, profile, change):
    path = tmp_path / "edited.json"
    profile.save(path)
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("change, message", [
    (lambda d: d["edges"].append(dict(d["edges"][1])), r"edge #\d+ \('conv1' output 0\) "
                                                         r"appears twice"),
    (lambda d: d["edges"][1]["histogram"].__setitem__(0, -5),
     r"edge #1 \('conv1' output 0\): histogram counts must be whole numbers >= 0"),
    (lambda d: d["edges"][1].update(min=-1e38, max=1e38),
     r"edge #1 \('conv1' output 0\): range \[-1e\+38, 1e\+38\] is not finite or beyond"),
    (lambda d: d["edges"][1].update(min=2.0, max=1.0), r"edge #1 .*min 2 is above max 1"),
    (lambda d: d["edges"][1].update(max=None), r"edge #1 .*give both min and max"),
])
def test_a_hand_edited_profile_is_checked(tmp_path, profile, change, message):
    assert profile.get("conv1") is not None
    path = _edit(tmp_path, profile, lambda d: (
        d["edges"].sort(key=lambda e: e["node"] != "input" and e["node"] != "conv1"),
        d["edges"].sort(key=lambda e: e["node"] != "input"), change(d)))
    with pytest.raises(ProfileError, match=message):
        glow_mlir.Profile.load(path)


def test_an_edge_of_a_node_the_graph_lacks_is_refused_at_compile_time(tmp_path, lenet, profile):
    path = _edit(tmp_path, profile, lambda d: d["edges"][1].update(node="conv_one"))
    with pytest.raises(ProfileError, match="edge 'conv_one' names a node the graph does not "
                                           "have"):
        glow_mlir.compile(lenet, backend="interpreter", profile=path)


def _dynamic_model():
    from onnx import TensorProto, helper

    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 3], np.linspace(-1, 1, 12).tolist())
    b = helper.make_tensor("b", TensorProto.FLOAT, [3], [0.1, -0.2, 0.3])
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w", "b"], ["y"], name="fc")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])], [w, b])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=8)


def test_a_dynamic_model_takes_its_shapes_from_the_first_batch(tmp_path):
    model = _dynamic_model()
    rng = np.random.default_rng(3)
    batches = [{"x": rng.standard_normal((2, 4)).astype(np.float32)} for _ in range(2)]
    prof = glow_mlir.profile(model, batches, backend="interpreter")
    assert prof.input_shapes == {"x": (2, 4)}
    prof.save(tmp_path / "p.json")
    back = glow_mlir.Profile.load(tmp_path / "p.json")
    assert back.input_shapes == {"x": (2, 4)}
    compiled = glow_mlir.compile(model, backend="interpreter", profile=back,
                                 input_shapes={"batch": 2})
    assert compiled.quantization.quantized
    with pytest.raises(ProfileError, match=r"recorded with input shapes \{x: 2x4\}, this "
                                           r"model has \{x: 8x4\}"):
        glow_mlir.compile(model, backend="interpreter", profile=back, input_shapes={"batch": 8})
    with pytest.raises(InputError, match="batch #1"):
        glow_mlir.profile(model, [batches[0], {"x": np.zeros((3, 4), np.float32)}])


def test_glow_compile_with_a_profile_prints_the_quantized_graph(tmp_path, lenet, profile,
                                                                  capsys):
    import onnx

    model = tmp_path / "lenet.onnx"
    onnx.save(lenet, model)
    prof = tmp_path / "P.json"
    profile.save(prof)
    glow_compile.main([str(model), "--backend", "interpreter", "--load-profile", str(prof)])
    assert "!glow.quant<i8" in capsys.readouterr().out
    (tmp_path / "bin.yaml").write_bytes(b"\x80\x81\xff\x00" * 64)
    for bad, message in (
            (["--load-profile", str(tmp_path / "nope.yaml")], "cannot read the profile"),
            (["--load-profile", str(prof), "--quantization-schema", "foo"],
             "unknown quantization schema 'foo'"),
            (["--load-profile", str(tmp_path / "bin.yaml")], "is not a profile")):
        with pytest.raises(SystemExit) as done:
            glow_compile.main([str(model), *bad])
        assert done.value.code == 1
        err = capsys.readouterr().err
        assert message in err and "--emit graph" not in err and "Traceback" not in err, err


@pytest.mark.parametrize("text, says", [
    ("a: [1, 2\n  b: {\n", "neither JSON nor YAML (expected ',' or ']', but got ':' at line 2, "
                           "column 4)"),
    ("format: glow-mlir-profile\n\x00\n", "neither JSON nor YAML (character #x0000 at "
                                           "position 26 is not allowed in YAML"),
])
def test_a_profile_that_is_neither_json_nor_yaml_is_one_line(tmp_path, lenet, capsys, text,
                                                              says):
    """PyYAML's own message spans lines (the source quoted, a caret under it)."""
    import onnx

    from tool_testing import in_process

    model, prof = tmp_path / "lenet.onnx", tmp_path / "P.yaml"
    onnx.save(lenet, model)
    prof.write_text(text)
    code, out, err = in_process(glow_compile.main, capsys, model, "--load-profile", prof)
    assert code == 1 and err.startswith(f"glow-compile: error: {prof}: {says}"), err
    assert err.count("\n") == 1, err


def test_a_range_too_wide_for_float32_steps_is_not_saved(tmp_path, profile):
    import copy

    wide = copy.deepcopy(profile)
    wide.get("conv1").record(np.array([1e37]), wide.bins)
    with pytest.raises(ProfileError, match=r"edge 'conv1' output 0 saw values in .*1e\+37"):
        wide.save(tmp_path / "wide.json")


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_a_batch_with_values_a_compiled_model_refuses_is_refused(backend):
    # labels outside the classes ran (clamped by the cpu kernels) into the profile
    from onnx import helper

    from onnx_testing import make_model

    scores = np.zeros((3, 5), np.float32)
    model = make_model([helper.make_node("SoftmaxCrossEntropyLoss", ["s", "l"], ["loss"])],
                       {"s": scores, "l": np.zeros(3, np.int64)}, ["loss"], opset=13)
    good = {"s": scores, "l": np.array([0, 4, 1])}
    glow_mlir.profile(model, [good], backend=backend)
    with pytest.raises(InputError, match=r"batch #1: input 'l' at \[1\] is 5: "
                                         r"SoftmaxCrossEntropyLoss labels of 5 classes"):
        glow_mlir.profile(model, [good, {**good, "l": np.array([0, 5, 1])}], backend=backend)


def _layer_norm_model():
    """x -> LayerNormalization -> Relu: cpu keeps the layer norm whole, the interpreter
    lowers it, so their lowered graphs (and profile edges) differ."""
    from onnx import TensorProto, helper

    F = TensorProto.FLOAT
    graph = helper.make_graph(
        [helper.make_node("LayerNormalization", ["x", "g", "b"], ["n"], axis=-1),
         helper.make_node("Relu", ["n"], ["y"])], "g",
        [helper.make_tensor_value_info("x", F, [2, 8])],
        [helper.make_tensor_value_info("y", F, [2, 8])],
        [helper.make_tensor("g", F, [8], np.ones(8, np.float32)),
         helper.make_tensor("b", F, [8], np.zeros(8, np.float32))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_profile_defaults_to_compiles_backend_and_a_mismatch_names_both():
    """profile()'s default backend is compile()'s (cpu), so the plain profile-then-compile
    works; a profile recorded on another backend whose lowering differs is refused with
    both backends named and what to do."""
    model = _layer_norm_model()
    batches = [{"x": np.random.default_rng(i).standard_normal((2, 8)).astype(np.float32)}
               for i in range(2)]
    prof = glow_mlir.profile(model, batches)
    assert prof.backend == "cpu"
    glow_mlir.compile(model, profile=prof, quantization=glow_mlir.QuantizationConfig())
    other = glow_mlir.profile(model, batches, backend="interpreter")
    with pytest.raises(ProfileError, match="recorded on backend 'interpreter' and backend "
                                           "'cpu' lowers the graph differently: record it "
                                           "on 'cpu'"):
        glow_mlir.compile(model, profile=other, quantization=glow_mlir.QuantizationConfig())
