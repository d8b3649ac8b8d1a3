"""ONNX Loop: with a trip count or condition known only at run time, a `glow.loop` on the
interpreter and cpu against onnxruntime (no iteration, early exits, the trip count
reached, values swapped between iterations, an If inside the body), and its scan outputs
bounded by a constant trip count; known at import, unrolled with its scan outputs; the
errors."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

import glow_mlir
from glow_mlir.dialects import glow
from glow_mlir.frontends.onnx import import_onnx
from glow_mlir.frontends.onnx.errors import OnnxImportError, UnsupportedOnnxError
from onnx_testing import IR_VERSION, run_onnxruntime

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
BACKENDS = ("interpreter", "cpu")
n = helper.make_node
info = helper.make_tensor_value_info


def _model(nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "g", inputs, [info(o, F, None) for o in outputs],
                              list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=IR_VERSION)


def _body(nodes, carried, outputs, inits=()):
    return helper.make_graph(nodes, "body",
                             [info("i", I64, []), info("c_in", B, []),
                              *(info(v, F, [2, 3]) for v in carried)],
                             [info(o, t, None) for o, t in outputs], list(inits))


def runtime_model():
    """v = v / 2 + x + i while i < n and sum(v + i) < 40 (the condition is the body's),
    starting while `c`."""
    body = _body([n("Mul", ["v_in", "half"], ["v0"]), n("Add", ["v0", "x"], ["v_out"]),
                  n("Cast", ["i"], ["fi"], to=F), n("Add", ["v_out", "fi"], ["w"]),
                  n("ReduceSum", ["w"], ["s"], keepdims=0),
                  n("Less", ["s", "limit"], ["c_out"])],
                 ["v_in"], [("c_out", B), ("v_out", F)],
                 [helper.make_tensor("half", F, [], [0.5])])
    return _model([n("Loop", ["n", "c", "x"], ["y"], body=body, name="loop1")],
                  [info("x", F, [2, 3]), info("n", I64, []), info("c", B, [])], ["y"],
                  [helper.make_tensor("limit", F, [], [40.0])])


def swap_model():
    """(a, b) -> (b, a + b) n times, no condition: the next value of a carried value is
    another carried value."""
    body = _body([n("Add", ["a", "b"], ["ab"]), n("Identity", ["c_in"], ["c_out"]),
                  n("Identity", ["b"], ["b_out"])],
                 ["a", "b"], [("c_out", B), ("b_out", F), ("ab", F)])
    return _model([n("Loop", ["n", "", "x", "x2"], ["p", "q"], body=body, name="swap")],
                  [info("x", F, [2, 3]), info("x2", F, [2, 3]), info("n", I64, [])],
                  ["p", "q"])


def if_in_loop_model():
    """v = v - 1 if sum(v) > 0 else v + 2, n times: an If in the body, using the body's
    value and the outer x."""
    then_g = helper.make_graph([n("Sub", ["v", "one"], ["t"])], "then", [],
                               [info("t", F, None)])
    else_g = helper.make_graph([n("Add", ["v", "x"], ["e"])], "else", [],
                               [info("e", F, None)])
    body = _body([n("ReduceSum", ["v"], ["s"], keepdims=0), n("Greater", ["s", "zero"], ["k"]),
                  n("If", ["k"], ["v_out"], then_branch=then_g, else_branch=else_g,
                    name="inner_if"),
                  n("Identity", ["c_in"], ["c_out"])],
                 ["v"], [("c_out", B), ("v_out", F)])
    return _model([n("Loop", ["n", "", "x"], ["y"], body=body, name="loop_if")],
                  [info("x", F, [2, 3]), info("n", I64, [])], ["y"],
                  [helper.make_tensor("one", F, [], [1.0]),
                   helper.make_tensor("zero", F, [], [0.0])])


def unrolled_model(trips: int = 4):
    """A constant trip count and no condition: unrolled; a scan output of v."""
    body = _body([n("Cast", ["i"], ["fi"], to=F), n("Mul", ["v_in", "fi"], ["v0"]),
                  n("Add", ["v0", "x"], ["v_out"]), n("Identity", ["c_in"], ["c_out"]),
                  n("Tanh", ["v_out"], ["scan"])],
                 ["v_in"], [("c_out", B), ("v_out", F), ("scan", F)])
    return _model([n("Loop", ["m", "", "x"], ["y", "ys"], body=body, name="unrolled")],
                  [info("x", F, [2, 3])], ["y", "ys"],
                  [helper.make_tensor("m", I64, [], [trips])])


def loop_in_if_model():
    """If sum(x) > 0: the swap loop's body n times on (x, x); else 3x: a glow.loop in a
    glow.if branch."""
    body = _body([n("Add", ["a", "b"], ["ab"]), n("Identity", ["c_in"], ["c_out"]),
                  n("Identity", ["b"], ["b_out"])],
                 ["a", "b"], [("c_out", B), ("b_out", F), ("ab", F)])
    then_g = helper.make_graph(
        [n("Loop", ["n", "", "x", "x"], ["p", "q"], body=body, name="inner_loop"),
         n("Sub", ["q", "p"], ["t"])], "then", [], [info("t", F, None)])
    else_g = helper.make_graph([n("Mul", ["x", "three"], ["e"])], "else", [],
                               [info("e", F, None)])
    return _model([n("ReduceSum", ["x"], ["s"], keepdims=0), n("Greater", ["s", "zero"], ["k"]),
                   n("If", ["k"], ["y"], then_branch=then_g, else_branch=else_g)],
                  [info("x", F, [2, 3]), info("n", I64, [])], ["y"],
                  [helper.make_tensor("three", F, [], [3.0]),
                   helper.make_tensor("zero", F, [], [0.0])])


MODELS = {"runtime": runtime_model, "swap": swap_model, "if_in_loop": if_in_loop_model,
          "loop_in_if": loop_in_if_model, "unrolled": unrolled_model}


def _feeds(name: str, x: np.ndarray, trips: int, cond: bool = True) -> dict:
    feeds: dict = {"x": x}
    if name != "unrolled":
        feeds["n"] = np.array(trips, np.int64)
    if name == "runtime":
        feeds["c"] = np.array(cond)
    if name == "swap":
        feeds["x2"] = (x * 0.5 + 1).astype(np.float32)
    order = [i.name for i in MODELS[name]().graph.input]  # positional users need it
    return {k: feeds[k] for k in order}


@functools.cache
def _compiled(name: str, backend: str):
    return glow_mlir.compile(MODELS[name](), backend=backend, cache=False)


@pytest.fixture(autouse=True, scope="module")
def _forget_compiled():
    """The compiled models live for this module only (as in test_control_flow_if)."""
    yield
    _compiled.cache_clear()


def _check(name: str, backend: str, feeds: dict) -> None:
    want = run_onnxruntime(MODELS[name](), feeds)
    got = _compiled(name, backend).run(feeds)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


X = (np.arange(6, dtype=np.float32).reshape(2, 3) - 2) / 10


def test_imports():
    assert any(isinstance(op, glow.LoopOp) for op in import_onnx(runtime_model()).walk())
    nested = import_onnx(if_in_loop_model())
    loops = [op for op in nested.walk() if isinstance(op, glow.LoopOp)]
    assert len(loops) == 1 and any(isinstance(op, glow.IfOp) for op in loops[0].walk())
    unrolled = import_onnx(unrolled_model())
    assert not any(isinstance(op, (glow.LoopOp, glow.IfOp)) for op in unrolled.walk())


@pytest.mark.parametrize("backend", BACKENDS)
def test_runtime_trip_count_and_condition(backend):
    """No iteration (0 trips, or false on entry), the trip count reached, and an exit
    by the body's condition (100 trips asked, the sum passes 40 after a few)."""
    module = import_onnx(runtime_model())
    for trips in (0, 1, 3, 100):
        for cond in (True, False):
            _check("runtime", backend, _feeds("runtime", X, trips, cond))
    from glow_mlir.semantics.graph_evaluator import evaluate_module
    exits_early = evaluate_module(module, [X, np.array(100), np.array(True)])[0]
    runs_out = evaluate_module(module, [X, np.array(3), np.array(True)])[0]
    assert not np.array_equal(exits_early, runs_out)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["swap", "if_in_loop", "loop_in_if"])
