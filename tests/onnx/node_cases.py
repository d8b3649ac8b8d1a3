"""The ONNX backend node test cases, generated once into a cache directory.

onnx 1.23 no longer ships `onnx/backend/test/data/node`: its node tests exist only as code
(`onnx.backend.test.case.node`), whose import computes every case's expected outputs
(about 20 s for all of them, mostly pooling references). So we generate the cases once,
those of every standard op (`ALL_OPS`) unless asked for fewer (`LISTED_OPS`, the ops
Glow's loader and issue 3 claim), and write them in ONNX's own on-disk layout, which any
ONNX tooling reads:

    <cache>/index.json                       onnx version, op list, one entry per case
    <cache>/node/<case>/model.onnx
    <cache>/node/<case>/test_data_set_0/input_<i>.pb, output_<i>.pb

The cache is rebuilt when it is missing, or was made by another onnx version or for
another op list. It is written to a temporary directory and renamed into place, so two
runs starting together never read a half-written cache.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TypeProto, numpy_helper

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CACHE = REPO_ROOT / ".cache" / "onnx-node-tests"
CACHE_ENV = "GLOW_ONNX_NODE_TESTS"
"""Environment variable naming another cache directory."""

GLOW_OPS = """
Abs Acos Add And ArgMax ArgMin Asin Atan AveragePool BatchNormalization Cast Ceil Clip Concat
Constant ConstantOfShape Conv ConvTranspose Cos CumSum DepthToSpace DequantizeLinear Div
Dropout Equal Erf Exp Expand Flatten Floor GRU Gather GatherND Gemm GlobalAveragePool
HardSigmoid Identity If InstanceNormalization LRN LSTM LeakyRelu Less Log LogSoftmax Loop
MatMul Max MaxPool Mean Min Mul Neg NonMaxSuppression NonZero Not Or PRelu Pad Pow
QuantizeLinear RNN Range Reciprocal ReduceL2 ReduceMax ReduceMean ReduceMin ReduceProd
ReduceSum ReduceSumSquare Relu Reshape Resize RoiAlign ScatterND Shape Sigmoid Sign Sin Slice
Softmax SpaceToDepth Split Sqrt Squeeze Sub Sum Tanh Tile TopK Transpose Unsqueeze Upsample
Where Xor
""".split()
"""Every standard op Glow's ONNX loader accepts (issue 3, part 1)."""

BEYOND_GLOW_OPS = """
Greater GreaterOrEqual LessOrEqual GatherElements Elu Selu Softplus HardSwish Round Mod
GlobalMaxPool Einsum LayerNormalization Gelu MatMulInteger QLinearConv QLinearMatMul
DynamicQuantizeLinear ConvInteger ScatterElements Scan Attention RotaryEmbedding LinearAttention
SoftmaxCrossEntropyLoss NegativeLogLikelihoodLoss RMSNormalization GridSample
""".split()
"""The ops issue 3 adds beyond Glow's loader."""

LISTED_OPS: tuple[str, ...] = tuple(sorted(set(GLOW_OPS) | set(BEYOND_GLOW_OPS)))
"""The ops glow-mlir claimed before the suite covered every op (`--glow-ops`)."""

ALL_OPS: tuple[str, ...] = tuple(sorted(
    {s.name for s in onnx.defs.get_all_schemas_with_history() if s.domain in ("", "ai.onnx")}))
"""Every op of the standard domain this onnx defines: the suite's default."""

FORMAT_VERSION = 1
"""Bumped when the cache layout changes, so an old cache is rebuilt."""


@dataclass(frozen=True)
class NodeCase:
    """One node test: its model and one data set on disk, the op it tests, and the
    tolerances ONNX's backend test runner compares with."""

    name: str
    op_type: str
    directory: Path
    rtol: float
    atol: float

    def load(self) -> tuple[onnx.ModelProto, list, list]:
        """The model, its inputs and its expected outputs (arrays, or lists of arrays /
        None for sequence and optional values, as ONNX's runner loads them)."""
        model = onnx.load(str(self.directory / "model.onnx"))
        data = self.directory / "test_data_set_0"
        inputs = [_read_value(data / f"input_{i}.pb", model.graph.input[i].type)
                  for i in range(len(list(data.glob("input_*.pb"))))]
        outputs = [_read_value(data / f"output_{i}.pb", model.graph.output[i].type)
                   for i in range(len(list(data.glob("output_*.pb"))))]
        return model, inputs, outputs


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE)


def load_cases(directory: Path | None = None, ops: tuple[str, ...] = ALL_OPS) -> list[NodeCase]:
    """The cases of `ops`, from the cache (generated first when missing or stale)."""
    directory = Path(directory) if directory is not None else cache_dir()
    index = _read_index(directory)
    if index is None or index.get("onnx_version") != onnx.__version__ \
            or index.get("ops") != list(ops) or index.get("format") != FORMAT_VERSION:
        generate(directory, ops)
        index = _read_index(directory)
        assert index is not None
    return [NodeCase(c["name"], c["op_type"], directory / "node" / c["name"], c["rtol"], c["atol"])
            for c in index["cases"]]


