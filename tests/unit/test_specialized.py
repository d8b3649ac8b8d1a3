"""Compiling at the first call (`specialize="first-call"`, runtime/specialized.py): one
static compile per input signature, a bounded LRU of them, inputs checked like any model."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import glow_mlir
import glow_mlir.onnx_backend as backend
from glow_mlir.frontends.onnx import OnnxImportError, UnboundDimensionError, UnsupportedOnnxError
from glow_mlir.ir.errors import UserError
from glow_mlir.runtime.compiled_model import CompiledModel, InputError
from glow_mlir.runtime.specialized import SpecializeError, SpecializingModel


def _model(nodes, inputs, opset=17):
    graph = helper.make_graph(nodes, "g", inputs,
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _reshape_model():
    """x (n x 6, n unbound) reshaped to the run-time shape `s`, then Relu."""
    return _model([helper.make_node("Reshape", ["x", "s"], ["y"]),
                   helper.make_node("Relu", ["y"], ["z"])],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 6]),
                   helper.make_tensor_value_info("s", TensorProto.INT64, [2])])


X = np.arange(12, dtype=np.float32).reshape(2, 6) - 5.0


def _compiles(monkeypatch):
    """Counts the compiles the model makes (every one goes through compile_model)."""
    import glow_mlir.runtime.compiled_model as cm

    calls = []
    real = cm.compile_model

    def counting(*args, **kwargs):
        calls.append(kwargs.get("input_shapes"))
        return real(*args, **kwargs)

    monkeypatch.setattr(cm, "compile_model", counting)
    return calls


def _specialized(**options):
    return glow_mlir.compile(_reshape_model(), backend="interpreter", cache=False,
                             specialize="first-call", **options)


def test_unbound_dims_are_an_error_that_names_the_option():
    with pytest.raises(UnboundDimensionError, match="specialize='first-call'"):
        glow_mlir.compile(_reshape_model(), backend="interpreter", input_shapes={"s": (2,)})


def test_a_run_time_reshape_shape_compiles_at_the_first_call(monkeypatch):
    compiles = _compiles(monkeypatch)
    model = _specialized()
    assert isinstance(model, SpecializingModel) and compiles == []  # nothing before a call
    (z,) = model(X, np.array([3, 4]))
    np.testing.assert_array_equal(z, np.maximum(X.reshape(3, 4), 0))
    assert model.folded == {"s"}  # the shape became a constant; x stays an input
    assert compiles[-1] == {"x": (2, 6)}
    info = model.cache_info()
    assert (info.hits, info.misses, info.entries) == (0, 1, 1)


def test_two_signatures_compile_twice_and_a_repeat_is_a_hit(monkeypatch):
    model = _specialized()
    model(X, np.array([3, 4]))
    compiles = _compiles(monkeypatch)
    (z,) = model(X, np.array([4, 3]))  # same shapes, another value of `s`
    assert z.shape == (4, 3) and len(compiles) == 1
    (z,) = model(X[:1], np.array([2, 3]))  # another shape of x
    assert z.shape == (2, 3) and len(compiles) == 2
    (z,) = model(X, np.array([3, 4]))
    np.testing.assert_array_equal(z, np.maximum(X.reshape(3, 4), 0))
    assert len(compiles) == 2
    info = model.cache_info()
    assert (info.hits, info.misses, info.entries, info.evictions) == (1, 3, 3, 0)


def test_the_cache_evicts_the_least_recently_used(monkeypatch):
    model = _specialized(max_specializations=2)
    a, b, c = np.array([3, 4]), np.array([4, 3]), np.array([12, 1])
    model(X, a)
    model(X, b)
    model(X, a)  # a is now the most recent: b goes first
    model(X, c)
    assert model.cache_info().evictions == 1
    compiles = _compiles(monkeypatch)
    model(X, a)
    assert compiles == []
    model(X, b)
    assert len(compiles) == 1
    info = model.cache_info()
    assert (info.entries, info.max_entries, info.evictions) == (2, 2, 2)


def test_a_model_with_only_unbound_dims_specializes_on_shapes():
    model = glow_mlir.compile(
        _model([helper.make_node("Relu", ["x"], ["z"])],
               [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", -1])]),
        backend="interpreter", cache=False, specialize="first-call")
    for shape in [(2, 3), (5, 1), (2, 3)]:
        x = np.linspace(-1, 1, np.prod(shape), dtype=np.float32).reshape(shape)
        np.testing.assert_array_equal(model.run({"x": x})[0], np.maximum(x, 0))
    assert model.folded == set()
    assert model.cache_info()[:3] == (1, 2, 2)


def test_values_computed_from_inputs_fold_the_inputs_they_come_from():
    """TopK's K is `k + 1`: the trace goes through the Add to the graph input k, and not
    through Shape (x's shape is bound, its values are not needed)."""
    nodes = [helper.make_node("Add", ["k", "one"], ["k1"]),
             helper.make_node("Shape", ["x"], ["xs"]),
             helper.make_node("TopK", ["x", "k1"], ["z", "i"])]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "n"]),
         helper.make_tensor_value_info("k", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("i", TensorProto.INT64, None)],
        initializer=[helper.make_tensor("one", TensorProto.INT64, [1], [1])])
    model = glow_mlir.compile(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
                              backend="interpreter", cache=False, specialize="first-call")
    x = np.array([[3.0, 1.0, 4.0, 1.5, 9.0]], dtype=np.float32)
    z, i = model(x, np.array([1]))
    np.testing.assert_array_equal(z, [[9.0, 4.0]])
    np.testing.assert_array_equal(i, [[4, 2]])
    assert model.folded == {"k"}


