"""glow-run --specialize first-call: the compile waits for the inputs, whose shapes (and the
values of shape-setting inputs) it specializes on (runtime/specialized.py)."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from glow_mlir.tools import glow_run
from tool_testing import in_process


@pytest.fixture(scope="module")
def reshape_model(tmp_path_factory):
    """x (n x 6, n unbound) reshaped to the run-time shape `s`: no static compile exists."""
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "s"], ["y"]), helper.make_node("Relu", ["y"], ["z"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 6]),
              helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)])
    path = tmp_path_factory.mktemp("m") / "reshape.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_specialize_compiles_for_the_given_inputs(tmp_path, capsys, reshape_model):
    x = np.arange(12, dtype=np.float32).reshape(2, 6) - 5
    np.savez(tmp_path / "in.npz", x=x, s=np.array([3, 4]))
    code, out, err = in_process(glow_run.main, capsys, reshape_model, "--backend", "interpreter",
                                "--specialize", "first-call", "--inputs", tmp_path / "in.npz",
                                "--runs", "3", "--no-cache", "--compare-onnxruntime")
    assert code == 0, err
    assert f"output z: 3x4 float32  min 0  max {x.max():g}" in out
    assert "specializations: 1 compiled, 2 hit(s), 1 kept (at most 8)" in out
    assert ": match" in out
    # the compile is timed apart: the mean is of the 2 runs that compiled nothing
    assert "time per run: " in out and "(wall clock, mean of 2," in out
    assert "time of the run that compiled: " in out and "(compile included)" in out


def test_specialize_writes_the_trace_of_the_last_runs_function(tmp_path, capsys,
                                                               reshape_model):
    """As the Python API's compile(..., specialize=..., trace=True).write_trace()."""
    import json

    np.savez(tmp_path / "in.npz", x=np.ones((2, 6), np.float32), s=np.array([3, 4]))
    code, out, err = in_process(glow_run.main, capsys, reshape_model, "--backend", "cpu",
                                "--specialize", "first-call", "--inputs", tmp_path / "in.npz",
                                "--runs", "2", "--no-cache", "--trace", tmp_path / "t.json")
    assert code == 0, err
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    plural = "" if len(events) == 1 else "s"
    assert events and f"trace: {len(events)} kernel call{plural} in " in out
    assert "(the last run's function)" in out


def test_without_specialize_the_same_model_is_refused(tmp_path, capsys, reshape_model):
    np.savez(tmp_path / "in.npz", x=np.zeros((2, 6), np.float32), s=np.array([3, 4]))
    code, _, err = in_process(glow_run.main, capsys, reshape_model, "--inputs",
                              tmp_path / "in.npz")
    assert code == 1 and "specialize" in err and "Traceback" not in err


def test_max_specializations_is_shown(tmp_path, capsys, reshape_model):
    np.savez(tmp_path / "in.npz", x=np.ones((1, 6), np.float32), s=np.array([2, 3]))
    code, out, err = in_process(glow_run.main, capsys, reshape_model, "--specialize",
                                "first-call", "--max-specializations", "2", "--inputs",
                                tmp_path / "in.npz", "--backend", "interpreter", "--no-cache")
    assert code == 0 and "1 compiled, 0 hit(s), 1 kept (at most 2)" in out, err
    # one run, and it compiled: no "time per run" that is mostly the compile
    assert "time per run" not in out and "--runs 2 or more" in out


@pytest.mark.parametrize("args, message", [
    (["--max-specializations", "2"], "give --specialize first-call too"),
    (["--specialize", "first-call"], "give them with --inputs"),
    (["--specialize", "first-call", "--input-shape", "x=2x6", "--inputs", "in.npz"],
     "drop --input-shape"),
    (["--specialize", "second-call"], "invalid choice"),
    (["--specialize", "first-call", "--max-specializations", "0"], "max-specializations"),
])
def test_bad_specialize_options_exit_1_in_one_line(capsys, reshape_model, args, message):
    code, out, err = in_process(glow_run.main, capsys, reshape_model, *args)
    assert code == 1 and message in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_a_value_needed_as_a_constant_points_to_specialize(tmp_path, capsys):
    # static shapes, but Trilu's k is an input: the refusal says what --specialize is for
    graph = helper.make_graph(
        [helper.make_node("Trilu", ["x", "k"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4]),
         helper.make_tensor_value_info("k", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = tmp_path / "trilu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), str(path))
    np.savez(tmp_path / "in.npz", x=np.ones((3, 4), np.float32), k=np.array(1))
    code, _, err = in_process(glow_run.main, capsys, path, "--inputs", tmp_path / "in.npz",
                              "--backend", "interpreter", "--no-cache")
    assert code == 1 and "Trilu: k (input #1 'k') is computed at run time" in err, err
    assert "glow-run --specialize first-call" in err and "Traceback" not in err
    code, out, err = in_process(glow_run.main, capsys, path, "--inputs", tmp_path / "in.npz",
                                "--backend", "interpreter", "--no-cache",
                                "--specialize", "first-call")
    assert code == 0 and "output y: 3x4 float32" in out, err


def test_specialize_of_a_model_in_ir_is_a_usage_error(tmp_path, capsys):
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "conv_relu.mlir"
    code, _, err = in_process(glow_run.main, capsys, example, "--specialize", "first-call",
                              "--inputs", tmp_path / "in.npz")
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert "--specialize first-call compiles ONNX models" in err and "drop --specialize" in err
