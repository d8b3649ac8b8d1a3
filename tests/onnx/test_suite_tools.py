"""The conformance suite's own machinery: the case cache, binding shape inputs, comparing
and classifying, the expected-failures file. A bug here would misreport every case."""

import json

import numpy as np
import onnx
import pytest
from onnx import helper

import conformance
import constant_inputs
import node_cases
from glow_mlir.frontends.onnx import Unsupported, UnsupportedOnnxError
from glow_mlir.targets.interpreter import EvaluationError


def test_generate_writes_onnx_layout_and_reloads(tmp_path):
    cases = node_cases.load_cases(tmp_path / "cache", ops=("Abs", "Softplus"))
    by_op = {c.op_type for c in cases}
    assert by_op == {"Abs", "Softplus"}
    # Softplus is a function: its expanded form counts for it
    assert any(c.name.startswith("test_softplus") and "_expanded" in c.name for c in cases)
    index = json.loads((tmp_path / "cache" / "index.json").read_text())
    assert index["onnx_version"] == onnx.__version__ and index["ops"] == ["Abs", "Softplus"]
    abs_case = next(c for c in cases if c.name == "test_abs")
    assert (abs_case.directory / "test_data_set_0" / "output_0.pb").exists()
    model, inputs, outputs = abs_case.load()
    assert model.graph.node[0].op_type == "Abs"
    np.testing.assert_array_equal(outputs[0], np.abs(inputs[0]))
    assert (abs_case.rtol, abs_case.atol) == (1e-3, 1e-7)


def test_a_cache_for_other_ops_is_rebuilt(tmp_path):
    node_cases.load_cases(tmp_path, ops=("Abs",))
    cases = node_cases.load_cases(tmp_path, ops=("Neg",))
    assert {c.op_type for c in cases} == {"Neg"}
    assert not (tmp_path / "node" / "test_abs").exists()


def _reshape_model(extra_nodes=()):
    nodes = [helper.make_node("Reshape", ["data", "shape"], ["y"]), *extra_nodes]
    inputs = [helper.make_tensor_value_info("data", onnx.TensorProto.FLOAT, [2, 3]),
              helper.make_tensor_value_info("shape", onnx.TensorProto.INT64, [2])]
    outputs = [helper.make_empty_tensor_value_info(n.output[0]) for n in nodes]
    return helper.make_model(helper.make_graph(nodes, "g", inputs, outputs),
                             opset_imports=[helper.make_opsetid("", 19)])


def test_shape_inputs_become_initializers_and_data_stays_an_input():
    data, shape = np.zeros((2, 3), np.float32), np.array([3, 2], np.int64)
    model, inputs, bound = constant_inputs.bind_shape_inputs(_reshape_model(), [data, shape])
    assert bound == ["shape"]
    assert [i.name for i in model.graph.input] == ["data"]
    np.testing.assert_array_equal(onnx.numpy_helper.to_array(model.graph.initializer[0]), shape)
    assert len(inputs) == 1 and inputs[0] is data


def test_an_input_also_used_as_data_is_not_bound():
    cast = helper.make_node("Cast", ["shape"], ["as_float"], to=onnx.TensorProto.FLOAT)
    model = _reshape_model([cast])
    assert constant_inputs.shape_input_names(model) == []


def test_data_inputs_stay_inputs():
    """NonZero's input and Clip's bounds are data: binding them would test constant
    folding instead of the op."""
    nodes = [
        helper.make_node("NonZero", ["x"], ["y"]),
        helper.make_node("Clip", ["x", "lo"], ["z"]),
    ]
    inputs = [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3]),
              helper.make_tensor_value_info("lo", onnx.TensorProto.FLOAT, [])]
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_empty_tensor_value_info("y"),
                                                   helper.make_empty_tensor_value_info("z")])
    assert constant_inputs.shape_input_names(helper.make_model(graph)) == []


def test_compare_follows_onnx_runner_rules():
    ref = np.array([1.0, 2.0, np.nan], np.float32)
    assert conformance.compare([ref], [ref * (1 + 5e-4)], 1e-3, 1e-7)[0] == "pass"
    category, detail = conformance.compare([ref], [ref * (1 + 5e-3)], 1e-3, 1e-7)
    assert category == "wrong-numbers" and "2/3 elements differ" in detail
    assert conformance.compare([ref], [ref.astype(np.float64)], 1e-3, 1e-7)[0] == "wrong-dtype"
    assert conformance.compare([ref], [ref[:2]], 1e-3, 1e-7)[0] == "wrong-shape"
    assert conformance.compare([ref], [ref, ref], 1e-3, 1e-7)[0] == "wrong-count"
    inf, nan = np.array([np.inf], np.float32), np.array([np.nan], np.float32)
    assert "got nan, expected inf" in conformance.compare([inf], [nan], 1e-3, 1e-7)[1]


