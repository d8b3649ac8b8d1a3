"""The accel backend end to end: `compile(..., backend="accel", scratchpad_kib=...)` runs
graph pipeline -> instruction IR -> tiling to the scratchpad -> DMA scheduling and double
buffering -> scratchpad plan -> simulator, and gives onnxruntime's numbers on the real
models at 64 KiB, 256 KiB and 1 MiB; random graphs at random scratchpad sizes give the
reference evaluator's numbers on the simulator and natively; the report's figures obey
their definitions (the lower bound is below the bytes moved, the overlap below both busy
times, the peak below the capacity)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import glow_mlir
from glow_graphs import assert_outputs_close, clone_module, evaluate, glow_graphs
from glow_mlir import model_zoo
from glow_mlir.dialects import glow_accel, glow_ir
from glow_mlir.ir.errors import UserError
from glow_mlir.tools import glow_compile, glow_run
from onnx_testing import model_feeds, run_onnxruntime
from test_backends import ACCEL_RUNNABLE_AFTER_LOWERING

RTOL, ATOL = 1e-4, 1e-5
SIZES_KIB = (64, 256, 1024)


def _check_report(compiled) -> None:
    r = compiled.accel_report
    assert r.scratchpad_bytes == compiled_kib(compiled) * 1024
    assert 0 < r.scratchpad_peak_bytes <= r.scratchpad_bytes
    assert r.dma_bytes == r.dma_bytes_in + r.dma_bytes_out
    assert 0 < r.dma_lower_bound_bytes <= r.dma_bytes
    assert 0 <= r.overlap_cycles <= min(r.dma_cycles, r.compute_cycles)
    assert (
        max(r.dma_cycles, r.compute_cycles)
        <= r.cycles
        <= r.dma_cycles + r.compute_cycles + 64 * 1024
    )
    assert set(r.as_dict()) >= {"dma_bytes", "dma_lower_bound_bytes", "cycles", "compute_cycles",
                                "dma_cycles", "scratchpad_bytes", "scratchpad_peak_bytes"}


def compiled_kib(compiled) -> int:
    fn = next(op for op in compiled.module.walk() if isinstance(op, glow_ir.FuncOp))
    return glow_accel.target_of(fn).value("scratchpad_bytes") // 1024


def _program_is_accelerated(compiled) -> None:
    """Nothing but memory ops of glow_ir is left, and every tile has its offset."""
    left = {op.name for op in compiled.module.walk() if isinstance(op, glow_ir.InstrOp)
            and not isinstance(op, glow_accel.TileOp)}
    assert not left
    allocs = [op for op in compiled.module.walk()
              if isinstance(op, glow_accel.ScratchpadAllocOp)]
    assert allocs and all(a.offset is not None for a in allocs)


@pytest.mark.parametrize("kib", SIZES_KIB)
@pytest.mark.parametrize("build", [model_zoo.mlp, model_zoo.lenet], ids=["mlp", "lenet"])
def test_small_models_match_onnxruntime(build, kib):
    model = build()
    compiled = glow_mlir.compile(model, backend="accel", scratchpad_kib=kib)
    feeds = model_feeds(compiled)
    for got, want in zip(compiled.run(feeds), run_onnxruntime(model, feeds)):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    _program_is_accelerated(compiled)
    _check_report(compiled)


@pytest.mark.parametrize("kib", SIZES_KIB)
def test_resnet18_matches_onnxruntime(kib):
    model = model_zoo.resnet18()
    compiled = glow_mlir.compile(model, backend="accel", scratchpad_kib=kib)
    feeds = model_feeds(compiled)
    for got, want in zip(compiled.run(feeds), run_onnxruntime(model, feeds)):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    _check_report(compiled)


def test_mlp_moves_each_weight_once_and_hides_its_dma():
    """A matrix-vector product reads each weight once: the bytes moved are the lower bound
    (every byte in and out once); double buffering hides most DMA time under compute."""
    compiled = glow_mlir.compile(model_zoo.mlp(), backend="accel", scratchpad_kib=64)
    compiled.run(model_feeds(compiled))
    r = compiled.accel_report
    assert r.dma_bytes <= 1.05 * r.dma_lower_bound_bytes
    blocking = glow_mlir.compile(model_zoo.mlp(), backend="accel", scratchpad_kib=64,
                                 disable_passes=["accel-insert-dma", "accel-double-buffer"])
    blocking.run(model_feeds(blocking))
    b = blocking.accel_report
    assert b.overlap_cycles == 0 and r.cycles < b.cycles
    assert r.overlap_cycles > 0


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(g=glow_graphs(families=ACCEL_RUNNABLE_AFTER_LOWERING, max_ops=6,
                     exclude=["glow.pow", "glow.adaptive_avg_pool", "glow.batched_reduce_prod"]),
       kib=st.integers(min_value=8, max_value=1024))
def test_random_graphs_on_the_simulator_and_natively(g, kib):
    from glow_mlir.targets.accel.native import AccelNativeExecutor

    expected = evaluate(g)
    compiled = glow_mlir.compile(clone_module(g), backend="accel", scratchpad_kib=kib)
    assert_outputs_close(g, expected, compiled(*g.inputs))
    peak = compiled.accel_report.scratchpad_peak_bytes
    assert peak <= kib * 1024
    native = AccelNativeExecutor(clone_module(compiled.module))
    assert_outputs_close(g, expected, native.run(list(g.inputs)))


# ====================================================================== API and tools


def test_backend_options_are_checked(tmp_path):
    with pytest.raises(UserError, match="unknown option 'scratchpad_kib' for backend 'cpu'; "
                                        "it is an option of backend 'accel'"):
        glow_mlir.compile(model_zoo.mlp(), backend="cpu", scratchpad_kib=64)
    with pytest.raises(UserError, match="scratchpad_kib must be a positive whole number"):
        glow_mlir.compile(model_zoo.mlp(), backend="accel", scratchpad_kib=-1)
    with pytest.raises(UserError, match="unknown option 'tiles'"):
        glow_mlir.compile(model_zoo.mlp(), backend="accel", tiles=4)
    with pytest.raises(UserError, match="cannot disable 'accel-plan-scratchpad'"):
        glow_mlir.compile(model_zoo.mlp(), backend="accel",
                          disable_passes=["accel-plan-scratchpad"])


def test_fuse_epilogues_is_a_checked_option():
    """`fuse_epilogues=False` (what benchmarks/accel_report.py measures the fusion with)
    converts each element-wise instruction alone: the same numbers, more bytes stored
    (the matmul results go out before the bias and relu read them back); anything but a
    bool is the user's error."""
    fused = glow_mlir.compile(model_zoo.mlp(), backend="accel", cache=False)
    alone = glow_mlir.compile(model_zoo.mlp(), backend="accel", fuse_epilogues=False,
                              cache=False)
    x = np.random.default_rng(0).standard_normal((1, 784)).astype(np.float32)
    np.testing.assert_array_equal(fused(x), alone(x))
    assert alone.accel_report.dma_bytes_out > fused.accel_report.dma_bytes_out
    with pytest.raises(UserError, match="fuse_epilogues must be True or False, got 'no'"):
        glow_mlir.compile(model_zoo.mlp(), backend="accel", fuse_epilogues="no")


