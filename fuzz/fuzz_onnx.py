"""Mutation fuzzer of the ONNX importer (issue 13, "Reliability").

Seeds are valid models: the small models of `glow_mlir.model_zoo`, `examples/*.onnx`, and a
sample of ONNX's backend node-test models (generated once into a cache, see
`tests/onnx/node_cases.py`). Each input is one seed with one mutation, made at the protobuf
level (wrong dtypes, broken initializers, shapes and dims, cycles, dangling and duplicate
names, attributes, opsets, raw data, input/output counts, an empty graph) or on the
serialized bytes. It goes through `glow_mlir.compile(...)` in this process (import, graph
pipeline, lowering; a sample through the "cpu" backend) and, when that succeeds, runs once
on random inputs of the compiled model's shapes.

Every input ends in one class:

    ok        compiled and ran
    user      a glow_mlir `UserError` whose message names where (a node, op type or
              tensor of the model, or the model as a whole for unreadable files)
    unlocated a `UserError` whose message names nothing of the model       (defect)
    internal  any other exception, MemoryError and KeyError included       (defect)
    hang      over the per-input time limit (`--seconds`)                  (defect)
    crash     the process running it died (a signal; cpu samples run in a fork) (defect)

    python fuzz/fuzz_onnx.py --count 2000 --seed 1 --save-failures /tmp/fuzz-onnx

prints the counts per class and per mutation kind and exits 1 on any defect. A run is
deterministic for a seed: input i is made by `random.Random(f"{seed}:{i}")`.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import gc
import os
import random
import resource
import select
import signal
import sys
import time
import traceback
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import AttributeProto, ModelProto, TensorProto, helper

REPO = Path(__file__).resolve().parents[1]
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))

import glow_mlir  # noqa: E402
from glow_mlir import model_zoo  # noqa: E402
from glow_mlir.frontends.onnx import import_onnx  # noqa: E402
from glow_mlir.ir.errors import UserError  # noqa: E402

DEFECTS = ("unlocated", "internal", "hang", "crash")
CLASSES = ("ok", "user", *DEFECTS)

HUGE = 2 ** 40


# --------------------------------------------------------------------------- seeds
@dataclass
class Seed:
    name: str
    model: ModelProto


def zoo_seeds() -> list[Seed]:
    return [Seed("zoo/mlp", model_zoo.mlp(sizes=(64, 32, 10))),
            Seed("zoo/lenet", model_zoo.lenet())]


def example_seeds() -> list[Seed]:
    return [Seed(f"examples/{p.name}", onnx.load(str(p)))
            for p in sorted((REPO / "examples").glob("*.onnx"))]


def node_seeds(limit: int) -> list[Seed]:
    """Every k-th ONNX node-test model (sorted by name), `limit` of them."""
    if limit <= 0:
        return []
    sys.path.insert(0, str(REPO / "tests" / "onnx"))
    try:
        import node_cases
    finally:
        sys.path.pop(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = sorted(node_cases.load_cases(), key=lambda c: c.name)
    cases = [c for c in cases if "_expanded" not in c.name]
    step = max(1, len(cases) // (2 * limit))
    seeds = []
    for c in cases[::step]:  # the ones the importer takes, so their mutations get further
        model = onnx.load(str(c.directory / "model.onnx"))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import_onnx(model)
        except UserError:
            continue
        seeds.append(Seed(f"node/{c.name}", model))
        if len(seeds) == limit:
            break
    return seeds


def load_seeds(kinds: list[str], node_limit: int) -> list[Seed]:
    seeds: list[Seed] = []
    if "zoo" in kinds:
        seeds += zoo_seeds()
    if "examples" in kinds:
        seeds += example_seeds()
    if "node" in kinds:
        seeds += node_seeds(node_limit)
    return seeds


# --------------------------------------------------------------------------- mutations
class Skip(Exception):
    """The mutation does not apply to this seed (no initializer to drop, ...)."""


def _tensors(m: ModelProto) -> list[TensorProto]:
    out = list(m.graph.initializer)
    for node in m.graph.node:
        out += [a.t for a in node.attribute if a.type == AttributeProto.TENSOR]
    return out


def _value_infos(m: ModelProto):
    return [*m.graph.input, *m.graph.output, *m.graph.value_info]


def _names(m: ModelProto) -> list[str]:
    names = [i.name for i in m.graph.input] + [t.name for t in m.graph.initializer]
    for node in m.graph.node:
        names += [o for o in node.output if o]
    return names


def _pick(rng: random.Random, seq):
    seq = list(seq)
    if not seq:
        raise Skip
    return rng.choice(seq)


DTYPES = [v for v in TensorProto.DataType.values() if v != TensorProto.UNDEFINED]
ODD_DTYPES = [0, -1, 17, 27, 99, 1000]


def m_dtype(m: ModelProto, rng: random.Random) -> str:
    """A declared element type (graph input/output, initializer, Constant) changed to
    another valid, undefined or unknown one."""
    new = rng.choice(DTYPES + ODD_DTYPES)
    if rng.random() < 0.5:
        info = _pick(rng, [v for v in _value_infos(m) if v.type.HasField("tensor_type")])
        info.type.tensor_type.elem_type = new
        return f"value {info.name!r} elem_type={new}"
    t = _pick(rng, _tensors(m))
    t.data_type = new
    return f"tensor {t.name!r} data_type={new}"


def m_missing_initializer(m: ModelProto, rng: random.Random) -> str:
    inits = m.graph.initializer
    if not inits:
        raise Skip
    i = rng.randrange(len(inits))
    name = inits[i].name
    del inits[i]
    if rng.random() < 0.5:  # also drop a graph input of that name (older IR declares both)
        for j, info in enumerate(m.graph.input):
            if info.name == name:
                del m.graph.input[j]
                break
    return f"dropped initializer {name!r}"


def m_extra_initializer(m: ModelProto, rng: random.Random) -> str:
    names = _names(m)
    r = rng.random()
    if r < 0.4 and names:  # shadows a graph input / node output / another initializer
        name = rng.choice(names)
    else:
        name = f"extra_{rng.randrange(100)}"
    shape = [rng.choice([1, 2, 3]) for _ in range(rng.randrange(3))]
    dtype = rng.choice([TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32])
    arr = np.ones(shape, dtype=helper.tensor_dtype_to_np_dtype(dtype))
    m.graph.initializer.append(onnx.numpy_helper.from_array(arr, name))
    return f"extra initializer {name!r} {shape}"


def _dim_holder(m: ModelProto, rng: random.Random):
    infos = [v for v in _value_infos(m) if v.type.HasField("tensor_type")
             and v.type.tensor_type.HasField("shape")]
    return _pick(rng, infos)


def m_shape(m: ModelProto, rng: random.Random) -> str:
    """A declared shape (input, output, value_info, initializer dims) made inconsistent:
    a dim changed, a dim added or removed."""
    if rng.random() < 0.3 and _tensors(m):
        t = _pick(rng, _tensors(m))
        r = rng.random()
        if r < 0.4 or not t.dims:
            t.dims.append(rng.choice([1, 2, 3]))
        elif r < 0.7:
            del t.dims[rng.randrange(len(t.dims))]
        else:
            t.dims[rng.randrange(len(t.dims))] += rng.choice([1, -1, 2])
        return f"tensor {t.name!r} dims={list(t.dims)}"
    info = _dim_holder(m, rng)
    dims = info.type.tensor_type.shape.dim
    r = rng.random()
    if r < 0.3:
        dims.add().dim_value = rng.choice([1, 2, 3])
    elif r < 0.5 and len(dims):
        del dims[rng.randrange(len(dims))]
    elif r < 0.6:
        info.type.tensor_type.ClearField("shape")
    elif len(dims):
        d = dims[rng.randrange(len(dims))]
        if rng.random() < 0.2:
            d.dim_param = rng.choice(["N", "batch", ""])
        else:
            d.dim_value = max(1, d.dim_value + rng.choice([1, 2, 5, -1]))
    else:
        raise Skip
    return f"value {info.name!r} shape changed"


def m_dim(m: ModelProto, rng: random.Random) -> str:
    """A dim made negative, zero or huge (2^40, 2^62), on a value's type or a tensor."""
    value = rng.choice([-1, -7, 0, 0, HUGE, 2 ** 62, 2 ** 31])
    if rng.random() < 0.3 and _tensors(m):
        t = _pick(rng, _tensors(m))
        if not t.dims:
            raise Skip
        t.dims[rng.randrange(len(t.dims))] = value
        return f"tensor {t.name!r} dims={list(t.dims)}"
    info = _dim_holder(m, rng)
    dims = info.type.tensor_type.shape.dim
    if not len(dims):
        raise Skip
    dims[rng.randrange(len(dims))].dim_value = value
    return f"value {info.name!r} dim={value}"