def test_carried_values_and_nested_control_flow(name, backend):
    for trips in (0, 1, 2, 5):
        for x in (X, -X - 0.5):  # loop_in_if: both branches
            _check(name, backend, _feeds(name, x, trips))


@pytest.mark.parametrize("backend", BACKENDS)
def test_unrolled_loop_with_scan_outputs(backend):
    _check("unrolled", backend, _feeds("unrolled", X, 0))


def test_a_long_constant_loop_is_a_glow_loop():
    """Beyond MAX_UNROLLED iterations, a constant trip count still runs (as a loop)."""
    from glow_mlir.frontends.onnx.converters.control_flow import MAX_UNROLLED

    body = _body([n("Mul", ["v_in", "half"], ["v_out"]), n("Identity", ["c_in"], ["c_out"])],
                 ["v_in"], [("c_out", B), ("v_out", F)],
                 [helper.make_tensor("half", F, [], [0.999])])
    model = _model([n("Loop", ["m", "", "x"], ["y"], body=body)], [info("x", F, [2, 3])],
                   ["y"], [helper.make_tensor("m", I64, [], [MAX_UNROLLED + 10])])
    assert any(isinstance(op, glow.LoopOp) for op in import_onnx(model).walk())
    got = glow_mlir.compile(model, backend="cpu", cache=False).run({"x": X})[0]
    np.testing.assert_allclose(got, run_onnxruntime(model, {"x": X})[0], rtol=1e-4)


