"""The three backends: their hooks (what each lowers, runs and fuses, and that what
`lower-graph` leaves for a backend is what that backend says it runs), the one registry
and its error, their options, and their pipelines as data."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.dialects.builtin import TensorType, f16, f32, i32

from glow_graphs import FAMILIES, clone_module, glow_graphs
from glow_mlir.backends import Backend, NodeInfo, UnknownBackendError, get_backend
from glow_mlir.backends.registry import BACKENDS
from glow_mlir.conversion.pass_runner import run_pipeline
from glow_mlir.dialects import glow
from glow_mlir.dialects.context import make_context
from glow_mlir.dialects.glow_ops.traits import AccelUnit, accel_unit
from glow_mlir.dialects.glow_ops.types import elem_of
from glow_mlir.ir.errors import UserError
from glow_mlir.ir.text import parse_module, verify_module
from glow_mlir.transforms.graph.lowering import RULES, rule_for

# One op of every kind lower-graph has a rule for (all rules apply to these).
LOWERABLE = """
func.func @f(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %b: tensor<4xf32>, %i: tensor<1x4x3x3xf32>, %k: tensor<4x2x1x1xf32>, %a: tensor<2x4x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<1x4x3x3xf32>, tensor<2x4x4xf32>, tensor<3x4xf32>, tensor<4x4xf32>) {
  %0 = glow.fully_connected %x, %w, %b : (tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %1 = glow.batch_normalization %x, %b, %b, %b, %b {channel_idx = 1 : i64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = glow.layer_normalization %x, %b, %b : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %3 = glow.gelu %x : tensor<2x4xf32>
  %4 = glow.swish %x : tensor<2x4xf32>
  %5 = glow.clip %x {min = 0.0 : f32, max = 1.0 : f32} : tensor<2x4xf32>
  %6 = glow.leaky_relu %x {alpha = 0.1 : f32} : tensor<2x4xf32>
  %7 = glow.prelu %x, %x : tensor<2x4xf32>
  %8 = glow.soft_max %x : tensor<2x4xf32>
  %9 = glow.log_soft_max %x : tensor<2x4xf32>
  %10 = glow.relu %x : tensor<2x4xf32>
  %11 = glow.convolution %i, %k, %b {kernels = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x3x3xf32>, tensor<4x2x1x1xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
  %12 = glow.batch_mat_mul %a, %a : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %13 = glow.pad %x {pads = array<i64: 1, 0, 0, 0>} : tensor<2x4xf32> -> tensor<3x4xf32>
  %14 = glow.tile %x {count = 2 : i64, axis = 0 : i64} : tensor<2x4xf32> -> tensor<4x4xf32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<1x4x3x3xf32>, tensor<2x4x4xf32>, tensor<3x4xf32>, tensor<4x4xf32>
}
"""

KEPT = {
    "interpreter": {"glow.fully_connected", "glow.convolution", "glow.batch_mat_mul",
                    "glow.soft_max", "glow.log_soft_max"},
    "cpu": {"glow.fully_connected", "glow.convolution", "glow.batch_mat_mul", "glow.soft_max",
            "glow.log_soft_max", "glow.clip", "glow.leaky_relu", "glow.layer_normalization",
            "glow.gelu", "glow.swish"},
    "accel": {"glow.fully_connected"},  # for quantize-graph; transform_post_lowering lowers it
}


def _module(text: str = LOWERABLE):
    module = parse_module(make_context(), text)
    verify_module(module)
    return module


def _glow_ops(module):
    return [op for op in module.walk() if op.name.startswith("glow.")]


def test_registry_and_unknown_name():
    assert set(BACKENDS) == {"interpreter", "cpu", "accel"}
    for name in BACKENDS:
        assert get_backend(name).name == name
        assert get_backend(name) is get_backend(name)  # one object per backend
        assert isinstance(get_backend(name), Backend)
    with pytest.raises(ValueError, match=r"^unknown backend 'tpu' \(backends: 'interpreter', "
                                         r"'cpu', 'accel'\)$") as err:
        get_backend("tpu")
    assert isinstance(err.value, UnknownBackendError)
    assert isinstance(err.value, UserError)  # tools report it without a traceback
    with pytest.raises(UnknownBackendError, match=r"\); did you mean 'interpreter'\?$"):
        get_backend("interpeter")


def test_the_graph_passes_ask_the_backend_objects():
    """`GraphBackend` (what the graph passes, a layer below, ask) is the interface the
    Backend objects implement, with the same parameters, and the passes' lookup gives
    the registry's objects."""
    import inspect

    from glow_mlir.transforms.graph.backend_hooks import GraphBackend, get_graph_backend

    questions = [n for n, f in vars(GraphBackend).items()
                 if inspect.isfunction(f) and not n.startswith("_")]
    assert {"should_lower", "is_op_supported", "supports_fused_activation",
            "transform_post_lowering", "runs"} <= set(questions)
    for name in BACKENDS:
        backend = get_backend(name)
        assert GraphBackend in type(backend).__mro__  # a subclass: one concept, not two
        assert get_graph_backend(name) is backend
        for q in questions:
            mine, asked = (list(inspect.signature(getattr(c, q)).parameters)
                           for c in (type(backend), GraphBackend))
            assert mine == asked, f"{name}.{q}{mine} is asked with {asked}"


def test_every_place_says_the_same_for_an_unknown_backend():
    """compile(), a pass option and the graph pipeline raise the registry's one error."""
    import glow_mlir
    from glow_mlir.runtime.compiled_model import optimize_graph

    expected = (
        r"unknown backend 'cpuu' \(backends: 'interpreter', 'cpu', 'accel'\); did you mean 'cpu'\?"
    )
    with pytest.raises(UnknownBackendError, match=expected):
        glow_mlir.compile(_module(), backend="cpuu")
    with pytest.raises(UnknownBackendError, match=expected):
        optimize_graph(_module(), "cpuu")
    for pass_name in ("lower-graph", "fuse-activations", "glow-graph-pipeline"):
        with pytest.raises(Exception, match=f"{pass_name}: {expected}"):
            run_pipeline(_module(), f"{pass_name}{{backend=cpuu}}")


def test_naming_a_backend_imports_no_compiler():
    """The registry, the default and the option checks work without xDSL (a model-cache
    hit and a saved model load without it)."""
    import subprocess
    import sys

    script = ("import sys\n"
              "from glow_mlir.backends import DEFAULT_BACKEND, get_backend\n"
              "for name in ('interpreter', 'cpu', 'accel'):\n"
              "    get_backend(name).check_options({})\n"
              "get_backend('accel').check_options({'scratchpad_kib': 64})\n"
              "print(DEFAULT_BACKEND, sorted({m.split('.')[0] for m in sys.modules} & "
              "{'xdsl', 'llvmlite', 'onnx'}))\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "cpu []"


def test_options_and_their_checks():
    accel, cpu = get_backend("accel"), get_backend("cpu")
    assert accel.check_options({}) == {"scratchpad_kib": 256, "fuse_epilogues": True}
    assert accel.check_options({"scratchpad_kib": 64}) == {"scratchpad_kib": 64,
                                                           "fuse_epilogues": True}
    assert cpu.check_options({}) == {"num_threads": None, "trace": False}
    assert cpu.check_options({"num_threads": 2}) == {"num_threads": 2, "trace": False}
    with pytest.raises(UserError, match="scratchpad_kib must be a positive whole number of "
                                        "KiB, got 0"):
        accel.check_options({"scratchpad_kib": 0})
    with pytest.raises(UserError, match="unknown option 'scratchpad_kib' for backend 'cpu'; "
                                        "it is an option of backend 'accel'"):
        cpu.check_options({"scratchpad_kib": 64})
    with pytest.raises(UserError, match="unknown option 'tiles' for backend 'accel'; backend "
                                        "'accel' takes scratchpad_kib"):
        accel.check_options({"tiles": 4})


def test_pipelines_are_data():
    """Each backend says what it runs: the graph pipeline, the instruction pipeline and the
    lowering steps after it (with the options in them)."""
    from glow_mlir.targets.cpu.executor import LOOP_LOWERING

    interp, cpu, accel = (get_backend(n) for n in ("interpreter", "cpu", "accel"))
    assert cpu.graph_pipeline() == "glow-graph-pipeline{backend=cpu}"
    assert accel.graph_pipeline(("fuse-activations",), verify_each=False) == \
        "glow-graph-pipeline{backend=accel disable=fuse-activations verify-each=false}"
    assert interp.instruction_pipeline() == "glow-instr-pipeline"
    assert cpu.instruction_pipeline(("dse",)) == "glow-instr-pipeline{disable=dse}"
    assert interp.lowering_pipeline() == ()
    assert cpu.lowering_pipeline(num_threads=1) == LOOP_LOWERING == \
        ("convert-glow-ir-to-loops",)
    assert cpu.lowering_pipeline(num_threads=3, trace=True) == \
        ("convert-glow-ir-to-loops{num-threads=3 trace=true}",)
    assert accel.lowering_pipeline(scratchpad_kib=64) == (
        "convert-glow-ir-to-accel{scratchpad-kib=64}", "accel-insert-dma",
        "accel-double-buffer", "accel-plan-scratchpad")
    assert accel.lowering_pipeline(["accel-double-buffer"], scratchpad_kib=8) == (
        "convert-glow-ir-to-accel{scratchpad-kib=8}", "accel-insert-dma",
        "accel-plan-scratchpad")
    with pytest.raises(UserError, match="cannot disable 'accel-plan-scratchpad' in the "
                                        "accelerator pipeline \\(only accel-insert-dma, "
                                        "accel-double-buffer may be disabled\\)"):
        accel.lowering_pipeline(["accel-plan-scratchpad"], scratchpad_kib=8)
    with pytest.raises(UserError, match="cannot disable 'convert-glow-ir-to-loops' in the cpu "
                                        "backend's lowering"):
        cpu.lowering_pipeline(["convert-glow-ir-to-loops"])


def test_each_backend_lowers_a_graph_to_what_its_target_runs():
    """`lower` runs the instruction pipeline and the lowering steps in place."""
    from glow_mlir.dialects import glow_ir

    relu = ONE_OP.format(args="%x: tensor<4xf32>", op="glow.relu %x : tensor<4xf32>",
                         rtype="tensor<4xf32>")
    for name, left in (("interpreter", "glow_ir.relu"), ("cpu", "glow.kernel"),
                       ("accel", "glow_accel.elementwise")):
        module = _module(relu)
        memory = get_backend(name).lower(module)
        assert memory.mutable_bytes == 32
        text = str(module)
        assert left in text, (name, text)
        assert (name == "cpu") == (not any(isinstance(op, glow_ir.FuncOp)
                                           for op in module.walk()))


def test_questions_about_a_kind_need_no_op():
    """The graph pipeline asks whether a backend lowers fully_connected with the class
    alone, and support with a class and types (Glow's NodeInfo)."""
    assert get_backend("accel").should_lower(glow.SoftMaxOp)
    assert not get_backend("accel").should_lower(glow.FullyConnectedOp)  # lowered after
    assert not get_backend("accel").is_op_supported(NodeInfo(glow.FullyConnectedOp))
    assert not get_backend("cpu").should_lower(glow.FullyConnectedOp)
    t32, t16, ti = (TensorType(e, [4]) for e in (f32, f16, i32))
    add = NodeInfo(glow.AddOp, (t32, t32), (t32,))
    assert all(get_backend(n).is_op_supported(add) for n in BACKENDS)
    add16 = NodeInfo(glow.AddOp, (t16, t16), (t16,))
    assert get_backend("cpu").is_op_supported(add16)
    assert not get_backend("accel").is_op_supported(add16)
    relu_conv = NodeInfo(glow.ConvolutionOp, (t32, t32, t32), (t32,), "relu")
    tanh_conv = NodeInfo(glow.ConvolutionOp, (t32, t32, t32), (t32,), "tanh")
    assert get_backend("accel").is_op_supported(relu_conv)
    assert not get_backend("accel").is_op_supported(tanh_conv)
    assert get_backend("cpu").is_op_supported(tanh_conv)
    assert get_backend("accel").is_op_supported(NodeInfo(glow.TransposeOp, (ti,), (ti,)))
    assert get_backend("cpu").supports_fused_activation(glow.FullyConnectedOp, "clip", f32)
    assert not get_backend("cpu").supports_fused_activation(glow.FullyConnectedOp, "clip", i32)


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_what_each_backend_lowers(backend):
    be = get_backend(backend)
    ops = [op for op in _glow_ops(_module()) if rule_for(op) is not None]
    assert {op.name for op in ops} == set(RULES)  # the fixture covers every rule
    kept = {op.name for op in ops if not be.should_lower(type(op))}
    assert kept == KEPT[backend]


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_lowered_graph_runs_on_its_backend(backend):
    """Before lowering, each op that lower-graph removes for the backend is unsupported;
    after lowering (lower-graph, then the backend's transform_post_lowering), every op
    left is supported."""
    be = get_backend(backend)
    module = _module()
    unsupported = {op.name for op in _glow_ops(module) if not be.runs(op)}
    lowered = {op.name for op in _glow_ops(module) if rule_for(op) and be.should_lower(type(op))}
    assert lowered <= unsupported
    run_pipeline(module, f"lower-graph{{backend={backend}}}")
    be.transform_post_lowering(module)
    left = [op.name for op in _glow_ops(module) if not be.runs(op)]
    assert not left


ONE_OP = "func.func @f({args}) -> {rtype} {{\n  %0 = {op}\n  func.return %0 : {rtype}\n}}"


def _op(args: str, op: str, rtype: str):
    return _glow_ops(_module(ONE_OP.format(args=args, op=op, rtype=rtype)))[0]


CONV_ARGS = "%x: tensor<1x2x3x3xf32>, %w: tensor<2x1x1x1xf32>, %b: tensor<2xf32>"
CONV_TYPES = "(tensor<1x2x3x3xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>"
CONV1_ARGS = "%x: tensor<1x2x3x3xf32>, %w: tensor<2x2x1x1xf32>, %b: tensor<2xf32>"
CONV1_TYPES = "(tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>"
R4 = "tensor<1x2x3x3xf32>"
F4 = "tensor<4xf32>"


def _conv(attrs: str, args=CONV1_ARGS, types=CONV1_TYPES, rt=R4) -> tuple[str, str, str]:
    return args, f"glow.convolution %x, %w, %b {{kernels = array<i64: 1, 1>{attrs}}} : {types}", rt


Q = "!glow.quant<i8, scale = 0.5, offset = 0>"
QCONV = (f"%x: tensor<1x2x3x3x{Q}>, %w: tensor<2x2x1x1x{Q}>, %b: tensor<2xi32>",
         f"(tensor<1x2x3x3x{Q}>, tensor<2x2x1x1x{Q}>, tensor<2xi32>) -> tensor<1x2x3x3x{Q}>",
         f"tensor<1x2x3x3x{Q}>")


def _unary(op: str, t: str = F4, rt: str | None = None) -> tuple[str, str, str]:
    return f"%x: {t}", op, rt or t


YES_YES_NO = {"interpreter": True, "cpu": True, "accel": False}
CASES = {
    # name: ((args, op, result type), {backend: supported})
    "group conv": (_conv(", group = 2 : i64", CONV_ARGS, CONV_TYPES), YES_YES_NO),
    "conv + relu": (_conv(', fused_activation = "relu"'),
                    {"interpreter": True, "cpu": True, "accel": True}),
    "conv + tanh": (_conv(', fused_activation = "tanh"'), YES_YES_NO),
    "quantized conv + relu": (_conv(', fused_activation = "relu"', *QCONV),
                              {"interpreter": True, "cpu": False, "accel": False}),
    "f16 add": (_unary("glow.add %x, %x : tensor<4xf16>", "tensor<4xf16>"), YES_YES_NO),
    "reflect pad": (_unary('glow.pad %x {pads = array<i64: 1, 1>, mode = "reflect"} : '
                           f"{F4} -> tensor<6xf32>", F4, "tensor<6xf32>"), YES_YES_NO),
    "sin": (_unary(f"glow.sin %x : {F4}"), YES_YES_NO),
    "transpose of i32": (_unary("glow.transpose %x {shuffle = array<i64: 1, 0>} : "
                                "tensor<2x3xi32> -> tensor<3x2xi32>", "tensor<2x3xi32>",
                                "tensor<3x2xi32>"),
                         {"interpreter": True, "cpu": True, "accel": True}),
    "gelu": (_unary(f"glow.gelu %x : {F4}"),
             {"interpreter": False, "cpu": True, "accel": False}),
    "clip": (_unary(f"glow.clip %x {{min = 0.0 : f32, max = 1.0 : f32}} : {F4}"),
             {"interpreter": False, "cpu": True, "accel": False}),
    "integer clip": (_unary("glow.clip %x {min = 0.0 : f32, max = 1.0 : f32} : tensor<4xi32>",
                            "tensor<4xi32>"), YES_YES_NO),
    "reduce prod": (_unary("glow.batched_reduce_prod %x {axes = array<i64: 1>} : "
                           "tensor<2x3xf32> -> tensor<2xf32>", "tensor<2x3xf32>",
                           "tensor<2xf32>"), YES_YES_NO),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_is_op_supported(case):
    (args, op, rtype), expected = CASES[case]
    node = _op(args, op, rtype)
    got = {name: get_backend(name).runs(node) for name in expected}
    assert got == expected


def test_fused_activation_support():
    conv = _op(*_conv(""))
    fc = _op("%x: tensor<2x3xf32>, %w: tensor<3x4xf32>, %b: tensor<4xf32>",
             "glow.fully_connected %x, %w, %b : "
             "(tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>",
             "tensor<2x4xf32>")
    acts = ("relu", "clip", "leaky_relu", "sigmoid", "tanh")
    cpu, accel, interp = (get_backend(n) for n in ("cpu", "accel", "interpreter"))
    def fuses(backend, op, activation):
        return backend.supports_fused_activation(type(op), activation, elem_of(op.results[0]))

    assert all(fuses(cpu, op, a) for op in (conv, fc) for a in acts)
    assert [a for a in acts if fuses(accel, conv, a)] == ["relu"]
    assert not any(fuses(accel, fc, a) for a in acts)
    assert not any(fuses(interp, op, a) for op in (conv, fc) for a in acts)


ACCEL_RUNNABLE_AFTER_LOWERING = [
    "activation", "binary", "convolution", "pool", "fully_connected", "mat_mul",
    "batch_mat_mul", "batched_add", "batch_normalization", "layer_normalization", "softmax",
    "reshape", "transpose", "concat", "slice", "broadcast", "tile", "insert_tensor",
    "reduction",
    # the unary ops of the accelerator's element-wise unit (their trait OnAccelUnit)
    *(name for name in FAMILIES["unary"]
      if accel_unit(glow.OPS_BY_NAME[name]) is AccelUnit.ELEMENTWISE)]


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(glow_graphs(families=ACCEL_RUNNABLE_AFTER_LOWERING, max_ops=8,
                   exclude=["glow.pow", "glow.adaptive_avg_pool", "glow.batched_reduce_prod"]))
def test_accel_runs_every_lowered_graph_of_its_ops(g):
    """Graphs of ops the accelerator's units can do, once lowered (lower-graph, then
    transform_post_lowering for fully_connected), use only supported ops."""
    module = clone_module(g)
    run_pipeline(module, "lower-graph{backend=accel}")
    be = get_backend("accel")
    be.transform_post_lowering(module)
    left = sorted({op.name for op in _glow_ops(module) if not be.runs(op)})
    assert not left