def m_cycle(m: ModelProto, rng: random.Random) -> str:
    """A node consuming its own output, or a later node's."""
    nodes = m.graph.node
    idx = _pick(rng, [i for i, n in enumerate(nodes) if n.input and n.output])
    node = nodes[idx]
    later = [o for n in list(nodes)[idx:] for o in n.output if o]
    src = _pick(rng, later)
    k = rng.randrange(len(node.input))
    node.input[k] = src
    return f"node #{idx} input {k} <- {src!r}"


def m_dangling(m: ModelProto, rng: random.Random) -> str:
    r = rng.random()
    if r < 0.7:
        node = _pick(rng, [n for n in m.graph.node if n.input])
        k = rng.randrange(len(node.input))
        node.input[k] = f"nowhere_{rng.randrange(10)}"
        return f"node {node.name!r} input {k} dangling"
    out = _pick(rng, m.graph.output)
    out.name = f"nowhere_{rng.randrange(10)}"
    return "graph output dangling"


def m_duplicate(m: ModelProto, rng: random.Random) -> str:
    """Two things of one name: node outputs, graph inputs, initializers, node names,
    graph outputs."""
    r = rng.random()
    g = m.graph
    outs = [(n, k) for n in g.node for k in range(len(n.output)) if n.output[k]]
    if r < 0.35 and len(outs) >= 2:
        (a, _), (b, kb) = rng.sample(outs, 2)
        b.output[kb] = _pick(rng, [o for o in a.output if o])
        return "duplicate node output"
    if r < 0.5 and outs and g.input:
        n, k = rng.choice(outs)
        n.output[k] = rng.choice(list(g.input)).name
        return "node output named like a graph input"
    if r < 0.65 and g.input:
        g.input.append(copy.deepcopy(rng.choice(list(g.input))))
        return "duplicate graph input"
    if r < 0.8 and g.initializer:
        g.initializer.append(copy.deepcopy(rng.choice(list(g.initializer))))
        return "duplicate initializer"
    if r < 0.9 and len(g.node) >= 2:
        a, b = rng.sample(list(g.node), 2)
        b.name = a.name or "dup"
        a.name = b.name
        return "duplicate node name"
    g.output.append(copy.deepcopy(_pick(rng, g.output)))
    return "duplicate graph output"


