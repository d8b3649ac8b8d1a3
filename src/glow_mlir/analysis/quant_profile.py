"""Profiles for profile-guided quantization (Glow's `quantization::NodeProfilingInfo`).

A profile holds, for every float edge (an op result) of the lowered graph, the smallest
and largest value seen over all the batches and a histogram of the values over
[min, max], recorded as Glow's `generateTensorHistogram` does: the range grows with the
data, and when it grows the counts recorded so far are moved into the bins of the wider
range. It carries a hash of the graph it was recorded on (Glow's `graphPreLowerHash`), so a
profile is never applied to another graph by mistake.

Edges are named as the profile file shows them: an input by its name, an op result by
the op's SSA name (`conv1`, the ONNX node's output) or, for an op without one,
`<kind>#<position in the function>`, and the result number. The file is JSON (also
readable as YAML 1.2): `graph_hash`, `bins`, then one entry per edge with `node`,
`output`, `min`, `max`, `histogram` (an edge that saw no finite value: `min` and `max`
null, the histogram empty; it stays float), and the `input_shapes` it was recorded with.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp
from xdsl.ir import Operation, SSAValue

from glow_mlir.dialects.glow_ops.types import is_float
from glow_mlir.ir.errors import UserError
from glow_mlir.ir.resources import resource_digest

FORMAT = "glow-mlir-profile"
VERSION = 1
DEFAULT_BINS = 2048
MAX_MAGNITUDE = float(np.finfo(np.float32).max) / 256
"""The largest |min| or |max| a profile may hold: int8's 256 steps of the range must stay
finite in float32 (scale * 256). A larger one is a damaged or hand-edited file."""
"""Histogram bins per edge: KL calibration merges them into 255 quantized bins, so it
needs several times more (Glow's optimizeKL returns the whole range below 255)."""


class ProfileError(UserError):
    """A profile that cannot be read, recorded or used for this graph."""


# ---------------------------------------------------------------- edges and the graph hash


def graph_function(module: ModuleOp) -> func.FuncOp:
    fn = next((op for op in module.ops if isinstance(op, func.FuncOp)), None)
    if fn is None:
        raise ProfileError("the module has no glow graph to profile or quantize")
    return fn


def edge_names(fn: func.FuncOp) -> dict[SSAValue, tuple[str, int]]:
    """(node, output) of every float op result of the graph (module docstring); constants
    are weights, not edges."""
    from glow_mlir.dialects import glow

    names: dict[SSAValue, tuple[str, int]] = {}
    taken: set[str] = set()
    for i, arg in enumerate(fn.body.block.args):  # the inputs (Glow profiles placeholders)
        attrs = fn.arg_attrs.data[i] if fn.arg_attrs is not None else None
        name = attrs.data.get("glow.name") if attrs is not None else None
        node = name.data if name is not None else f"input{i}"  # type: ignore[attr-defined]
        taken.add(node)
        if is_float(arg.type.get_element_type()):  # type: ignore[attr-defined]
            names[arg] = (node, 0)
    for position, op in enumerate(fn.body.block.ops):
        if isinstance(op, (glow.ConstantOp, glow.SplatOp)) or not op.name.startswith("glow."):
            continue
        hint = op.results[0].name_hint if op.results else None
        node = hint if hint and hint not in taken else f"{op.name[5:]}#{position}"
        taken.add(node)
        for i, r in enumerate(op.results):
            if is_float(r.type.get_element_type()):  # type: ignore[attr-defined]
                names[r] = (node, i)
    return names


def input_shapes(fn: func.FuncOp) -> dict[str, tuple[int, ...]]:
    """Each input's shape, by the name `edge_names` gives it."""
    shapes = {}
    for i, arg in enumerate(fn.body.block.args):
        attrs = fn.arg_attrs.data[i] if fn.arg_attrs is not None else None
        name = attrs.data.get("glow.name") if attrs is not None else None
        node = name.data if name is not None else f"input{i}"  # type: ignore[attr-defined]
        shapes[node] = tuple(arg.type.get_shape())  # type: ignore[attr-defined]
    return shapes


def _shapes(shapes: dict[str, tuple[int, ...]]) -> str:
    return "{" + ", ".join(f"{k}: {'x'.join(map(str, v)) or 'scalar'}"
                           for k, v in shapes.items()) + "}"


def graph_hash(module: ModuleOp, shapes: bool = True) -> str:
    """sha256 of the graph's structure (op kinds, attributes, types, use-def wiring, SSA
    names) and of its weights' bytes: equal for the same model imported twice, different
    when an op, a shape or a weight differs. `shapes=False` leaves out the result types
    and the signature: equal for one model imported with other input shapes, which tells
    that case apart in `Profile.check_graph`."""
    h = hashlib.sha256()
    numbering: dict[SSAValue, int] = {}
    for op in module.walk():
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    numbering[arg] = len(numbering)
        parts = [op.name, repr([numbering.get(v, -1) for v in op.operands]),
                 repr([str(r.type) for r in op.results] if shapes else len(op.results)),
                 repr([r.name_hint for r in op.results])]
        for key, attr in sorted(op.attributes.items()):
            if not shapes and key == "function_type":
                continue
            if isinstance(attr, DenseResourceAttr):
                parts.append(f"{key}={attr.type}:{resource_digest(attr, op).hex()}")
            else:
                parts.append(f"{key}={attr}")
        for r in op.results:
            numbering[r] = len(numbering)
        h.update("\x1f".join(parts).encode())
        h.update(b"\x1e")
    return h.hexdigest()


# ---------------------------------------------------------------- one edge


@dataclass
class EdgeProfile:
    """min, max and the histogram of one edge over [min, max] (`bins` equal bins)."""

    node: str
    output: int
    min: float = math.inf
    max: float = -math.inf
    histogram: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    @property
    def seen(self) -> bool:
        return self.histogram.size > 0 and int(self.histogram.sum()) > 0

    def record(self, values: np.ndarray, bins: int = DEFAULT_BINS) -> None:
        """Add `values` (Glow's generateTensorHistogram; NaNs are not counted)."""
        x = np.asarray(values, dtype=np.float64).reshape(-1)
        x = x[np.isfinite(x)]
        if x.size == 0:
            return
        lo, hi = float(x.min()), float(x.max())
        if not self.seen:
            self.min, self.max = lo, hi
            self.histogram = np.zeros(bins, np.int64)
        elif lo < self.min or hi > self.max:
            new_lo, new_hi = min(lo, self.min), max(hi, self.max)
            self.histogram = rebin(self.histogram, self.min, self.max, new_lo, new_hi)
            self.min, self.max = new_lo, new_hi
        self.histogram += bin_counts(x, self.min, self.max, self.histogram.size)

    def to_json(self) -> dict:
        """An edge that saw no finite value (all NaN or Inf) has no range: `min` and `max`
        are null and the histogram empty, and it stays float when quantizing."""
        if not self.seen:
            return {"node": self.node, "output": self.output, "min": None, "max": None,
                    "histogram": []}
        return {"node": self.node, "output": self.output, "min": self.min, "max": self.max,
                "histogram": [int(c) for c in self.histogram]}


def bin_counts(x: np.ndarray, lo: float, hi: float, bins: int) -> np.ndarray:
    """Counts of `x` (all within [lo, hi]) in `bins` equal bins; the top value goes to the
    last bin, and an empty range puts everything in bin 0 (Glow's getBin)."""
    width = (hi - lo) / bins
    if width == 0:
        idx = np.zeros(x.size, np.int64)
    else:
        idx = np.minimum(((x - lo) / width).astype(np.int64), bins - 1)
    return np.bincount(np.maximum(idx, 0), minlength=bins).astype(np.int64)


def rebin(hist: np.ndarray, lo: float, hi: float, new_lo: float, new_hi: float) -> np.ndarray:
    """The counts of `hist` over [lo, hi] moved into as many bins over [new_lo, new_hi]
    (containing it): each old bin's count split between the (at most two) new bins it
    overlaps, in proportion, as Glow's generateTensorHistogram does."""
    bins = hist.size
    out = np.zeros(bins, np.int64)
    src_w = (hi - lo) / bins
    dst_w = (new_hi - new_lo) / bins
    for i in np.flatnonzero(hist):
        count = int(hist[i])
        begin = lo + src_w * i
        first = min(int((begin - new_lo) / dst_w), bins - 1)
        if src_w == 0:
            out[first] += count
            continue
        end_of_first = new_lo + dst_w * (first + 1)
        part = min(round((end_of_first - begin) / src_w * count), count)
        out[first] += part
        if part < count:
            out[min(first + 1, bins - 1)] += count - part
    return out


# ---------------------------------------------------------------- the profile


@dataclass
class Profile:
    """What `glow_mlir.profile` recorded: an `EdgeProfile` per edge, the hash of the graph,
    the number of batches and the backend that ran them."""

    graph_hash: str
    edges: dict[tuple[str, int], EdgeProfile]
    batches: int = 0
    backend: str = ""
    bins: int = DEFAULT_BINS
    input_shapes: dict[str, tuple[int, ...]] | None = None
    """The shapes of the graph's inputs it was recorded with (the hash covers them)."""
    shapeless_hash: str = ""
    """`graph_hash(shapes=False)`: the same model with other input shapes matches it."""

    def __iter__(self) -> Iterator[EdgeProfile]:
        return iter(self.edges.values())

    def __len__(self) -> int:
        return len(self.edges)

    def get(self, node: str, output: int = 0) -> EdgeProfile | None:
        return self.edges.get((node, output))

    def check_graph(self, module: ModuleOp, what: str = "this graph") -> None:
        """A profile recorded on another graph is refused: its ranges name other edges.
        The hash stays shape-dependent (a shape changes the lowering, so the edges, and the
        ranges of a batch of 2 need not be those of 8); when only the input shapes differ,
        the error says so."""
        got = graph_hash(module)
        if got != self.graph_hash:
            now = input_shapes(graph_function(module))
            if (self.input_shapes is not None and now != self.input_shapes
                    and self.shapeless_hash == graph_hash(module, shapes=False)):
                raise ProfileError(
                    f"the profile was recorded with input shapes {_shapes(self.input_shapes)}, "
                    f"{what} has {_shapes(now)}: record a profile with these shapes, or "
                    f"compile with input_shapes that give the recorded ones")
            raise ProfileError(
                f"the profile was recorded on another graph (its graph hash "
                f"{self.graph_hash[:16]}..., {what} hashes to {got[:16]}...): record a "
                f"profile of this model with glow_mlir.profile or glow-compile --dump-profile")

    # -------------------------------------------------------------- files
    def save(self, path: str | os.PathLike) -> None:
        for e in self.edges.values():  # what load would refuse is not written
            if e.seen and max(abs(e.min), abs(e.max)) > MAX_MAGNITUDE:
                raise ProfileError(f"edge '{e.node}' output {e.output} saw values in "
                                   f"[{e.min:g}, {e.max:g}], beyond +-{MAX_MAGNITUDE:.3g}: "
                                   f"int8 steps of that range overflow float32")
        doc = {"format": FORMAT, "version": VERSION, "graph_hash": self.graph_hash,
               "backend": self.backend, "batches": self.batches, "bins": self.bins,
               **({"input_shapes": {k: list(v) for k, v in self.input_shapes.items()},
                   "shapeless_hash": self.shapeless_hash}
                  if self.input_shapes is not None else {}),
               "edges": [e.to_json() for e in self.edges.values()]}
        # one edge per line: a histogram is long, and a diff then shows edges
        lines = [json.dumps({k: v for k, v in doc.items() if k != "edges"})[:-1] + ', "edges": [']
        lines.append(",\n".join("  " + json.dumps(e) for e in doc["edges"]))  # type: ignore[attr-defined]
        lines.append("]}\n")
        try:
            with open(path, "w") as f:
                f.write("\n".join(lines))
        except OSError as err:
            raise ProfileError(f"cannot write the profile to '{path}': "
                               f"{err.strerror or err}") from None

    @classmethod
    def load(cls, path: str | os.PathLike) -> Profile:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as err:
            raise ProfileError(f"cannot read the profile '{path}': {err.strerror or err}") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ProfileError(f"'{path}' is not a profile (not text: a profile is the JSON "
                               f"or YAML file glow_mlir.Profile.save writes)") from None
        return cls.from_text(text, os.fspath(path))

    @classmethod
    def from_text(cls, text: str, where: str = "<profile>") -> Profile:
        try:
            doc = json.loads(text)
        except ValueError:
            doc = _yaml(text, where)
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ProfileError(f"{where}: not a glow-mlir profile (no 'format: {FORMAT}')")
        if doc.get("version") != VERSION:
            raise ProfileError(f"{where}: profile version {doc.get('version')!r}, this "
                               f"glow-mlir reads version {VERSION}")
        try:
            bins = int(doc["bins"])
            edges: dict[tuple[str, int], EdgeProfile] = {}
            for i, e in enumerate(doc["edges"]):
                edge = _edge_from_json(e, bins, f"{where}: edge #{i}")
                if (edge.node, edge.output) in edges:
                    raise ProfileError(f"{where}: edge #{i} ('{edge.node}' output "
                                       f"{edge.output}) appears twice")
                edges[(edge.node, edge.output)] = edge
            shapes = doc.get("input_shapes")
            return cls(str(doc["graph_hash"]), edges, int(doc.get("batches", 0)),
                       str(doc.get("backend", "")), bins,
                       {str(k): tuple(int(d) for d in v) for k, v in shapes.items()}
                       if isinstance(shapes, dict) else None,
                       str(doc.get("shapeless_hash", "")))
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise ProfileError(f"{where}: malformed profile ({type(err).__name__}: "
                               f"{err})") from None


def _edge_from_json(e: dict, bins: int, where: str) -> EdgeProfile:
    """One edge of a profile file, checked: what `EdgeProfile.to_json` writes (a range and
    `bins` counts, or no range and no counts), finite, non-negative counts."""
    node, output = str(e["node"]), int(e["output"])
    where = f"{where} ('{node}' output {output})"
    hist = np.asarray(e["histogram"], np.float64).reshape(-1)
    if e["min"] is None and e["max"] is None and hist.size == 0:
        return EdgeProfile(node, output)  # saw no finite value: stays float
    if e["min"] is None or e["max"] is None:
        raise ProfileError(f"{where}: give both min and max, or neither (with an empty "
                           f"histogram) for an edge without a range")
    lo, hi = float(e["min"]), float(e["max"])
    if not (abs(lo) <= MAX_MAGNITUDE and abs(hi) <= MAX_MAGNITUDE):
        raise ProfileError(f"{where}: range [{lo:g}, {hi:g}] is not finite or beyond "
                           f"+-{MAX_MAGNITUDE:.3g} (int8 steps of it overflow float32)")
    if lo > hi:
        raise ProfileError(f"{where}: min {lo:g} is above max {hi:g}")
    if hist.shape != (bins,):
        raise ProfileError(f"{where}: the histogram has {hist.size} counts, the profile's "
                           f"bins is {bins}")
    if not np.all(np.isfinite(hist)) or np.any(hist != np.floor(hist)) or np.any(hist < 0):
        raise ProfileError(f"{where}: histogram counts must be whole numbers >= 0")
    if hist.sum() == 0:
        raise ProfileError(f"{where}: a range with an all-zero histogram (an edge without "
                           f"values has min and max null and an empty histogram)")
    return EdgeProfile(node, output, lo, hi, hist.astype(np.int64))


def _yaml(text: str, where: str) -> object:
    """A profile rewritten as block YAML by hand or by a tool is read too, when PyYAML is
    installed (JSON needs nothing)."""
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        raise ProfileError(f"{where}: not JSON, and PyYAML is not installed to read "
                           f"YAML") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ProfileError(f"{where}: neither JSON nor YAML ({_yaml_problem(err)})") from None


def _yaml_problem(err) -> str:
    """PyYAML's error in one line: what is wrong and where (its own text spans lines,
    quoting the source with a caret)."""
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None)
    if problem:  # a MarkedYAMLError: a scanner, parser or composer error
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        return f"{problem}{where}"
    if hasattr(err, "character") and hasattr(err, "position"):  # a ReaderError
        char = err.character  # a code point (read from text) or a byte (from bytes)
        char = f"#x{char:04x}" if isinstance(char, int) else repr(char)
        return f"character {char} at position {err.position} is not allowed in YAML: is it " \
               f"a text file?"
    return " ".join(str(err).split())


class Recorder:
    """Collects the edges of one graph while batches run through it."""

    def __init__(self, names: dict[SSAValue, tuple[str, int]], bins: int = DEFAULT_BINS):
        self.names = names
        self.bins = bins
        self.edges = {key: EdgeProfile(*key) for key in names.values()}

    def observe(self, op: Operation, results: Iterable[np.ndarray]) -> None:
        """The evaluator's hook: record the op's float results."""
        for r, arr in zip(op.results, results):
            key = self.names.get(r)
            if key is not None:
                self.edges[key].record(arr, self.bins)

    def record(self, key: tuple[str, int], values: np.ndarray) -> None:
        self.edges[key].record(values, self.bins)

    def record_inputs(self, fn: func.FuncOp, arrays: Iterable[np.ndarray]) -> None:
        for arg, arr in zip(fn.body.block.args, arrays):
            key = self.names.get(arg)
            if key is not None:
                self.record(key, arr)