def test_a_scratchpad_larger_than_the_machine_is_a_user_error(tmp_path, capsys):
    """The simulator holds the scratchpad in memory: a size beyond the machine's is named
    (was a bare MemoryError reported as an internal error)."""
    with pytest.raises(UserError, match=r"a scratchpad of 99999999999 KiB needs .* more than "
                                        r"this machine's memory"):
        glow_mlir.compile(model_zoo.mlp(), backend="accel", scratchpad_kib=99999999999)
    model = _onnx_file(tmp_path, model_zoo.mlp())
    with pytest.raises(SystemExit) as done:
        glow_run.main([model, "--backend", "accel", "--scratchpad-kib", "99999999999"])
    assert done.value.code == 1
    err = capsys.readouterr().err
    assert "more than this machine's memory" in err and "internal error" not in err


def test_tensors_without_elements_are_refused_by_name(tmp_path, capsys):
    """A batch bound to 0 has no tile to move: refused naming the value (was a
    ZeroDivisionError in tiling); cpu runs it."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(UserError, match=r"accel backend cannot run tensors without elements: "
                                        r"'x' has shape 0x4"):
        glow_mlir.compile(model, backend="accel", input_shapes={"batch": 0})
    out, = glow_mlir.compile(model, backend="cpu", input_shapes={"batch": 0})(
        np.zeros((0, 4), np.float32))
    assert out.shape == (0, 4)


def big_kernel_model():
    """A convolution whose smallest tile (one output pixel of one channel: a 24x24 window
    of one input channel and the same filter slice) needs 4.6 KB."""
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(
        np.random.default_rng(0).standard_normal((2, 1, 24, 24)).astype(np.float32), "w")
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="big_kernel")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 9, 9])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_a_scratchpad_too_small_is_a_user_error():
    """The message names the instruction, what its smallest tile needs, and the size."""
    with pytest.raises(UserError, match=r"'glow_ir.convolution' op needs at least 9472 bytes "
                                        r".* the scratchpad has 8192 bytes"):
        glow_mlir.compile(big_kernel_model(), backend="accel", scratchpad_kib=8)
    compiled = glow_mlir.compile(big_kernel_model(), backend="accel", scratchpad_kib=16)
    assert compiled.accel_report.scratchpad_peak_bytes <= 16 * 1024


def test_accel_report_is_none_elsewhere():
    assert glow_mlir.compile(model_zoo.mlp(), backend="interpreter").accel_report is None


def _onnx_file(tmp_path, model) -> str:
    path = tmp_path / "model.onnx"
    path.write_bytes(model.SerializeToString())
    return str(path)


def test_cli_accel_report_and_program(tmp_path, capsys):
    model = _onnx_file(tmp_path, model_zoo.lenet())
    report, program = tmp_path / "r.json", tmp_path / "p.mlir"
    glow_compile.main([model, "--backend", "accel", "--scratchpad-kib", "64",
                       "--emit", "accel", "-o", str(program), "--accel-report", str(report)])
    figures = json.loads(report.read_text())
    for key in ("dma_bytes", "dma_lower_bound_bytes", "cycles", "compute_cycles", "dma_cycles",
                "scratchpad_bytes", "scratchpad_peak_bytes"):
        assert isinstance(figures[key], int) and figures[key] >= 0, key
    assert figures["scratchpad_bytes"] == 64 * 1024
    assert 0 < figures["scratchpad_peak_bytes"] <= 64 * 1024
    text = program.read_text()
    assert "glow_accel.dma_start" in text and "glow_accel.conv" in text
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.text import parse_module

    parse_module(make_context(), text, str(program)).verify()


def test_cli_too_small_scratchpad_exits_1_without_traceback(tmp_path, capsys):
    model = _onnx_file(tmp_path, big_kernel_model())
    report = tmp_path / "memory.json"
    with pytest.raises(SystemExit) as done:
        glow_compile.main([model, "--backend", "accel", "--scratchpad-kib", "1",
                           "--emit", "accel", "--memory-report", str(report)])
    assert done.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("glow-compile: error: 'glow_ir.convolution' op ")
    assert "needs at least 9472 bytes" in err and "Traceback" not in err


def test_conv_tiles_whose_windows_lie_in_the_padding():
    """A strided 1x1 convolution on a one-column input with pads: every output column's
    window lies in the padding (the output is relu(bias)); its tiles read a zero tile
    (a DMA cannot move an empty box), on the simulator and natively."""
    from onnx import TensorProto, helper, numpy_helper

    from glow_mlir.targets.accel.native import AccelNativeExecutor

    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((3, 2, 1, 1)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal((3,)).astype(np.float32), "b")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2]),
         helper.make_node("Relu", ["y"], ["z"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 7, 1])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], [w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=9)
    x = rng.standard_normal((1, 2, 7, 1)).astype(np.float32)
    want = run_onnxruntime(model, {"x": x})[0]
    for kib in (8, 64):
        compiled = glow_mlir.compile(model, backend="accel", scratchpad_kib=kib)
        np.testing.assert_allclose(compiled(x)[0], want, rtol=RTOL, atol=ATOL)
        native = AccelNativeExecutor(clone_module(compiled.module))
        np.testing.assert_allclose(native.run([x])[0], want, rtol=RTOL, atol=ATOL)
        assert any(isinstance(op, glow_accel.ShuffleOp) and op.kind == "splat"
                   for op in compiled.module.walk())


@pytest.mark.parametrize("emit,marker", [("llvm", "llvm.func @main"), ("llvm-ir", "define")])
def test_cli_emits_the_accel_programs_native_code(tmp_path, emit, marker):
    model = _onnx_file(tmp_path, model_zoo.lenet())
    out = tmp_path / "out.txt"
    glow_compile.main([model, "--backend", "accel", "--scratchpad-kib", "64", "--emit", emit,
                       "-o", str(out)])
    text = out.read_text()
    assert marker in text
    assert "glow_accel" not in text  # every accelerator op lowered