def _attr_node(m: ModelProto, rng: random.Random, need_attr: bool):
    nodes = [n for n in m.graph.node if n.attribute or not need_attr]
    return _pick(rng, nodes)


def m_unknown_attr(m: ModelProto, rng: random.Random) -> str:
    node = _attr_node(m, rng, False)
    name = rng.choice(["bogus", "alpha", "axis", "kernel_shape", "to", "mode", "perm"])
    if any(a.name == name for a in node.attribute):
        name = "bogus"
    value = rng.choice([1, 2.5, "x", [1, 2], [0.5]])
    node.attribute.append(helper.make_attribute(name, value))
    return f"node {node.op_type} attr {name}={value!r}"


def _random_attr_value(rng: random.Random, kind: int):
    if kind == AttributeProto.INT:
        return rng.choice([-1, 0, 1, 2, 7, -(2 ** 40), 2 ** 40])
    if kind == AttributeProto.FLOAT:
        return rng.choice([0.0, -1.0, 1e30, float("nan")])
    if kind == AttributeProto.STRING:
        return rng.choice(["", "bogus", "NOTSET", "\xff"])
    if kind == AttributeProto.INTS:
        return [rng.choice([-1, 0, 1, 2, 3, 2 ** 40]) for _ in range(rng.randrange(6))]
    if kind == AttributeProto.FLOATS:
        return [rng.choice([0.0, 1.0, -2.0]) for _ in range(rng.randrange(4))]
    if kind == AttributeProto.STRINGS:
        return ["a", "b"][: rng.randrange(3)]
    if kind == AttributeProto.TENSOR:
        return onnx.numpy_helper.from_array(np.ones([rng.randrange(3)], np.float32))
    raise Skip


