"""LSTM, GRU and RNN (frontends/onnx/converters/recurrent.py) against onnxruntime, on the
interpreter, cpu and accel backends, and the errors their bad attributes give.

onnxruntime runs only layout 0 (it refuses batch-major models), so a layout-1 case is
compared with onnxruntime on the same model in layout 0, its inputs and outputs transposed;
the node suite's `*_batchwise` cases check layout 1 against ONNX's reference too.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import glow_mlir
from glow_mlir.frontends.onnx import OnnxImportError, UnboundDimensionError, import_onnx
from glow_mlir.ir.errors import UserError
from onnx_testing import IR_VERSION, run_onnxruntime

RTOL, ATOL = 1e-4, 1e-5
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
ACTIVATION_SLOTS = {"RNN": 1, "GRU": 2, "LSTM": 3}
# name -> (takes alpha, takes beta)
ACTIVATIONS = {
    "Relu": (False, False), "Tanh": (False, False), "Sigmoid": (False, False),
    "Affine": (True, True), "LeakyRelu": (True, False), "ThresholdedRelu": (True, False),
    "ScaledTanh": (True, True), "HardSigmoid": (True, True), "Elu": (True, False),
    "Softsign": (False, False), "Softplus": (False, False),
}


@dataclass(frozen=True)
class Case:
    """One recurrent node and its inputs, in layout 0 terms (`layout` says how the model
    holds them)."""

    op: str
    direction: str = "forward"
    layout: int = 0
    steps: int = 3
    batch: int = 2
    inputs: int = 3
    hidden: int = 4
    bias: bool = True
    lens: tuple[int, ...] | None = None
    lens_at_run_time: bool = False
    initial: bool = False
    peepholes: bool = False
    input_forget: bool = False
    linear_before_reset: bool = False
    clip: float | None = None
    activations: tuple[str, ...] | None = None
    alphas: tuple[float, ...] = ()
    betas: tuple[float, ...] = ()
    outputs: tuple[bool, ...] = (True, True, True)
    weights_at_run_time: bool = False
    seed: int = 0
    extra_attrs: dict = field(default_factory=dict)

    @property
    def dirs(self) -> int:
        return 2 if self.direction == "bidirectional" else 1

    @property
    def states(self) -> int:
        return 2 if self.op == "LSTM" else 1


def _arrays(case: Case) -> dict[str, np.ndarray]:
    """Every input in layout 0: X [steps, batch, inputs], states [dirs, batch, hidden]."""
    rng = np.random.default_rng(case.seed)
    gh, d = GATES[case.op] * case.hidden, case.dirs

    def normal(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    arrays = {
        "X": normal(case.steps, case.batch, case.inputs),
        "W": normal(d, gh, case.inputs, scale=0.6),
        "R": normal(d, gh, case.hidden, scale=0.6),
    }
    if case.bias:
        arrays["B"] = normal(d, 2 * gh, scale=0.5)
    if case.lens is not None:
        arrays["sequence_lens"] = np.array(case.lens, np.int32)
    if case.initial:
        arrays["initial_h"] = normal(d, case.batch, case.hidden)
        if case.op == "LSTM":
            arrays["initial_c"] = normal(d, case.batch, case.hidden)
    if case.peepholes:
        arrays["P"] = normal(d, 3 * case.hidden, scale=0.5)
    return arrays


_SLOTS = ("X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P")
_RUN_TIME = {"X", "initial_h", "initial_c"}
"""Inputs that are graph inputs; the rest are initializers unless the case says otherwise."""


def build(case: Case, layout: int | None = None) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """The model (in the case's layout unless `layout` overrides it) and its feeds."""
    layout = case.layout if layout is None else layout
    arrays = _arrays(case)
    if layout:
        arrays["X"] = arrays["X"].transpose(1, 0, 2)
        for name in ("initial_h", "initial_c"):
            if name in arrays:
                arrays[name] = arrays[name].transpose(1, 0, 2)
    run_time = set(_RUN_TIME)
    if case.lens_at_run_time:
        run_time.add("sequence_lens")
    if case.weights_at_run_time:
        run_time |= {"W", "R", "B", "P"}
    names = [s if s in arrays else "" for s in _SLOTS[:8 if case.op == "LSTM" else 6]]
    while names and not names[-1]:
        names.pop()
    outs = [
        o if keep else "" for o, keep in zip(("Y", "Y_h", "Y_c")[: 1 + case.states], case.outputs)
    ]
    while outs and not outs[-1]:
        outs.pop()
    attrs = dict(hidden_size=case.hidden, direction=case.direction, **case.extra_attrs)
    if layout:
        attrs["layout"] = 1
    if case.op == "LSTM" and case.input_forget:
        attrs["input_forget"] = 1
    if case.op == "GRU" and case.linear_before_reset:
        attrs["linear_before_reset"] = 1
    if case.clip is not None:
        attrs["clip"] = case.clip
    if case.activations is not None:
        attrs["activations"] = list(case.activations)
    if case.alphas:
        attrs["activation_alpha"] = list(case.alphas)
    if case.betas:
        attrs["activation_beta"] = list(case.betas)
    node = helper.make_node(case.op, names, outs, name="rec", **attrs)
    feeds = {k: v for k, v in arrays.items() if k in run_time}
    inputs = [
        helper.make_tensor_value_info(k, onnx.helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
        for k, v in feeds.items()
    ]
    inits = [numpy_helper.from_array(v, k) for k, v in arrays.items() if k not in run_time]
    graph = helper.make_graph([node], "g", inputs,
                              [helper.make_empty_tensor_value_info(o) for o in outs if o], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)],
                              ir_version=IR_VERSION)
    return model, feeds