@settings(max_examples=25)
@given(st.integers(0, 2**31 - 1), st.integers(0, 12), st.booleans(),
       st.sampled_from(BACKENDS))
def test_random_trips_and_conditions_match_onnxruntime(seed, trips, cond, backend):
    x = np.random.default_rng(seed).standard_normal((2, 3)).astype(np.float32)
    for name in ("runtime", "swap", "if_in_loop", "loop_in_if"):
        _check(name, backend, _feeds(name, x, trips, cond))


def scanning_model(trips: int, limit: float, after: list | None = None,
                   outputs: tuple[str, ...] = ("y", "ys", "is")):
    """v = v / 2 + x while sum(v) < limit (the body's condition, computed at run time),
    at most `trips` times, starting while `c`; scan outputs tanh(v) and the iteration
    number; `after`: nodes reading them."""
    body = _body([n("Mul", ["v_in", "half"], ["v0"]), n("Add", ["v0", "x"], ["v_out"]),
                  n("ReduceSum", ["v_out"], ["s"], keepdims=0),
                  n("Less", ["s", "limit"], ["c_out"]), n("Tanh", ["v_out"], ["scan"]),
                  n("Cast", ["i"], ["scan_i"], to=F)],
                 ["v_in"], [("c_out", B), ("v_out", F), ("scan", F), ("scan_i", F)],
                 [helper.make_tensor("half", F, [], [0.5])])
    return _model([n("Loop", ["m", "c", "x"], ["y", "ys", "is"], body=body, name="scanning"),
                   *(after or [])],
                  [info("x", F, [2, 3]), info("c", B, [])], list(outputs),
                  [helper.make_tensor("m", I64, [], [trips]),
                   helper.make_tensor("limit", F, [], [limit]),
                   helper.make_tensor("rows", I64, [2], [1, 3])])


@pytest.mark.parametrize("backend", BACKENDS)
def test_scan_outputs_of_a_runtime_loop_match_onnxruntime(backend):
    """The scan outputs' length is the iterations run (none, some, the trip count M),
    known at run time; M bounds them."""
    for limit in (0.5, 0.58, 5.0):  # stops after 2 and 4 iterations, or runs all 10
        model = scanning_model(10, limit)
        compiled = glow_mlir.compile(model, backend=backend, cache=False, progress=False)
        assert compiled.output_shapes["ys"] == (10, 2, 3)  # the bound
        for cond in (True, False):
            feeds = {"x": X, "c": np.array(cond)}
            for got, want in zip(compiled.run(feeds), run_onnxruntime(model, feeds)):
                assert got.shape == want.shape
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nodes_reading_scan_outputs_carry_their_length(backend):
    after = [n("Slice", ["ys", "rows", "rows_end", "axes"], ["tail"]),
             n("Gather", ["ys", "zero_i"], ["first"], axis=1),
             n("Mul", ["ys", "two"], ["twice"])]
    model = scanning_model(10, 0.58, after, ("tail", "twice", "first"))
    model.graph.initializer.extend([
        helper.make_tensor("rows_end", I64, [2], [2**62, 3]),
        helper.make_tensor("axes", I64, [2], [0, 2]),
        helper.make_tensor("zero_i", I64, [], [0]),
        helper.make_tensor("two", F, [], [2.0])])
    compiled = glow_mlir.compile(model, backend=backend, cache=False, progress=False)
    feeds = {"x": X, "c": np.array(True)}
    wants = run_onnxruntime(model, feeds)
    assert wants[0].shape[0] < 9  # fewer rows than the bound
    for got, want in zip(compiled.run(feeds), wants):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_scan_outputs_without_a_bound_are_unsupported():
    body = _body([n("Identity", ["v_in"], ["v_out"]), n("Identity", ["c_in"], ["c_out"]),
                  n("Tanh", ["v_in"], ["scan"])],
                 ["v_in"], [("c_out", B), ("v_out", F), ("scan", F)])
    model = _model([n("Loop", ["n", "", "x"], ["y", "ys"], body=body, name="scanning")],
                   [info("x", F, [2, 3]), info("n", I64, [])], ["y", "ys"])
    with pytest.raises(UnsupportedOnnxError, match=r"Loop: 1 scan output\(s\) need a bound on "
                                                   r"the number of iterations.*the trip count "
                                                   r"M \(input #0 'n'\) is computed at run time"
                                                   r".*'scanning'"):
        import_onnx(model)