@pytest.mark.parametrize("inputs, message", [
    ({"x": X}, "missing input 's'"),
    ({"x": X, "s": np.array([3, 4]), "t": X}, "unknown input 't'"),
    ({"x": X.astype(np.float64), "s": np.array([3, 4])},
     "input 'x' has dtype float64; expected float32"),
    ({"x": X[0], "s": np.array([3, 4])}, "rank 1"),
    ({"x": X.reshape(3, 4), "s": np.array([3, 4])}, "dim 1 as 6"),
])
def test_bad_inputs_are_one_input_error(inputs, message):
    model = _specialized()
    with pytest.raises(InputError, match=message):
        model.run(inputs)
    assert model.cache_info().misses == 0  # checked before anything is compiled


def test_a_wrong_count_of_positional_inputs_is_an_input_error():
    with pytest.raises(InputError, match="takes 2 input"):
        _specialized()(X)


def test_a_value_the_model_cannot_use_is_an_input_error_naming_it():
    """The importer's message names a node; the user gave an input: both are said."""
    model = _specialized()
    with pytest.raises(InputError, match=r"input\(s\) 's' = \[5 5\] make a model that does "
                                         r"not compile: .*Reshape") as err:
        model(X, np.array([5, 5]))  # 12 elements cannot be 5x5
    assert isinstance(err.value.__cause__, OnnxImportError)
    assert model.cache_info().entries == 0


@pytest.mark.parametrize("options, message", [
    ({"specialize": "always"}, "'first-call' or None"),
    ({"specialize": "first-call", "input_shapes": {"n": 2}}, "input_shapes"),
    ({"specialize": "first-call", "max_specializations": 0}, "positive int"),
    ({"max_specializations": 3}, "give that too"),
])
def test_bad_options_are_user_errors(options, message):
    with pytest.raises(SpecializeError, match=message):
        glow_mlir.compile(_reshape_model(), backend="interpreter", **options)


@pytest.mark.parametrize("options, message", [
    ({"backend": "nope"}, "nope"),
    ({"backend": "cpu", "num_threads": 0}, "num_threads"),
    ({"backend": "interpreter", "bogus_option": 1}, "unknown option 'bogus_option'"),
    ({"backend": "accel", "trace": True}, "unknown option 'trace' for backend 'accel'"),
    ({"backend": "interpreter", "disable_passes": ["no-such-pass"]}, "no-such-pass"),
])
def test_options_are_checked_when_the_model_is_made(options, message):
    """As compile() checks them without specialize: not first at the first call."""
    with pytest.raises(UserError, match=message):
        glow_mlir.compile(_reshape_model(), cache=False, specialize="first-call", **options)
    with pytest.raises(UserError, match=message):  # the same check, the same words
        glow_mlir.compile(_reshape_model(), cache=False, input_shapes={"n": 2}, **options)