def expected(case: Case) -> list[np.ndarray]:
    """onnxruntime's outputs, from the layout-0 model (transposed for layout 1)."""
    model, feeds = build(case, layout=0)
    outs = run_onnxruntime(model, feeds)
    if not case.layout:
        return outs
    names = [o.name for o in model.graph.output]
    return [o.transpose(2, 0, 1, 3) if name == "Y" else o.transpose(1, 0, 2)
            for name, o in zip(names, outs)]


def check(case: Case, backend: str) -> None:
    model, feeds = build(case)
    compiled = glow_mlir.compile(model, backend=backend, progress=False)
    got = compiled.run(feeds)
    want = expected(case)
    assert len(got) == len(want)
    for name, g, e in zip(compiled.output_names, got, want):
        assert g.shape == e.shape, f"{name}: shape {g.shape}, onnxruntime {e.shape}"
        np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL, err_msg=f"{name} of {case}")


# ---------------------------------------------------------------------- hypothesis


@st.composite
def cases(draw) -> Case:
    op = draw(st.sampled_from(sorted(GATES)))
    direction = draw(st.sampled_from(["forward", "reverse", "bidirectional"]))
    dirs = 2 if direction == "bidirectional" else 1
    steps, batch = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    lens = draw(st.none() | st.tuples(*[st.integers(0, steps)] * batch))
    activations, alphas, betas = None, [], []
    if draw(st.booleans()):
        slots = ACTIVATION_SLOTS[op]
        names = [draw(st.sampled_from(sorted(ACTIVATIONS))) for _ in range(slots)]
        # onnxruntime's RNN indexes alpha and beta by direction, its LSTM and GRU hand them
        # out in order to the functions that take them: the same when both directions
        # use the same functions
        activations = tuple(names * dirs)
        for name in activations:
            takes_alpha, takes_beta = ACTIVATIONS[name]
            if takes_alpha:
                alphas.append(draw(st.sampled_from([0.1, 0.5, 1.3])))
            if takes_beta:
                betas.append(draw(st.sampled_from([0.2, 0.5, 0.9])))
    outputs = draw(st.tuples(*[st.booleans()] * 3).filter(any))
    lstm, gru = op == "LSTM", op == "GRU"
    return Case(
        op=op,
        direction=direction,
        layout=draw(st.sampled_from([0, 1])),
        steps=steps,
        batch=batch,
        inputs=draw(st.integers(1, 3)),
        hidden=draw(st.integers(1, 4)),
        bias=draw(st.booleans()),
        lens=lens,
        lens_at_run_time=lens is not None and draw(st.booleans()),
        initial=draw(st.booleans()),
        peepholes=lstm and draw(st.booleans()),
        input_forget=lstm and draw(st.booleans()),
        linear_before_reset=gru and draw(st.booleans()),
        clip=draw(st.none() | st.sampled_from([0.5, 2.0])),
        activations=activations,
        alphas=tuple(alphas),
        betas=tuple(betas),
        outputs=outputs
        if lstm
        else (*outputs[:2], False)
        if any(outputs[:2])
        else (True, False, False),
        weights_at_run_time=draw(st.booleans()),
        seed=draw(st.integers(0, 1000)),
    )


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@settings(max_examples=30)
@given(case=cases())
def test_against_onnxruntime(case, backend):
    check(case, backend)


# ---------------------------------------------------------------------- named cases