def test_scan_outputs_of_a_loop_without_a_usable_bound_are_unsupported():
    from glow_mlir.frontends.onnx.converters.control_flow import MAX_SCAN_ROWS

    model = scanning_model(2**63 - 1, 0.5)  # what exporters write for a while loop
    with pytest.raises(UnsupportedOnnxError, match=rf"bounded by the trip count M = "
                                                   rf"{2**63 - 1}, more than the "
                                                   rf"{MAX_SCAN_ROWS} rows.*'scanning'"):
        import_onnx(model)


def test_a_loop_in_a_branch_giving_its_scan_output_is_unsupported():
    loop = scanning_model(10, 0.5).graph.node[0]
    then_g = helper.make_graph([loop], "then", [], [info("ys", F, None)],
                               list(scanning_model(10, 0.5).graph.initializer))
    else_g = helper.make_graph([n("Identity", ["x"], ["e"])], "else", [], [info("e", F, None)])
    model = _model([n("If", ["c"], ["out"], then_branch=then_g, else_branch=else_g,
                      name="branching")],
                   [info("x", F, [2, 3]), info("c", B, [])], ["out"])
    with pytest.raises(UnsupportedOnnxError, match=r"output #0 'ys' of subgraph 'then' is "
                                                   r"Loop's output.*'branching'"):
        import_onnx(model)


def test_an_unrolled_loop_stacking_a_bounded_value_is_unsupported():
    body = _body([n("Identity", ["v_in"], ["v_out"]), n("Identity", ["c_in"], ["c_out"]),
                  n("Identity", ["nz"], ["scan"])],
                 ["v_in"], [("c_out", B), ("v_out", F), ("scan", F)])
    model = _model([n("NonZero", ["x"], ["nz"]),
                    n("Loop", ["m", "", "x"], ["y", "ys"], body=body, name="stacking")],
                   [info("x", F, [2, 3])], ["y", "ys"], [helper.make_tensor("m", I64, [], [3])])
    with pytest.raises(UnsupportedOnnxError, match=r"Loop: a scan output is NonZero's output, "
                                                   r"whose dim 1 is known only at run time.*"
                                                   r"'stacking'"):
        import_onnx(model)


@pytest.mark.parametrize("backend", BACKENDS)
def test_scan_outputs_of_a_long_constant_loop_match_onnxruntime(backend):
    """Beyond MAX_UNROLLED iterations, a constant loop with a scan output is a glow.loop
    bounded by its trip count (all rows filled)."""
    from glow_mlir.frontends.onnx.converters.control_flow import MAX_UNROLLED

    model = unrolled_model(MAX_UNROLLED + 1)
    assert any(isinstance(op, glow.LoopOp) for op in import_onnx(model).walk())
    got = glow_mlir.compile(model, backend=backend, cache=False, progress=False).run({"x": X})
    for g, w in zip(got, run_onnxruntime(model, {"x": X})):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_a_carried_value_that_changes_shape_is_an_error_naming_the_node():
    body = _body([n("ReduceSum", ["v_in"], ["v_out"], keepdims=0),
                  n("Identity", ["c_in"], ["c_out"])],
                 ["v_in"], [("c_out", B), ("v_out", F)])
    model = _model([n("Loop", ["n", "", "x"], ["y"], body=body, name="shrinking")],
                   [info("x", F, [2, 3]), info("n", I64, [])], ["y"])
    with pytest.raises(OnnxImportError, match=r"node 'shrinking' \(Loop\): carried value #0 "
                                              r"is 2x3 f32 on entry but scalar f32 after"):
        import_onnx(model)


