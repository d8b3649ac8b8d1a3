"""The Python API: glow_mlir.compile and CompiledModel (README: ONNX models from Python)."""

import numpy as np
import pytest
from onnx import helper

import glow_mlir
from glow_mlir.backends import BackendError
from glow_mlir.ir.errors import UserError
from glow_mlir.runtime.compiled_model import CompiledModel, InputError
from onnx_testing import make_model, rand, run_onnxruntime

A, B = rand(2, 3, seed=1), rand(3, seed=2)


@pytest.fixture(scope="module")
def model_proto():
    nodes = [
        helper.make_node("Add", ["a", "b"], ["sum"]),
        helper.make_node("Relu", ["sum"], ["relu"]),
    ]
    return make_model(nodes, {"a": A, "b": B}, ["relu", "sum"])


@pytest.fixture(scope="module")
def compiled(model_proto):
    return glow_mlir.compile(model_proto)


def test_compile_knows_inputs_and_outputs(compiled):
    assert isinstance(compiled, CompiledModel) and isinstance(compiled, glow_mlir.CompiledModel)
    assert compiled.input_names == ["a", "b"]
    assert compiled.input_shapes == {"a": (2, 3), "b": (3,)}
    assert compiled.input_dtypes == {"a": np.float32, "b": np.float32}
    assert compiled.output_names == ["relu", "sum"]
    assert compiled.module.ops.first is not None


def test_run_and_call_give_outputs_in_graph_order(compiled, model_proto):
    expected = run_onnxruntime(model_proto, {"a": A, "b": B})
    by_name = compiled.run({"a": A, "b": B})
    positional = compiled(A, B)
    for e, x, y in zip(expected, by_name, positional):
        np.testing.assert_allclose(x, e, rtol=1e-6)
        np.testing.assert_array_equal(x, y)


def test_call_takes_one_dict_of_named_inputs(compiled):
    """`model({"a": x, ...})`, as onnxruntime's run takes feeds, is `model.run(...)`; a dict
    with a wrong name is checked as run checks it."""
    np.testing.assert_array_equal(compiled({"b": B, "a": A})[1], compiled(A, B)[1])
    np.testing.assert_array_equal(compiled(b=B, a=A)[1], compiled(A, B)[1])
    with pytest.raises(InputError, match="by position or by name, not both"):
        compiled(A, b=B)
    with pytest.raises(InputError, match="unknown input 'c'.*missing input 'b'"):
        compiled({"a": A, "c": B})


def test_compile_from_path_and_bytes(tmp_path, model_proto):
    path = tmp_path / "m.onnx"
    path.write_bytes(model_proto.SerializeToString())
    for source in (str(path), path, model_proto.SerializeToString()):
        np.testing.assert_array_equal(glow_mlir.compile(source)(A, B)[0], np.maximum(A + B, 0))


@pytest.mark.parametrize(
    "inputs,message",
    [
        ({"a": A}, "missing input 'b' \\(expected shape 3, dtype float32\\)"),
        ({"a": A, "b": B, "c": B}, "unknown input 'c' \\(the model's inputs: 'a', 'b'\\)"),
        (
            {"a": A.T, "b": B},
            "input 'a' has shape 3x2, dtype float32; expected shape 2x3, dtype float32",
        ),
        (
            {"a": A.astype(np.float64), "b": B},
            "input 'a' has shape 2x3, dtype float64; expected shape 2x3, dtype float32",
        ),
        ({"a": A, "b": [1.0, 2.0, 3.0]}, "input 'b' has shape 3, dtype float64"),
    ],
)
def test_run_rejects_bad_inputs(compiled, inputs, message):
    with pytest.raises(InputError, match=message) as info:
        compiled.run(inputs)
    assert isinstance(info.value, UserError)


def test_input_errors_are_value_errors(compiled):
    """Callers catch a wrong input value as ValueError (InputError was only a UserError)."""
    for bad in ({"a": A.T, "b": B}, {"a": A}, [A, B]):
        with pytest.raises(ValueError, match="input"):
            compiled.run(bad)
    with pytest.raises(ValueError, match="takes 2 input"):
        compiled(A)


def test_every_input_problem_in_one_message(compiled):
    with pytest.raises(
        InputError, match="unknown input 'x'.*missing input 'a'.*input 'b' has shape 4"
    ):
        compiled.run({"x": A, "b": rand(4)})


def test_call_checks_the_number_of_inputs(compiled):
    with pytest.raises(InputError, match="takes 2 input\\(s\\) \\(a, b\\), got 1"):
        compiled(A)
    with pytest.raises(InputError, match="must be a dict"):
        compiled.run([A, B])


@pytest.mark.parametrize("backend,message", [
    ("tpu", "unknown backend 'tpu' \\(backends: 'interpreter', 'cpu', 'accel'\\)"),
])
def test_backends_not_available(model_proto, backend, message):
    with pytest.raises(BackendError, match=message):
        glow_mlir.compile(model_proto, backend=backend)