NAMED = {
    "lstm_bidirectional_lens_peepholes_clip": Case(
        "LSTM", "bidirectional", steps=4, batch=3, lens=(4, 2, 0), initial=True, peepholes=True,
        clip=1.5),
    "lstm_reverse_layout1_run_time_lens": Case(
        "LSTM", "reverse", layout=1, steps=4, batch=3, lens=(1, 4, 3), lens_at_run_time=True,
        initial=True),
    "lstm_input_forget_activations": Case(
        "LSTM", input_forget=True, activations=("HardSigmoid", "Softsign", "ScaledTanh"),
        alphas=(0.3, 0.7), betas=(0.4, 1.2)),
    "gru_linear_before_reset_bidirectional": Case(
        "GRU", "bidirectional", linear_before_reset=True, initial=True, lens=(3, 1)),
    "gru_activations_clip": Case(
        "GRU", activations=("LeakyRelu", "Elu"), alphas=(0.2, 0.8), clip=0.7),
    "rnn_bidirectional_layout1_thresholded": Case(
        "RNN", "bidirectional", layout=1, activations=("ThresholdedRelu", "ThresholdedRelu"),
        alphas=(0.1, 0.3)),
    "rnn_affine_softplus_only_y_h": Case(
        "RNN", "bidirectional", activations=("Softplus", "Softplus"), outputs=(False, True, False),
        lens=(0, 2)),
    "rnn_relu_weights_at_run_time": Case(
        "RNN", "reverse", activations=("Relu",), weights_at_run_time=True, bias=False),
}


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize("name", sorted(NAMED))
def test_named_cases(name, backend):
    check(NAMED[name], backend)


ACCEL_CASES = {
    "lstm_bidirectional": Case("LSTM", "bidirectional", initial=True, peepholes=True),
    "gru_linear_before_reset": Case("GRU", "reverse", linear_before_reset=True),
    "rnn_layout1": Case("RNN", "forward", layout=1),
    "gru_clip_activations": Case("GRU", "bidirectional", clip=1.0,
                                 activations=("HardSigmoid", "Softsign") * 2,
                                 alphas=(0.3, 0.4), betas=(0.6, 0.5)),
}
"""What the accelerator's units run: matrix products, element-wise arithmetic and the
activations built from them (sequence_lens needs glow.select, and glow.cmp_lt when computed
at run time; Elu and ThresholdedRelu both: not on its units, so it refuses them)."""


@pytest.mark.parametrize("name", sorted(ACCEL_CASES))
def test_accel(name):
    check(ACCEL_CASES[name], "accel")


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize("dtype", [np.float64, np.float16], ids=["f64", "f16"])
@pytest.mark.parametrize("op", sorted(GATES))
def test_other_float_types(op, dtype, backend):
    """f64 and f16 against ONNX's reference (onnxruntime runs these ops in f32 only)."""
    from onnx.reference import ReferenceEvaluator

    model, feeds = build(Case(op, "bidirectional", bias=True, initial=True))
    for init in model.graph.initializer:
        init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init).astype(dtype), init.name))
    for info in model.graph.input:
        info.type.tensor_type.elem_type = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    feeds = {k: v.astype(dtype) for k, v in feeds.items()}
    want = ReferenceEvaluator(model).run(None, feeds)
    try:
        compiled = glow_mlir.compile(model, backend=backend, progress=False)
    except UserError as err:
        if backend == "cpu" and dtype == np.float16 and "on f16" in str(err):
            pytest.skip(f"the cpu backend lacks an f16 kernel: {err}")
        raise
    got = compiled.run(feeds)
    tol = 1e-12 if dtype == np.float64 else 2e-2
    for g, e in zip(got, want):
        assert g.dtype == dtype
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)


def test_lowercase_activation_names():
    """onnxruntime's LSTM and GRU read the names without regard to case; so do we."""
    case = Case("GRU", activations=("sigmoid", "TANH"))
    model, feeds = build(case)
    want = expected(replace(case, activations=("Sigmoid", "Tanh")))
    got = glow_mlir.compile(model, backend="interpreter", progress=False).run(feeds)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL)


def test_rnn_schema_default_activations_for_one_direction():
    """RNN's schema default is ["Tanh", "Tanh"]: one direction uses the first."""
    case = Case("RNN", activations=("Relu", "Tanh"))
    model, feeds = build(case)
    want = expected(replace(case, activations=("Relu",)))
    got = glow_mlir.compile(model, backend="interpreter", progress=False).run(feeds)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL)


def test_unused_outputs_are_not_computed():
    """Only Y_h asked for: no concat of the step outputs into Y."""
    model, _ = build(Case("LSTM", steps=4, outputs=(False, True, False)))
    module = import_onnx(model)
    concats = [op for op in module.walk() if op.name == "glow.concat"]
    assert all(op.results[0].type.get_shape()[0] != 4 for op in concats)
    model, _ = build(Case("LSTM", steps=4, outputs=(True, False, False)))
    assert any(op.name == "glow.concat" and op.results[0].type.get_shape()[0] == 4
               for op in import_onnx(model).walk())