def test_tracing_refuses_a_loop_at_the_op():
    from glow_mlir.ir.text import DiagnosticError

    with pytest.raises(DiagnosticError, match=r"'glow_ir.loop' op cannot be traced"):
        glow_mlir.compile(runtime_model(), backend="cpu", trace=True, cache=False)


NESTED = """
func.func @nested(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = glow.loop %m, %c, %x : tensor<i64>, tensor<i1>, tensor<4xf32> -> (tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %v: tensor<4xf32>):
    %inner = glow.loop %i, %c, %v : tensor<i64>, tensor<i1>, tensor<4xf32> -> (tensor<4xf32>) {
    ^bb0(%j: tensor<i64>, %w: tensor<4xf32>):
      %jf = glow.convert_to %j : tensor<i64> -> tensor<f32>
      %b = glow.broadcast %jf {axis = 1 : i64} : tensor<f32> -> tensor<4xf32>
      %n = glow.add %w, %b : tensor<4xf32>
      %h = glow.mul %n, %x : tensor<4xf32>
      glow.yield %c, %h : tensor<i1>, tensor<4xf32>
    }
    glow.yield %c, %inner : tensor<i1>, tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_loop_in_a_loop_body_matches_the_evaluator(backend):
    """The inner trip count is the outer iteration number; the inner body uses the
    outer body's value and the function's input."""
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.text import parse_module
    from glow_mlir.semantics.graph_evaluator import evaluate_module

    compiled = glow_mlir.compile(parse_module(make_context(), NESTED), backend=backend,
                                 cache=False)
    x = np.array([0.5, -0.2, 0.3, 0.9], np.float32)
    for cond in (False, True):
        for trips in (0, 1, 4):
            inputs = [np.array(trips, np.int64), np.array(cond), x]
            want = evaluate_module(parse_module(make_context(), NESTED), inputs)[0]
            got = compiled.run(dict(zip(compiled.input_names, inputs)))[0]
            np.testing.assert_allclose(got, want, rtol=1e-6)
    assert not np.allclose(want, x)  # the last (4 trips, true) did iterate


def slice_by_iteration_model():
    """y += x[i:i+1] for each iteration i (ONNX's test_loop11): the body slices by the
    iteration number, which only unrolling makes a constant."""
    body = helper.make_graph(
        [n("Identity", ["c_in"], ["c_out"]),
         n("Add", ["i", "one"], ["end"]),
         n("Unsqueeze", ["i", "axis0"], ["start1"]), n("Unsqueeze", ["end", "axis0"], ["end1"]),
         n("Slice", ["x", "start1", "end1"], ["row"]), n("Add", ["y_in", "row"], ["y_out"])],
        "body", [info("i", I64, []), info("c_in", B, []), info("y_in", F, [1])],
        [info("c_out", B, []), info("y_out", F, [1])],
        [helper.make_tensor("one", I64, [], [1]), helper.make_tensor("axis0", I64, [1], [0])])
    return _model([n("Loop", ["n", "c", "y"], ["out"], body=body, name="slicing")],
                  [info("x", F, [5]), info("n", I64, []), info("c", B, []),
                   info("y", F, [1])], ["out"])


def test_a_body_slicing_by_the_iteration_asks_for_the_trip_count():
    """Imported as is, the Loop names its trip count and condition as the values it needs
    (with the Slice's own complaint); compiled at the first call, they are folded and
    the Loop unrolled, for each trip count fed."""
    with pytest.raises(UnsupportedOnnxError) as err:
        import_onnx(slice_by_iteration_model())
    assert "the trip count (input #0 'n') is computed at run time" in str(err.value)
    assert "the condition (input #1 'c') is computed at run time" in str(err.value)
    x = np.arange(1, 6, dtype=np.float32)
    for backend in BACKENDS:
        compiled = glow_mlir.compile(slice_by_iteration_model(), backend=backend, cache=False,
                                     specialize="first-call")
        for trips in (1, 3, 5):
            feeds = {"x": x, "n": np.array(trips), "c": np.array(True),
                     "y": np.array([0.5], np.float32)}
            np.testing.assert_allclose(compiled.run(feeds)[0], [0.5 + x[:trips].sum()])