ATTR_KINDS = [AttributeProto.INT, AttributeProto.FLOAT, AttributeProto.STRING,
              AttributeProto.INTS, AttributeProto.FLOATS, AttributeProto.STRINGS,
              AttributeProto.TENSOR]


def m_attr_type(m: ModelProto, rng: random.Random) -> str:
    """An attribute given with another type (or with its type field lying)."""
    node = _attr_node(m, rng, True)
    k = rng.randrange(len(node.attribute))
    old = node.attribute[k]
    if rng.random() < 0.25:  # the type tag lies about the payload
        old.type = rng.choice([t for t in ATTR_KINDS if t != old.type] + [0])
        return f"node {node.op_type} attr {old.name} type tag={old.type}"
    kind = rng.choice([t for t in ATTR_KINDS if t != old.type])
    new = helper.make_attribute(old.name, _random_attr_value(rng, kind), attr_type=kind)
    node.attribute[k].CopyFrom(new)
    return f"node {node.op_type} attr {old.name} as {AttributeProto.AttributeType.Name(kind)}"


def m_attr_value(m: ModelProto, rng: random.Random) -> str:
    """An attribute of the same type with an odd value (negative, zero, huge, wrong length)."""
    node = _attr_node(m, rng, True)
    a = node.attribute[rng.randrange(len(node.attribute))]
    if a.type not in ATTR_KINDS or a.type == AttributeProto.TENSOR:
        raise Skip
    a.CopyFrom(helper.make_attribute(a.name, _random_attr_value(rng, a.type), attr_type=a.type))
    return f"node {node.op_type} attr {a.name} value"


def m_missing_attr(m: ModelProto, rng: random.Random) -> str:
    node = _attr_node(m, rng, True)
    k = rng.randrange(len(node.attribute))
    name = node.attribute[k].name
    del node.attribute[k]
    return f"node {node.op_type} lost attr {name}"


def m_opset(m: ModelProto, rng: random.Random) -> str:
    """Missing, old, future or negative opsets; unknown domains on the model or a node."""
    r = rng.random()
    if r < 0.2:
        del m.opset_import[:]
        return "no opset_import"
    if r < 0.55 and m.opset_import:
        e = rng.choice(list(m.opset_import))
        e.version = rng.choice([0, 1, 6, 7, 9, 11, 100, -3, 2 ** 40])
        return f"opset {e.domain!r} version {e.version}"
    if r < 0.65:
        m.opset_import.append(
            helper.make_opsetid(rng.choice(["", "ai.onnx"]), rng.choice([1, 12, 99]))
        )
        return "duplicate default opset"
    if r < 0.75:
        m.ir_version = rng.choice([0, 1, 3, 99, -1])
        return f"ir_version {m.ir_version}"
    node = _pick(rng, m.graph.node)
    node.domain = rng.choice(["com.microsoft", "bogus.domain", "ai.onnx.ml", "ai.onnx"])
    return f"node {node.op_type} domain {node.domain!r}"