def _read_index(directory: Path) -> dict | None:
    try:
        return json.loads((directory / "index.json").read_text())
    except (OSError, ValueError):
        return None


def generate(directory: Path, ops: tuple[str, ...] = ALL_OPS) -> None:
    """Write the node test cases of `ops` into `directory`, replacing what was there."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=directory.name + ".", dir=directory.parent))
    try:
        entries = []
        for case, op_type in collect(ops):
            _write_case(tmp / "node" / case.name, case)
            entries.append({"name": case.name, "op_type": op_type,
                            "rtol": case.rtol, "atol": case.atol})
        index = {"format": FORMAT_VERSION, "onnx_version": onnx.__version__, "ops": list(ops),
                 "cases": entries}
        (tmp / "index.json").write_text(json.dumps(index, indent=1))
        old = directory.with_name(directory.name + f".old.{os.getpid()}")
        if directory.exists():
            directory.rename(old)
        try:
            tmp.rename(directory)
        except OSError:
            pass  # another run put the same cases in place meanwhile: keep theirs
        shutil.rmtree(old, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _normalized(name: str) -> str:
    return name.replace("_", "").lower()


def collect(ops: tuple[str, ...]) -> list[tuple[object, str]]:
    """(TestCase, op type) for the standard-domain cases of `ops`.

    Importing a module of `onnx.backend.test.case.node` runs its exporters, which compute
    the expected outputs; `collect_testcases()` imports all of them. We import only the
    modules named after our ops (`reducemax` for ReduceMax, `and_` for And, `rangeop` for
    Range) when asked for a few, which is what makes their generation fast, every module
    when asked for all, and keep the cases whose node is one of `ops`. An `_expanded` case
    (the op's function body, for ops defined as functions) counts for the op it expands:
    it is the same test in ONNX's suite.
    """
    import onnx.backend.test.case.node as node_pkg

    wanted = {_normalized(op) for op in ops}
    every = set(ALL_OPS) <= set(ops)  # module names need not match ops (batchnorm, ...)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporters' numpy overflow warnings
        for info in pkgutil.iter_modules(node_pkg.__path__):
            stem = _normalized(info.name)
            if every or stem in wanted or stem.removesuffix("op") in wanted:
                importlib.import_module(f"{node_pkg.__name__}.{info.name}")
    # `_NodeTestCases` is where `expect` puts every case (`collect_testcases` returns it
    # after importing everything, which is what we avoid).
    cases = list(node_pkg._NodeTestCases)
    op_of: dict[str, str] = {}
    found = []
    for case in cases:
        base = case.name.split("_expanded")[0]
        if base == case.name:
            node = case.model.graph.node[0]
            if node.domain not in ("", "ai.onnx") or node.op_type not in ops:
                continue
            op_of[case.name] = node.op_type
        if base in op_of:
            found.append((case, op_of[base]))
    return found


def _write_case(directory: Path, case) -> None:
    data = directory / "test_data_set_0"
    data.mkdir(parents=True)
    model = case.model
    (directory / "model.onnx").write_bytes(model.SerializeToString())
    (inputs, outputs), = case.data_sets
    for i, value in enumerate(inputs):
        info = model.graph.input[i]
        (data / f"input_{i}.pb").write_bytes(_value_proto(value, info).SerializeToString())
    for i, value in enumerate(outputs):
        info = model.graph.output[i]
        (data / f"output_{i}.pb").write_bytes(_value_proto(value, info).SerializeToString())


def _value_proto(value, info: onnx.ValueInfoProto):
    """A value as the protobuf ONNX's layout stores for its declared type (the same choice
    as `onnx.backend.test.cmd_tools.generate_data`)."""
    kind = info.type.WhichOneof("value")
    if kind == "sequence_type":
        return numpy_helper.from_list(value, info.name)
    if kind == "optional_type":
        return numpy_helper.from_optional(value, info.name)
    if kind == "map_type":
        return numpy_helper.from_dict(value, info.name)
    if isinstance(value, onnx.TensorProto):
        return value
    return numpy_helper.from_array(np.asarray(value), info.name)


def _read_value(path: Path, type_proto: TypeProto):
    """The stored value as ONNX's backend test runner loads it (`Runner._load_proto`)."""
    content = path.read_bytes()
    kind = type_proto.WhichOneof("value")
    if kind == "sequence_type":
        proto = onnx.SequenceProto()
        proto.ParseFromString(content)
        return numpy_helper.to_list(proto)
    if kind == "optional_type":
        proto = onnx.OptionalProto()
        proto.ParseFromString(content)
        return numpy_helper.to_optional(proto)
    tensor = onnx.TensorProto()
    tensor.ParseFromString(content)
    return numpy_helper.to_array(tensor)