def test_classify_names_the_cause():
    unsupported = UnsupportedOnnxError([Unsupported("Foo", "n1", "op type not supported"),
                                        Unsupported("Foo", "n2", "op type not supported")])
    assert conformance.classify(unsupported) == ("unsupported", "Foo: op type not supported")
    runtime = UnsupportedOnnxError([Unsupported("Pad", "n", "the pads (input #1 'p') is computed "
                                                "at run time; it must be a constant")])
    assert conformance.classify(runtime)[0] == "needs-constant"
    err = EvaluationError("the reference evaluator has no kernel for glow.foo")
    assert conformance.classify(err)[0] == "no-kernel"
    assert (
        conformance.classify(EvaluationError("glow.foo kernel produced shape (2,)"))[0]
        == "evaluator-error"
    )
    try:
        np.zeros(0).max()
    except ValueError as crash:
        category, detail = conformance.classify(crash)
    assert category == "crash" and detail.startswith("ValueError: zero-size array")


def test_expected_failures_need_a_reason(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("# comment\n\ntest_a  # unsupported: A\n")
    assert conformance.read_expected_failures(good) == {"test_a": "unsupported: A"}
    for bad in ["test_a\n", "test_a  #  \n", "test_a  # x\ntest_a  # y\n"]:
        path = tmp_path / "bad.txt"
        path.write_text(bad)
        with pytest.raises(ValueError):
            conformance.read_expected_failures(path)


def test_written_list_reads_back(tmp_path):
    results = [conformance.Result("test_b", "B", "pass"),
               conformance.Result("test_a", "A", "unsupported", "A: op type not supported")]
    path = tmp_path / "expected.txt"
    path.write_text(conformance.format_expected_failures(results))
    assert conformance.read_expected_failures(path) == {
        "test_a": "unsupported: A: op type not supported"
    }


def test_table_prints_onnxruntime_next_to_ours():
    ours = [conformance.Result("test_a", "A", "pass"),
            conformance.Result("test_b", "B", "unsupported", "B: op type not supported")]
    theirs = [conformance.Result("test_a", "A", "wrong-numbers", "x"),
              conformance.Result("test_b", "B", "pass")]
    table = conformance.per_op_table(ours, {}, theirs)
    assert "glow-mlir 1/2, onnxruntime 1/2 (50.0%) on the same cases" in table
    row_b = next(line for line in table.splitlines() if line.startswith("B "))
    assert row_b.split()[1:5] == ["0", "1", "1", "1"]  # passed, failed, total, ort


def test_onnxruntime_sequences_are_compared_element_wise():
    a = np.ones(2, np.float32)
    assert conformance.compare([[a, a]], [[a, a]], 1e-3, 1e-7, sequences=True)[0] == "pass"
    assert conformance.compare([[a, a]], [[a, a + 1]], 1e-3, 1e-7,
                               sequences=True)[0] == "wrong-numbers"
    assert conformance.compare([None], [a], 1e-3, 1e-7, sequences=True)[0] == "wrong-count"
    assert conformance.compare([[a]], [[a]], 1e-3, 1e-7)[0] == "unsupported"  # ours: tensors


def test_onnxruntime_runs_a_case_by_the_same_rules(tmp_path):
    case = next(c for c in node_cases.load_cases(tmp_path, ops=("Abs",)) if c.name == "test_abs")
    assert conformance.run_case_onnxruntime(case).passed


@pytest.mark.parametrize("argv, says", [
    (["--op", "NoSuchOp"], "not a standard op: NoSuchOp"),
    (["--write-expected-failures", "--op", "Abs"], "needs the whole suite"),
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["--op", "Abs", "-k", "no_such_case"], "no node test case matches --op Abs -k"),
])
def test_a_bad_command_line_is_one_line_and_exit_1(argv, says, capsys, monkeypatch):
    monkeypatch.setattr(node_cases, "load_cases", lambda *a, **k: [])  # no case selected
    with pytest.raises(SystemExit) as ended:
        conformance.main(argv)
    assert ended.value.code == 1
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1, err


def test_onnxruntime_reason_keeps_what_it_could_not_do():
    err = RuntimeError("[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an "
                       "implementation for Attention(23) node with name ''")
    assert conformance.onnxruntime_reason(err) == (
        "Could not find an implementation for Attention(23) node with name ''")