def m_raw_data(m: ModelProto, rng: random.Random) -> str:
    """A tensor's data truncated, extended, corrupted, or moved between its fields."""
    t = _pick(rng, _tensors(m))
    r = rng.random()
    if t.HasField("raw_data") and r < 0.7:
        raw = bytearray(t.raw_data)
        if r < 0.3 and raw:
            raw = raw[: rng.randrange(len(raw))]
        elif r < 0.45:
            raw += bytes(rng.randrange(1, 9))
        elif raw:
            for _ in range(1 + len(raw) // 50):
                raw[rng.randrange(len(raw))] = rng.randrange(256)
        t.raw_data = bytes(raw)
        return f"tensor {t.name!r} raw_data {len(raw)} bytes"
    if r < 0.85:
        t.ClearField("raw_data")
        for f in ("float_data", "int32_data", "int64_data", "double_data", "uint64_data"):
            t.ClearField(f)
        if rng.random() < 0.5:
            t.float_data.extend([1.0] * rng.randrange(3))
        return f"tensor {t.name!r} data cleared"
    t.data_location = TensorProto.EXTERNAL
    return f"tensor {t.name!r} marked external"


def m_io_count(m: ModelProto, rng: random.Random) -> str:
    """A node with an input or output more or fewer (or an empty-named one)."""
    node = _pick(rng, m.graph.node)
    r = rng.random()
    names = _names(m)
    if r < 0.3 and node.input:
        del node.input[rng.randrange(len(node.input))]
        return f"node {node.op_type} lost an input"
    if r < 0.5 and names:
        node.input.append(rng.choice(names))
        return f"node {node.op_type} extra input"
    if r < 0.6 and node.input:
        node.input[rng.randrange(len(node.input))] = ""
        return f"node {node.op_type} empty input"
    if r < 0.8:
        node.output.append(f"more_{rng.randrange(10)}")
        return f"node {node.op_type} extra output"
    if node.output:
        k = rng.randrange(len(node.output))
        if rng.random() < 0.5:
            del node.output[k]
        else:
            node.output[k] = ""
        return f"node {node.op_type} lost an output"
    raise Skip


def m_op_type(m: ModelProto, rng: random.Random) -> str:
    """A node's op type swapped for another (of the model, or any op ONNX knows)."""
    node = _pick(rng, m.graph.node)
    types = sorted({n.op_type for n in m.graph.node})
    others = ["Relu", "Conv", "Gemm", "Reshape", "Concat", "Slice", "Gather", "Add",
              "Transpose", "MaxPool", "Softmax", "Split", "Squeeze", "TopK", "Where", "Cast",
              "Identity", "NotAnOp", "If", "Loop"]
    node.op_type = rng.choice(types + others)
    return f"node -> {node.op_type}"


def m_empty(m: ModelProto, rng: random.Random) -> str:
    r = rng.random()
    g = m.graph
    if r < 0.3:
        del g.node[:]
        return "no nodes"
    if r < 0.5:
        del g.output[:]
        return "no outputs"
    if r < 0.7:
        del g.input[:]
        return "no inputs"
    if r < 0.85:
        m.ClearField("graph")
        return "no graph"
    _pick(rng, g.output).ClearField("type")
    return "untyped output"


def m_bytes(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Byte-level: flips, truncation, insertion, deletion, splices of the serialized model."""
    b = bytearray(data)
    r = rng.random()
    if r < 0.2:
        b = b[: rng.randrange(len(b))]
        what = "truncated"
    elif r < 0.6:
        for _ in range(rng.randrange(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        what = "flipped"
    elif r < 0.75:
        i = rng.randrange(len(b))
        b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
        what = "inserted"
    elif r < 0.9:
        i = rng.randrange(len(b))
        del b[i: i + rng.randrange(1, 32)]
        what = "deleted"
    else:
        i, j = sorted(rng.randrange(len(b)) for _ in range(2))
        b[i:i] = b[j: j + rng.randrange(1, 64)]
        what = "spliced"
    return bytes(b), f"bytes {what}"


PROTO_MUTATIONS: dict[str, Callable[[ModelProto, random.Random], str]] = {
    "dtype": m_dtype,
    "missing-initializer": m_missing_initializer,
    "extra-initializer": m_extra_initializer,
    "shape": m_shape,
    "dim": m_dim,
    "cycle": m_cycle,
    "dangling": m_dangling,
    "duplicate": m_duplicate,
    "unknown-attr": m_unknown_attr,
    "attr-type": m_attr_type,
    "attr-value": m_attr_value,
    "missing-attr": m_missing_attr,
    "opset": m_opset,
    "raw-data": m_raw_data,
    "io-count": m_io_count,
    "op-type": m_op_type,
    "empty": m_empty,
}
KINDS = [*PROTO_MUTATIONS, "bytes", "stacked"]


@dataclass
class Case:
    index: int
    seed: str
    kind: str
    detail: str
    payload: ModelProto | bytes
    backend: str


def make_case(seeds: list[Seed], seed: int, index: int, cpu_share: float,
              kinds: list[str]) -> Case:
    rng = random.Random(f"{seed}:{index}")
    kind = rng.choice(kinds)
    for attempt in range(100):
        s = rng.choice(seeds)
        if attempt in (30, 60):  # nothing of this kind applies to the seeds tried: another
            kind = rng.choice(kinds)
        elif attempt == 90 and "bytes" in kinds:  # which always applies
            kind = "bytes"
        model = copy.deepcopy(s.model)
        try:
            if kind == "bytes":
                payload, detail = m_bytes(model.SerializeToString(), rng)
            elif kind == "stacked":  # two or three protobuf mutations at once
                details = [PROTO_MUTATIONS[k](model, rng) for k in
                           rng.sample(list(PROTO_MUTATIONS), rng.randrange(2, 4))]
                payload, detail = model, "; ".join(details)
            else:
                payload, detail = model, PROTO_MUTATIONS[kind](model, rng)
        except Skip:
            continue
        backend = "cpu" if rng.random() < cpu_share else "interpreter"
        return Case(index, s.name, kind, detail, payload, backend)
    raise RuntimeError(f"no mutation applies to input {index}")


# --------------------------------------------------------------------------- running
class Hang(BaseException):
    """Raised by the alarm; a BaseException so `except Exception` in the code under test
    does not swallow it."""


@contextlib.contextmanager
def time_limit(seconds: float):
    def on_alarm(signum, frame):
        raise Hang(f"over {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def random_inputs(compiled, rng: np.random.Generator) -> dict[str, np.ndarray]:
    feeds = {}
    for name, shape in compiled.input_shapes.items():
        dtype = np.dtype(compiled.input_dtypes[name])
        if dtype == np.bool_:
            feeds[name] = rng.random(shape) < 0.5
        elif dtype.kind in "iu":
            feeds[name] = rng.integers(0, 2, size=shape).astype(dtype)  # valid as indices
        else:
            feeds[name] = rng.standard_normal(shape).astype(dtype)
    return feeds


DATA_ERRORS = ("integer division by zero", "index out of range")
"""What a model may rightly say at run time about random inputs (not a defect)."""

MAX_RUN_ELEMENTS = 1 << 24
"""Inputs bigger than this are not run (a mutated dim can be legal and large)."""


MODEL_LEVEL = ("opset", "ir_version", "ir version", "not an ONNX model", "not a valid ONNX model",
               "is empty", "truncated", "external files", "no graph", "no function")
"""Phrases of messages about the model as a whole (nothing smaller to name)."""


def _located(message: str, payload) -> bool:
    """Does a user error's message say where: a node (name or op type) or a value of the
    model, quoted, or, for what concerns the model as a whole, what about it?"""
    if any(w in message for w in MODEL_LEVEL):
        return True
    if isinstance(payload, bytes):
        try:
            payload = ModelProto.FromString(payload)
        except Exception:  # noqa: BLE001 - unreadable, and the message does not say so
            return False
    names = set()
    g = payload.graph
    for i, n in enumerate(g.node):
        names.update([n.name, *n.input, *n.output, f"#{i}"])
    names.update(v.name for v in [*g.input, *g.output, *g.value_info])
    names.update(t.name for t in g.initializer)
    names.discard("")
    op_types = {n.op_type for n in g.node if n.op_type}
    words = set(message.replace("(", " ").replace(")", " ").replace(":", " ").split())
    return any(f"'{n}'" in message for n in names) or bool(op_types & words)


def run_case(case: Case, seconds: float) -> tuple[str, str]:
    """(class, message) of one input, run in this process."""
    try:
        with time_limit(seconds):
            # cache=False: the compiler is under test, and each mutant is compiled once
            compiled = glow_mlir.compile(case.payload, backend=case.backend, cache=False)
            if sum(int(np.prod(s)) for s in compiled.input_shapes.values()) <= MAX_RUN_ELEMENTS:
                feeds = random_inputs(compiled, np.random.default_rng(case.index))
                try:
                    compiled.run(feeds)
                except Exception as err:  # noqa: BLE001
                    if any(p in str(err) for p in DATA_ERRORS):
                        return "user", f"(on random data) {err}"
                    raise
        return "ok", ""
    except Hang as err:
        return "hang", f"Hang: {err}\n{traceback.format_exc()}"
    except UserError as err:
        msg = str(err)
        return ("user" if _located(msg, case.payload) else "unlocated"), msg
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as err:  # noqa: BLE001 - this is what we are looking for
        msg = f"{type(err).__name__}: {err}\n{traceback.format_exc()}"
        return "internal", msg


def run_case_forked(case: Case, seconds: float) -> tuple[str, str]:
    """The same in a child process, so a crash of native code is seen as one."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        try:
            cls, msg = run_case(case, seconds)
            data = f"{cls}\n{msg}".encode("utf-8", "replace")
            with os.fdopen(w, "wb") as f:
                f.write(data)
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        deadline = time.monotonic() + seconds + 30
        data = b""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return "hang", "the child did not finish (killed)"
            ready, _, _ = select.select([f], [], [], left)
            if ready:
                chunk = os.read(f.fileno(), 1 << 16)
                if not chunk:
                    break
                data += chunk
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return "crash", f"killed by signal {os.WTERMSIG(status)}"
    if not data:
        return "crash", f"the child exited with status {os.WEXITSTATUS(status)} and no report"
    cls, _, msg = data.decode("utf-8", "replace").partition("\n")
    return cls, msg


# --------------------------------------------------------------------------- driver
@dataclass
class Report:
    by_class: Counter = field(default_factory=Counter)
    by_kind: dict = field(default_factory=lambda: defaultdict(Counter))
    failures: list = field(default_factory=list)  # (case, class, message)

    @property
    def defects(self) -> int:
        return sum(self.by_class[c] for c in DEFECTS)

    def format(self) -> str:
        lines = [f"{sum(self.by_class.values())} inputs: " +
                 " ".join(f"{c}={self.by_class[c]}" for c in CLASSES)]
        width = max(map(len, KINDS))
        for kind in KINDS:
            counts = self.by_kind.get(kind)
            if counts:
                lines.append(f"  {kind:<{width}} " + " ".join(
                    f"{c}={counts[c]}" for c in CLASSES if counts[c]))
        for case, cls, msg in self.failures[:20]:
            first = msg.strip().splitlines()[0] if msg.strip() else ""
            lines.append(f"  {cls.upper()} #{case.index} {case.seed} {case.kind} "
                         f"({case.detail}) [{case.backend}]: {first[:300]}")
        if len(self.failures) > 20:
            lines.append(f"  ... and {len(self.failures) - 20} more")
        lines.append(f"defects: {self.defects}")
        return "\n".join(lines)


def save_failure(directory: Path, case: Case, cls: str, msg: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    stem = directory / f"{case.index:05d}-{case.kind}-{cls}"
    data = case.payload if isinstance(case.payload, bytes) else case.payload.SerializeToString()
    stem.with_suffix(".onnx").write_bytes(data)
    stem.with_suffix(".txt").write_text(
        f"seed model: {case.seed}\nmutation: {case.kind}: {case.detail}\n"
        f"backend: {case.backend}\nclass: {cls}\n\n{msg}\n")


def fuzz(count: int, seed: int = 0, seconds: float = 20.0, seeds: list[Seed] | None = None,
         cpu_share: float = 0.03, kinds: list[str] | None = None,
         save_failures: Path | None = None, fork_cpu: bool = True,
         progress: Callable[[str], None] | None = None) -> Report:
    seeds = seeds if seeds is not None else load_seeds(["zoo", "examples", "node"], 60)
    kinds = kinds or KINDS
    report = Report()
    for index in range(count):
        case = make_case(seeds, seed, index, cpu_share, kinds)
        if save_failures is not None:  # if the whole process dies, this says on what
            save_failures.mkdir(parents=True, exist_ok=True)
            (save_failures / "current.txt").write_text(
                f"{index} {case.seed} {case.kind} {case.detail} {case.backend}\n")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if case.backend == "cpu" and fork_cpu:
                cls, msg = run_case_forked(case, seconds)
            else:
                cls, msg = run_case(case, seconds)
        report.by_class[cls] += 1
        report.by_kind[case.kind][cls] += 1
        if cls in DEFECTS:
            report.failures.append((case, cls, msg))
            if save_failures is not None:
                save_failure(save_failures, case, cls, msg)
        if progress is not None and (index + 1) % 100 == 0:
            progress(f"{index + 1}/{count}: " +
                     " ".join(f"{c}={report.by_class[c]}" for c in CLASSES))
        if index % 50 == 49:
            gc.collect()
    if save_failures is not None:
        (save_failures / "current.txt").unlink(missing_ok=True)
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--count", type=int, default=200, help="inputs to try (default 200)")
    p.add_argument("--seconds", type=float, default=20.0, help="time limit per input")
    p.add_argument("--seed", type=int, default=0, help="the run's seed (deterministic)")
    p.add_argument("--save-failures", type=Path, metavar="DIR",
                   help="write each defect's model (.onnx) and message (.txt) here")
    p.add_argument("--seeds", default="zoo,examples,node",
                   help="seed sets, comma-separated: zoo, examples, node")
    p.add_argument("--node-cases", type=int, default=60, help="node-test models sampled")
    p.add_argument("--cpu-share", type=float, default=0.03,
                   help="share of inputs compiled for the cpu backend (in a fork)")
    p.add_argument("--kinds", help="only these mutation kinds, comma-separated: "
                   + ", ".join(KINDS))
    p.add_argument("--memory-limit-mb", type=int, default=6144,
                   help="address-space limit of the process (0: none)")
    args = p.parse_args(argv)
    if args.memory_limit_mb:
        limit = args.memory_limit_mb << 20
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or hard > limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    kinds = args.kinds.split(",") if args.kinds else None
    for k in kinds or ():
        if k not in KINDS:
            p.error(f"unknown mutation kind {k!r}")
    seeds = load_seeds(args.seeds.split(","), args.node_cases)
    start = time.monotonic()
    report = fuzz(args.count, args.seed, args.seconds, seeds, args.cpu_share, kinds,
                  args.save_failures, progress=lambda s: print(s, file=sys.stderr, flush=True))
    print(f"fuzz_onnx: seed {args.seed}, {len(seeds)} seed models, "
          f"{time.monotonic() - start:.0f} s")
    print(report.format())
    return 1 if report.defects else 0


if __name__ == "__main__":
    sys.exit(main())