def test_first_calls_from_threads_at_once_all_compile(monkeypatch):
    """Threads whose first calls meet in the compile (held at a barrier there) learn the
    folded inputs once, under the model's lock, and each gets the right output."""
    import threading

    import glow_mlir.runtime.compiled_model as cm

    threads = 4
    meet = threading.Barrier(threads, timeout=2)
    real = cm.compile_model

    def meeting(*args, **kwargs):
        try:  # with the lock, one thread compiles at a time: nobody comes to meet it
            meet.wait()
        except threading.BrokenBarrierError:
            pass
        return real(*args, **kwargs)

    monkeypatch.setattr(cm, "compile_model", meeting)
    model = _specialized()
    results, errors = [None] * threads, []

    def call(i):
        try:
            results[i] = model(X, np.array([3, 4]))[0]
        except Exception as err:  # noqa: BLE001 - reported by the assertion below
            errors.append(err)

    workers = [threading.Thread(target=call, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []
    for z in results:
        np.testing.assert_array_equal(z, np.maximum(X.reshape(3, 4), 0))
    assert model.folded == {"s"} and model.cache_info().entries == 1


def test_non_tensor_inputs_cannot_be_specialized():
    model = _reshape_model()
    model.graph.input[1].CopyFrom(helper.make_tensor_sequence_value_info(
        "s", TensorProto.INT64, None))
    with pytest.raises(SpecializeError, match="tensor inputs only, not 's' \\(sequence_type"):
        glow_mlir.compile(model, backend="interpreter", specialize="first-call")
    with pytest.raises(UnboundDimensionError):  # the backend keeps the import's error
        backend.prepare(model)


def test_onnx_backend_prepares_models_with_run_time_shapes():
    rep = backend.prepare(_reshape_model())
    assert isinstance(rep.compiled, SpecializingModel)
    (z,) = rep.run([X, np.array([4, 3])])
    np.testing.assert_array_equal(z, np.maximum(X.reshape(4, 3), 0))
    (z,) = backend.run_node(helper.make_node("Reshape", ["x", "s"], ["z"]),
                            [X, np.array([12])])
    np.testing.assert_array_equal(z, X.reshape(12))


def test_onnx_backend_compiles_static_models_ahead():
    graph = _model([helper.make_node("Relu", ["x"], ["z"])],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])])
    assert isinstance(backend.prepare(graph).compiled, CompiledModel)


def test_onnx_backend_keeps_other_unsupported_features_an_error():
    model = _reshape_model()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 2
    model.graph.node[1].op_type = "NoSuchOp"
    with pytest.raises(UnsupportedOnnxError, match="NoSuchOp"):
        backend.prepare(model)


def test_a_value_made_inside_a_subgraph_folds_the_integer_inputs():
    """A shape computed inside a branch is not traced through the branch's body: every
    integer input is folded instead (the float data stays an input)."""
    then = helper.make_graph(
        [helper.make_node("Add", ["s", "zero"], ["s2"]),
         helper.make_node("Reshape", ["x", "s2"], ["t"])], "then", [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)],
        initializer=[helper.make_tensor("zero", TensorProto.INT64, [1], [0])])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
    graph = helper.make_graph(
        [helper.make_node("If", ["yes"], ["z"], then_branch=then, else_branch=other)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
         helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
        initializer=[helper.make_tensor("yes", TensorProto.BOOL, [], [True])])
    model = glow_mlir.compile(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), backend="interpreter", cache=False,
        specialize="first-call")
    (z,) = model(X, np.array([4, 3]))
    np.testing.assert_array_equal(z, X.reshape(4, 3))
    assert model.folded == {"s"}


@pytest.mark.parametrize("source", ["examples/conv_relu.mlir", ("p.pb", "i.pb")])
def test_only_onnx_models_specialize(source):
    """A model in IR was refused as 'not an ONNX model: give it a .mlir name' (it had
    one)."""
    if isinstance(source, str):
        from pathlib import Path

        source = str(Path(__file__).resolve().parents[2] / source)
    with pytest.raises(SpecializeError, match="compiles ONNX models"):
        glow_mlir.compile(source, specialize="first-call")


def test_what_a_compiled_model_tells_is_the_last_runs_function():
    """input_shapes, memory, output_shapes, ... as a CompiledModel has them: of the function
    the last run used (a hit included), every input's shape (the folded ones too)."""
    model = _specialized()
    with pytest.raises(SpecializeError, match="run it first"):
        model.input_shapes  # noqa: B018
    with pytest.raises(SpecializeError, match="run it first"):
        model.memory  # noqa: B018
    model(X, np.array([3, 4]))
    first = model.last
    assert model.input_shapes == {"x": (2, 6), "s": (2,)}
    assert model.input_dtypes == {"x": np.dtype(np.float32), "s": np.dtype(np.int64)}
    assert model.output_shapes == {"z": (3, 4)}
    assert model.memory == first.memory and model.memory.mutable_bytes > 0
    assert model.backend == "interpreter" and model.origin == "compiled"
    assert model.module is first.module and model.executor is first.executor
    x = np.ones((3, 6), np.float32)
    model(x, np.array([9, 2]))
    assert model.last is not first and model.output_shapes == {"z": (9, 2)}
    assert model.input_shapes["x"] == (3, 6)
    model(X, np.array([3, 4]))  # a hit: the first function again
    assert model.last is first and model.output_shapes == {"z": (3, 4)}


def test_a_specializing_model_is_not_saved_whole(tmp_path):
    model = _specialized()
    # before a run, model.last raises: the message says to run first
    with pytest.raises(SpecializeError, match=r"run it first, then save model\.last"):
        model.save(tmp_path / "m.glow")
    model(X, np.array([3, 4]))
    with pytest.raises(SpecializeError, match=r"save model\.last.*\['s'\]"):
        model.save(tmp_path / "m.glow")