def test_input_shapes_bind_dynamic_dimensions():
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], {"x": rand(2, 3)}, ["y"],
                       dynamic={"x": ["batch", 3]})
    compiled = glow_mlir.compile(model, input_shapes={"x": (4, 3)})
    assert compiled.input_shapes == {"x": (4, 3)}
    assert compiled(rand(4, 3))[0].shape == (4, 3)
    with pytest.raises(UserError, match="'batch'"):
        glow_mlir.compile(model)


def test_outputs_do_not_alias_inputs():
    model = make_model([helper.make_node("Identity", ["x"], ["y"])], {"x": A}, ["y"])
    x = A.copy()
    y = glow_mlir.compile(model)(x)[0]
    y[...] = 0
    np.testing.assert_array_equal(x, A)


def test_the_default_backend_is_native_code(compiled):
    """compile() without a backend gives native code (issue 14: cpu compiles small_cnn in
    about 2 s), and the Python default is the one the tools use."""
    import inspect

    from glow_mlir.backends import DEFAULT_BACKEND

    assert compiled.backend == DEFAULT_BACKEND == "cpu"
    assert inspect.signature(glow_mlir.compile).parameters["backend"].default == DEFAULT_BACKEND
    assert compiled.executor.entry is not None  # a JIT-compiled entry point


def test_interpreter_runs_the_planned_instruction_ir(model_proto):
    """compile(backend="interpreter") goes through IRGen, the IR optimizer and memory
    planning; `memory` reports what that plan needs."""
    from glow_mlir.dialects import glow_ir

    compiled = glow_mlir.compile(model_proto, backend="interpreter")
    funcs = [op for op in compiled.module.walk() if isinstance(op, glow_ir.FuncOp)]
    assert len(funcs) == 1 and funcs[0].activations_size is not None
    m = compiled.memory
    assert m.mutable_bytes == (6 + 3 + 6 + 6) * 4  # inputs a, b; outputs relu, sum
    assert m.constant_bytes == 0
    assert m.peak_live_bytes <= m.activations_bytes <= m.unshared_bytes
    assert set(m.as_dict()) >= {"constant_bytes", "mutable_bytes", "activations_bytes",
                                "peak_live_bytes", "unshared_bytes"}


def test_outputs_do_not_alias_between_runs(compiled):
    """Each run returns fresh arrays: a later run must not change an earlier result."""
    first = compiled(A, B)
    kept = [x.copy() for x in first]
    compiled(A * 2, B * 2)
    for k, x in zip(kept, first):
        np.testing.assert_array_equal(k, x)


def test_cpu_backend_needs_the_memory_plan(model_proto):
    """Its code addresses every buffer at a planned offset: a clear UserError up front, not
    the code generator's ValueError half-way."""
    with pytest.raises(UserError, match="the cpu backend needs a memory plan"):
        glow_mlir.compile(model_proto, backend="cpu", disable_passes=["plan-memory"])


@pytest.mark.parametrize("backend", ["interpreter", "cpu", "accel"])
def test_planned_memory_larger_than_the_machine(monkeypatch, backend):
    """Each tensor fits but weights, inputs, outputs and arena together do not: a
    UserError naming the largest buffer before the executor allocates them."""
    from glow_mlir.ir import memory_limits

    x = np.ones(1000, np.float32)  # 4000 bytes per tensor; a, b, sum and relu: 16000
    nodes = [helper.make_node("Add", ["a", "b"], ["sum"]), helper.make_node("Relu", ["sum"], ["y"])]
    monkeypatch.setattr(memory_limits, "machine_memory_bytes", lambda: 10_000)
    with pytest.raises(UserError, match=r"running @\w+ needs \d+ bytes \(.*\), more than this "
                                        r"machine's memory \(10000 bytes.*the largest buffer is "
                                        r"\w+ [@%]\w+, 4000 bytes"):
        # accel: a scratchpad that fits the pretended machine (the default 256 KiB would not)
        options = {"scratchpad_kib": 4} if backend == "accel" else {}
        glow_mlir.compile(make_model(nodes, {"a": x, "b": x}, ["y"]), backend=backend, **options)


def test_compile_pauses_the_cyclic_collector(model_proto, monkeypatch):
    """The collector's passes over the IR's millions of objects were a quarter of a large
    compile's CPU time: compile() runs with it paused, and restores it (also after an
    error)."""
    import gc

    import glow_mlir.runtime.compiled_model as compiled_model

    seen = []
    original = compiled_model.optimize_graph

    def recording(*args, **kwargs):
        seen.append(gc.isenabled())
        return original(*args, **kwargs)

    monkeypatch.setattr(compiled_model, "optimize_graph", recording)
    assert gc.isenabled()
    glow_mlir.compile(model_proto, backend="interpreter", cache=False)
    assert seen == [False] and gc.isenabled()

    def failing(*args, **kwargs):
        raise UserError("no")

    monkeypatch.setattr(compiled_model, "optimize_graph", failing)
    with pytest.raises(UserError):
        glow_mlir.compile(model_proto, backend="interpreter", cache=False)
    assert gc.isenabled()
