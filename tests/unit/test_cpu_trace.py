"""Per-kernel tracing (`targets/cpu/trace.py`): Chrome trace events in the JSON object
format Perfetto and chrome://tracing load, one complete event per kernel call per run;
free when off (no clock call in the code)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import glow_mlir
from glow_mlir.ir.errors import UserError

MODEL = "examples/small_cnn.onnx"


def _x(model, seed=0):
    return np.random.default_rng(seed).standard_normal(
        model.input_shapes[model.input_names[0]]).astype(np.float32)


def check_schema(trace: dict) -> list[dict]:
    """The events of `trace`, checked as the trace viewers read them."""
    assert set(trace) >= {"traceEvents"}
    events = trace["traceEvents"]
    for e in events:
        assert e["ph"] == "X"
        assert isinstance(e["name"], str) and e["name"]
        for key in ("ts", "dur", "tts", "tdur"):  # wall and the thread's CPU clock
            assert isinstance(e[key], (int, float)) and e[key] >= 0
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        assert isinstance(e["args"], dict)
    by_thread: dict[int, list[dict]] = {}
    for e in events:
        by_thread.setdefault(e["tid"], []).append(e)
    for evs in by_thread.values():  # complete events of one thread must nest or follow
        evs = sorted(evs, key=lambda e: e["ts"])
        for a, b in zip(evs, evs[1:]):
            assert a["ts"] + a["dur"] <= b["ts"] + 1e-3, (a, b)
    return events


@pytest.mark.parametrize("threads", [1, 2])
def test_one_event_per_kernel_call_per_run(threads):
    model = glow_mlir.compile(MODEL, trace=True, num_threads=threads)
    calls = len(model.executor.tracer.calls)
    assert calls > 3
    untraced = glow_mlir.compile(MODEL, num_threads=threads)
    x = _x(model)
    for _ in range(3):
        got = model(x)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(got, untraced(x)))
    events = check_schema(json.loads(json.dumps(model.trace)))
    assert len(events) == 3 * calls
    for run in range(3):
        mine = [e for e in events if e["args"]["run"] == run]
        assert [e["args"]["call"] for e in mine] == list(range(calls))
    assert any(e["name"].startswith("convolution 1x16x32x32") for e in events)
    # what each call ran on: small_cnn's kernels are all below PARALLEL_MIN_WORK, so
    # serial at any count (every event said the model's count before)
    assert all(e["args"]["threads"] == 1 for e in events)
    assert all(e["args"]["kernel"].startswith(f"{model.executor.name}_k") for e in events)
    # the ONNX node of each instruction: the convolutions keep theirs through
    # fold-batchnorm and fuse-activations
    assert all(len(e["args"]["nodes"]) == len(e["args"]["instructions"]) for e in events)
    convs = [e["args"]["nodes"][0] for e in events
             if e["args"]["run"] == 0 and e["name"].startswith("convolution")]
    assert convs == ["conv1", "conv2", "conv3"]


@pytest.mark.parametrize("threads", [1, 2])
def test_calls_of_a_run_tile_it_on_both_clocks(threads):
    """Each call's interval ends where the next one's starts, on the wall clock and on the
    calling thread's CPU clock (`tts`, `tdur`): one clock read between two calls, each
    clock read from its own slot (a swapped or shifted slot breaks the chain)."""
    model = glow_mlir.compile(MODEL, trace=True, num_threads=threads, cache=False)
    brackets = []
    for _ in range(2):
        before = time.monotonic_ns(), time.thread_time_ns()
        model(_x(model))
        brackets.append((before, (time.monotonic_ns(), time.thread_time_ns())))
    events = check_schema(model.trace)
    for run, (before, after) in enumerate(brackets):
        mine = [e for e in events if e["args"]["run"] == run]
        assert {e["tid"] for e in mine} == {threading.get_native_id()}
        # the same clocks as Python's: the run lies within the bracket read around it
        assert before[0] / 1e3 <= mine[0]["ts"] <= mine[-1]["ts"] + mine[-1]["dur"] \
            <= after[0] / 1e3
        assert before[1] / 1e3 <= mine[0]["tts"] <= mine[-1]["tts"] + mine[-1]["tdur"] \
            <= after[1] / 1e3
        for start, length in (("ts", "dur"), ("tts", "tdur")):
            for a, b in zip(mine, mine[1:]):
                assert a[start] + a[length] == pytest.approx(b[start], abs=1e-3), (a, b)


def test_concurrent_traced_calls_keep_their_threads():
    model = glow_mlir.compile(MODEL, trace=True, num_threads=2)
    calls = len(model.executor.tracer.calls)
    pool = [threading.Thread(target=lambda: [model(_x(model)) for _ in range(5)])
            for _ in range(3)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    events = check_schema(model.trace)
    assert len(events) == 15 * calls
    assert len({e["tid"] for e in events}) == 3


def test_write_trace(tmp_path):
    model = glow_mlir.compile(MODEL, trace=True)
    model(_x(model))
    model.write_trace(tmp_path / "t.json")
    assert len(check_schema(json.loads((tmp_path / "t.json").read_text()))) > 0
    with pytest.raises(UserError, match="cannot write the trace"):
        model.write_trace(tmp_path / "missing" / "t.json")


def test_untraced_model_has_no_trace_and_no_clock():
    from glow_mlir.targets.cpu.jit import unoptimized_ir

    model = glow_mlir.compile(MODEL, cache=False, num_threads=2)
    with pytest.raises(UserError, match="without tracing"):
        _ = model.trace
    text = unoptimized_ir(model.module)
    assert "glow_clock_ns" not in text and "glow_cpu_clock_ns" not in text
    traced = glow_mlir.compile(MODEL, cache=False, trace=True)
    text = unoptimized_ir(traced.module)
    # the clocks before each kernel call and after the last (minus their declarations)
    points = len(traced.executor.tracer.calls) + 1
    assert text.count("i64 @glow_clock_ns()") - 1 == points
    assert text.count("i64 @glow_cpu_clock_ns(i32") - 1 == points


def test_trace_must_be_a_bool():
    with pytest.raises(UserError, match="trace must be True or False"):
        glow_mlir.compile(MODEL, trace="yes")


def _tool(*args):
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                          check=False)


def test_glow_run_trace(tmp_path):
    out = tmp_path / "trace.json"
    r = _tool("glow_mlir.tools.glow_run", MODEL, "--runs", "2", "--trace", str(out),
              "--threads", "2")
    assert r.returncode == 0, r.stderr
    events = check_schema(json.loads(out.read_text()))
    assert len(events) % 2 == 0 and len({e["args"]["run"] for e in events}) == 2


@pytest.mark.parametrize("tool,extra", [("glow_run", []), ("glow_compile", ["--save", "x.glow"])])
@pytest.mark.parametrize("bad,message", [("0", "must be at least 1"),
                                         ("-2", "must be at least 1"),
                                         ("two", "expected a whole number"),
                                         ("257", "must be at most 256")])
def test_bad_threads_flag(tool, extra, bad, message, tmp_path):
    r = _tool(f"glow_mlir.tools.{tool}", MODEL, "--threads", bad,
              *[str(tmp_path / e) if e.endswith(".glow") else e for e in extra])
    assert r.returncode == 1
    assert message in r.stderr and "--threads" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_threads_flag_is_the_cpu_backends():
    r = _tool("glow_mlir.tools.glow_run", MODEL, "--threads", "2", "--backend", "interpreter")
    assert r.returncode == 1 and "--threads is an option of the cpu backend" in r.stderr
    r = _tool("glow_mlir.tools.glow_run", MODEL, "--trace", "t.json", "--backend", "interpreter")
    assert r.returncode == 1 and "--trace times the cpu backend's kernels" in r.stderr


def test_threads_says_what_each_call_split_over():
    """A matrix product large enough to split says 2 at 2 threads (its kernel function
    holds the parallel loop), 1 at one thread."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((256, 192)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "mm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [130, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    for threads in (1, 2):
        model = glow_mlir.compile(onnx_model, trace=True, num_threads=threads, cache=False)
        model(_x(model))
        (event,) = model.trace["traceEvents"]
        assert event["args"]["threads"] == threads, event


def test_events_carry_the_operand_shapes():
    """Each event's `shapes` are its first instruction's operand shapes (destination
    first): how benchmarks/cpu_layers_vs_onnxruntime.py pairs layers by shape."""
    model = glow_mlir.compile(MODEL, trace=True)
    model(_x(model))
    convs = [e for e in model.trace["traceEvents"] if e["name"].startswith("convolution")]
    assert convs
    for e in convs:
        out, x, w, *_ = e["args"]["shapes"]
        assert "x".join(map(str, out)) == e["name"].split()[1]
        assert len(x) == 4 and len(w) >= 2


def test_int8_events_keep_their_onnx_nodes():
    """quantize-graph puts each quantized op (and its dequantize) where its float op was,
    so an int8 model's events name their ONNX nodes as a float model's do (they were all
    '' but the float ops', and cpu_layers_vs_onnxruntime.py could pair by shape only)."""
    rng = np.random.default_rng(0)
    batches = [{"image": rng.standard_normal((1, 3, 32, 32)).astype(np.float32)}
               for _ in range(2)]
    profile = glow_mlir.profile(MODEL, batches, backend="interpreter")
    model = glow_mlir.compile(MODEL, trace=True, profile=profile,
                              quantization=glow_mlir.QuantizationConfig())
    model(batches[0]["image"])
    events = check_schema(model.trace)
    nodes = {e["name"].split()[0]: e["args"]["nodes"] for e in events}
    convs = [e["args"]["nodes"] for e in events if e["name"].startswith("convolution")]
    assert convs == [["conv1"], ["conv2"], ["conv3"]]
    assert nodes["fully_connected"] == ["fc1"]
    assert all(n for e in events if not e["name"].startswith("quantize")
               for n in e["args"]["nodes"]), [(e["name"], e["args"]["nodes"]) for e in events]