def test_one_input_projection_per_direction():
    """The input sequence is projected once per direction (one fully connected layer over
    every step), and each step multiplies by the recurrence weights once (RNN)."""
    model, _ = build(Case("RNN", "bidirectional", steps=5))
    names = [op.name for op in import_onnx(model).walk()]
    assert names.count("glow.fully_connected") == 2
    assert names.count("glow.mat_mul") == 2 * 5


# ---------------------------------------------------------------------- errors


def _import_error(case: Case, **change) -> str:
    model, _ = build(case)
    node = model.graph.node[0]
    for key, value in change.items():
        for a in list(node.attribute):
            if a.name == key:
                node.attribute.remove(a)
        if value is not None:
            node.attribute.append(helper.make_attribute(key, value))
    with pytest.raises(OnnxImportError) as info:
        import_onnx(model)
    assert isinstance(info.value, UserError)
    message = str(info.value)
    assert f"node 'rec' ({case.op})" in message
    return message


def test_unknown_activation():
    message = _import_error(Case("LSTM"), activations=["Sigmoid", "Tanh", "Swish"])
    assert "unknown activation 'Swish'" in message


def test_wrong_number_of_activations():
    message = _import_error(Case("GRU", "bidirectional"), activations=["Sigmoid", "Tanh"])
    assert "activations lists 2 function(s), but GRU with 2 direction(s) takes 4" in message


def test_invalid_direction():
    message = _import_error(Case("RNN"), direction="sideways")
    assert "direction 'sideways' is not one of" in message


def test_hidden_size_that_does_not_match_w():
    message = _import_error(Case("LSTM", hidden=4), hidden_size=5)
    assert "W has shape 1x16x3, expected 1x20x3" in message
    assert "4 gate(s) x hidden_size 5" in message


def test_w_of_the_wrong_shape():
    case = Case("GRU")
    model, _ = build(case)
    w = next(t for t in model.graph.initializer if t.name == "W")
    w.CopyFrom(numpy_helper.from_array(np.zeros((1, 11, 3), np.float32), "W"))
    with pytest.raises(
        OnnxImportError, match=r"node 'rec' \(GRU\): W has shape 1x11x3, expected 1x12x3"
    ):
        import_onnx(model)


def test_invalid_layout_and_clip():
    assert "layout 2 is not 0 or 1" in _import_error(Case("RNN"), layout=2)
    assert "clip -1.0 must be positive" in _import_error(Case("RNN"), clip=-1.0)


def test_sequence_lens_out_of_range():
    case = Case("RNN", steps=3, lens=(3, 4))
    model, _ = build(case)
    with pytest.raises(
        OnnxImportError, match=r"node 'rec' \(RNN\): sequence_lens holds \[3, 4\], outside 0..3"
    ):
        import_onnx(model)


def test_sequence_lens_of_the_wrong_shape():
    case = Case("GRU", batch=2, lens=(1, 2))
    model, _ = build(case)
    lens = next(t for t in model.graph.initializer if t.name == "sequence_lens")
    lens.CopyFrom(numpy_helper.from_array(np.array([1, 2, 3], np.int32), "sequence_lens"))
    with pytest.raises(
        OnnxImportError, match=r"sequence_lens has shape 3, expected 2 \(the batch size\)"
    ):
        import_onnx(model)


def test_unbound_sequence_length_or_batch():
    """Shapes are static: a symbolic sequence length or batch must be bound; the error names
    the input, the dimension and the node reading it, and binding it compiles the model."""
    model, feeds = build(Case("LSTM", steps=3, batch=2))
    dims = model.graph.input[0].type.tensor_type.shape.dim
    dims[0].dim_param, dims[1].dim_param = "seq", "batch"
    with pytest.raises(UnboundDimensionError) as info:
        import_onnx(model)
    assert "input 'X' dim 0 is 'seq' (shape seqxbatchx3, read by node 'rec' (LSTM))" in str(
        info.value
    )
    assert "input 'X' dim 1 is 'batch'" in str(info.value)
    compiled = glow_mlir.compile(model, backend="interpreter", input_shapes={"seq": 3, "batch": 2},
                                 progress=False)
    got = compiled.run(feeds)
    for g, e in zip(got, expected(Case("LSTM", steps=3, batch=2))):
        np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL)


def test_integer_input_is_refused():
    """RNN's T is floating-point only: an int32 X breaks the schema."""
    model, _ = build(Case("RNN"))
    model.graph.input[0].type.tensor_type.elem_type = TensorProto.INT32
    with pytest.raises(
        UserError, match=r"\(RNN\): input #0 'X' is tensor\(int32\), which RNN's type T "
                         r"does not allow"
    ):
        import_onnx(model)
