"""`torch.compile(m, backend="glow")`: the parts of each graph dynamo captures that our
compiler takes are compiled with glow-mlir; the rest runs in eager PyTorch, as Glow's
`to_glow_selective` left unsupported ops to the JIT.

For each FX graph dynamo hands over (`GlowBackend.__call__`): the parameters and buffers
among its inputs are found (`frontends.torch.partition.frozen_inputs`); the nodes the ONNX
importer takes are found by exporting each op alone (`ImporterSupport`); torch.fx's
`CapabilityBasedPartitioner` groups them into partitions `glow_0`, `glow_1`, ...; each
becomes a `GlowPartition`, which at its first call with given input shapes exports the
partition with its weights as constants (`runtime.torch_models.compile_torch`, what
`glow_mlir.from_torch` does) and compiles it. The
A graph with symbolic shapes (dynamo's second graph after a new shape) is
compiled per concrete signature from a static copy (`partition.specialize`). The
compiled code runs inference only: a call that needs autograd (grad enabled and an input
that requires grad) runs the partition eagerly, and so does a partition whose compile
failed. A parameter changed in place (`_version` moved) is compiled again.

Options (`torch.compile(m, backend="glow", options={...})`): `backend` ("cpu" or
"interpreter"), `exporter` ("torchscript", the default, or "dynamo"), `min_ops` (the
smallest partition compiled, default 2), `cache` (the compile cache, default True).
`glow_mlir.torch_backend.stats()` counts graphs, dynamo's graph breaks, partitions, ops
compiled and left to eager (with the importer's reason), compiles and calls;
`print(glow_mlir.torch_backend.summary())` prints them; the logger `glow_mlir.torch`
says the same per graph.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections import Counter
from collections.abc import Callable

from glow_mlir.frontends.torch.loading import require_torch
from glow_mlir.frontends.torch.partition import (
    ImporterSupport,
    dynamo_graph_breaks,
    frozen_inputs,
    has_dynamic_shapes,
    node_name,
    specialize,
    split,
    tensor_outputs,
)
from glow_mlir.ir.errors import UserError

LOG = logging.getLogger("glow_mlir.torch")

OPTIONS = {"backend": "cpu", "exporter": "torchscript", "min_ops": 2, "cache": True}
MAX_SIGNATURES = 8
"""Compiled models a partition keeps (one per input shapes and weight versions)."""


class TorchBackendError(UserError):
    """A bad option of the `glow` torch.compile backend."""


@dataclasses.dataclass
class Stats:
    graphs: int = 0
    """FX graphs dynamo gave the backend (graph breaks and recompiles make more)."""
    eager_graphs: int = 0
    """Graphs with inputs on a GPU, left to eager."""
    specializations: int = 0
    """Static graphs made from graphs with symbolic shapes, one per shape called with."""
    partitions: int = 0
    ops_glow: int = 0
    ops_eager: int = 0
    eager_ops: Counter = dataclasses.field(default_factory=Counter)
    reasons: dict = dataclasses.field(default_factory=dict)
    compiles: int = 0
    compile_failures: list = dataclasses.field(default_factory=list)
    glow_calls: int = 0
    eager_calls: int = 0
    """Partition calls run eagerly: autograd needed, or the compile failed."""
    graph_breaks_at_reset: int = 0


class GlowBackend:
    """The `glow` backend of torch.compile (entry point `torch_dynamo_backends`), also
    `glow_mlir.torch_backend`."""

    def __init__(self) -> None:
        self._stats = Stats()
        self._support: dict[str, ImporterSupport] = {}  # per glow backend
        self._lock = threading.Lock()

    def __call__(self, gm, example_inputs, options: dict | None = None, **_mode):
        require_torch()  # the error that names the extra, before anything else
        opts = _options(options)
        with self._lock:
            return self._compile_graph(gm, list(example_inputs), opts)

    def stats(self) -> dict:
        """The counts since the last `reset_stats()`: `graphs`, `graph_breaks` (dynamo's
        own count), `partitions`, `ops_glow`, `ops_eager`, `eager_ops` (op -> count),
        `reasons` (op -> why the importer refused it), `compiles`, `compile_failures`,
        `glow_calls`, `eager_calls`, `specializations` (static graphs made from graphs with
        symbolic shapes), `eager_graphs` (graphs left to eager: inputs on a GPU)."""
        s = dataclasses.asdict(self._stats)
        s["graph_breaks"] = dynamo_graph_breaks() - s.pop("graph_breaks_at_reset")
        s["eager_ops"] = dict(self._stats.eager_ops)
        return s

    def reset_stats(self) -> None:
        self._stats = Stats(graph_breaks_at_reset=dynamo_graph_breaks())

    def summary(self) -> str:
        s = self.stats()
        eager = ", ".join(f"{op} ({n})" for op, n in sorted(s["eager_ops"].items())) or "none"
        lines = [f"glow torch.compile backend: {s['graphs']} graph(s), {s['graph_breaks']} "
                 f"graph break(s), {s['partitions']} partition(s) compiled with glow "
                 f"({s['ops_glow']} ops), {s['ops_eager']} op(s) left to eager: {eager}",
                 f"  {s['compiles']} compile(s), {len(s['compile_failures'])} failed; "
                 f"{s['glow_calls']} partition call(s) ran compiled, {s['eager_calls']} "
                 f"eagerly; {s['specializations']} static graph(s) made from symbolic "
                 f"shapes; {s['eager_graphs']} graph(s) left to eager (inputs not on the CPU)"]
        lines += [f"  {op}: {why}" for op, why in sorted(s["reasons"].items())]
        lines += [f"  failed: {msg}" for msg in s["compile_failures"]]
        return "\n".join(lines)

    def _compile_graph(self, gm, example_inputs, opts):
        stats = self._stats
        stats.graphs += 1
        frozen = frozen_inputs(gm, example_inputs)
        if has_dynamic_shapes(gm):
            if not _specializable(example_inputs):
                ops = _ops(gm)
                stats.eager_graphs += 1
                stats.ops_eager += len(ops)
                stats.eager_ops.update(node_name(n) for n in ops)
                LOG.info("graph %d: inputs not on the CPU, left to eager", stats.graphs)
                return gm.forward
            LOG.info("graph %d: symbolic shapes; compiled for each shape it is called with",
                     stats.graphs)
            return _Specializing(self, gm, frozen, opts, stats.graphs)
        return self._partition_graph(gm, frozen, opts, f"graph {stats.graphs}")

    def _partition_graph(self, gm, frozen, opts, where):
        """`gm` (static shapes) split, its supported partitions made `GlowPartition`s."""
        stats = self._stats
        ops = _ops(gm)
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        # by name: the partitioner's graph has placeholders of its own (same names)
        frozen_names = {n.name for n, f in zip(placeholders, frozen) if f}
        if opts["backend"] not in self._support:
            self._support[opts["backend"]] = ImporterSupport(backend_check(opts["backend"]))
        support = self._support[opts["backend"]]
        fused, parts = split(gm, support, opts["min_ops"])
        for part in [p for p in parts if not tensor_outputs(getattr(fused, p.name))]:
            # it stays a plain (eager) submodule; its ops count as eager ones
            stats.compile_failures.append(f"{where} {part.name}: a result is not a "
                                          f"tensor; it runs eagerly")
            stats.ops_eager += len(part.ops)
            stats.eager_ops.update(part.ops)
        parts = [p for p in parts if tensor_outputs(getattr(fused, p.name))]
        for part in parts:
            mask = tuple(getattr(a, "op", None) == "placeholder" and a.name in frozen_names
                         for a in part.node.args)
            label = f"{where} {part.name}"
            setattr(fused, part.name,
                    GlowPartition(getattr(fused, part.name), mask, opts, self, label))
        in_glow = sum(len(p.ops) for p in parts)
        left = [n for n in _ops(fused) if not _is_partition(n) and not _reads_partition(n)]
        stats.partitions += len(parts)
        stats.ops_glow += in_glow
        stats.ops_eager += len(left)
        stats.eager_ops.update(node_name(n) for n in left)
        for n in left:
            why = support.reasons.get(node_name(n))
            if why is not None:
                stats.reasons.setdefault(node_name(n), why)
        LOG.info("%s: %d op(s), %d partition(s) compiled with glow (%d ops), %d op(s) "
                 "left to eager%s", where, len(ops), len(parts), in_glow, len(left),
                 ": " + ", ".join(sorted({node_name(n) for n in left})) if left else "")
        return fused.forward


def backend_check(backend: str):
    """The question `ImporterSupport` asks of one exported op: does the importer take it,
    and does `backend` compile it (the graph pipeline's check of every op; for `cpu` also
    the loop generators, which lack some element types, e.g. a matmul on booleans), short
    of LLVM. Without this, one such op would send its whole partition to eager when the
    partition's compile failed."""
    def check(proto) -> str | None:
        from glow_mlir.frontends.onnx import import_onnx
        from glow_mlir.runtime.compiled_model import optimize_graph

        try:
            module = optimize_graph(import_onnx(proto), backend)
            if backend == "cpu":
                from glow_mlir.targets.cpu.executor import lower_to_loops
                from glow_mlir.targets.instructions import lower_to_instructions

                lower_to_instructions(module)
                lower_to_loops(module)
        except UserError as err:
            return str(err).splitlines()[-1].strip()
        return None

    return check


def _specializable(example_inputs) -> bool:
    """CPU tensors and ints (the SymInts of symbolic dimensions) only."""
    torch = require_torch()
    return all((isinstance(x, torch.Tensor) and x.device.type == "cpu")
               or isinstance(x, (int, torch.SymInt)) for x in example_inputs)


_Signature = tuple[tuple[tuple[int, ...], object] | int, ...]
"""Input shapes and dtypes, and the ints given for the symbols: one static graph each."""


class _Specializing:
    """A graph with symbolic shapes, run as a static graph per concrete signature (input
    shapes, dtypes and the ints given for the symbols): traced again on the inputs
    (`specialize`), then split and compiled like any static graph. A call that needs
    autograd runs the graph as dynamo made it."""

    def __init__(self, backend, gm, frozen, opts, graph: int):
        self.backend, self.gm, self.frozen, self.opts = backend, gm, frozen, opts
        self.graph = graph
        self.static: dict[_Signature, Callable[..., object]] = {}

    def __call__(self, *args):
        torch = require_torch()
        if torch.is_grad_enabled() and any(
                isinstance(a, torch.Tensor) and a.requires_grad for a in args):
            self.backend._stats.eager_calls += 1
            return self.gm(*args)
        key = tuple((tuple(a.shape), a.dtype) if isinstance(a, torch.Tensor) else int(a)
                    for a in args)
        if key not in self.static:
            if len(self.static) >= MAX_SIGNATURES:
                self.static.pop(next(iter(self.static)))
            with self.backend._lock:
                stats = self.backend._stats
                stats.specializations += 1
                where = f"graph {self.graph} shape {stats.specializations}"
                self.static[key] = self.backend._partition_graph(
                    specialize(self.gm, args), self.frozen, self.opts, where)
        return self.static[key](*args)


def _ops(gm) -> list:
    return [n for n in gm.graph.nodes
            if n.op in ("call_function", "call_method", "call_module") and not _bookkeeping(n)]


def _bookkeeping(node) -> bool:
    """A call no tensor flows into or out of, such as torchvision's
    `torch._C._log_api_usage_once` in each block of EfficientNet: it still runs, eagerly,
    but is no op left to eager (nor does it split a partition, which only data does)."""
    return (not node.all_input_nodes and not node.users
            and node.meta.get("example_value", node.meta.get("val")) is None)


def _is_partition(node) -> bool:
    return node.op == "call_module" and str(node.target).startswith("glow_")


def _reads_partition(node) -> bool:
    """`getitem` of a partition's result tuple: plumbing, not an op left to eager."""
    import operator

    return (node.target is operator.getitem and bool(node.args)
            and hasattr(node.args[0], "op") and _is_partition(node.args[0]))


def _options(options: dict | None) -> dict:
    opts = dict(OPTIONS)
    for name, value in (options or {}).items():
        if name not in OPTIONS:
            raise TorchBackendError(f"unknown option {name!r} of the glow torch.compile "
                                    f"backend; the options are {', '.join(OPTIONS)}")
        opts[name] = value
    from glow_mlir.frontends.torch.errors import EXPORTERS

    if opts["exporter"] not in EXPORTERS:
        raise TorchBackendError(f"unknown exporter {opts['exporter']!r}; the exporters are "
                                f"{', '.join(map(repr, EXPORTERS))}")
    if opts["backend"] not in ("cpu", "interpreter"):
        raise TorchBackendError(f"the glow torch.compile backend runs on 'cpu' or "
                                f"'interpreter', not {opts['backend']!r}")
    if not isinstance(opts["min_ops"], int) or opts["min_ops"] < 1:
        raise TorchBackendError(f"min_ops must be an integer >= 1, got {opts['min_ops']!r}")
    return opts


def _make_partition_class():
    torch = require_torch()

    class _WithWeights(torch.nn.Module):
        """The partition with its parameters and buffers as its own buffers, so the
        exporter writes them as initializers (weights the optimizer folds)."""

        def __init__(self, sub, mask, frozen):
            super().__init__()
            self.sub, self.mask = sub, mask
            for i, t in enumerate(frozen):
                self.register_buffer(f"w{i}", t.detach())
            self.count = len(frozen)

        def forward(self, *runtime):
            weights = iter(getattr(self, f"w{i}") for i in range(self.count))
            values = iter(runtime)
            return self.sub(*[next(weights) if f else next(values) for f in self.mask])

    class Partition(torch.nn.Module):
        """One supported partition: compiled with glow at its first call for each input
        signature (shapes, dtypes, weight versions); eager when autograd is needed or the
        compile failed."""

        def __init__(self, sub, mask, opts, backend, label):
            super().__init__()
            self.sub, self.mask, self.opts, self.label = sub, mask, opts, label
            self._backend = backend
            self._compiled = {}

        def forward(self, *args):
            stats = self._backend._stats
            if torch.is_grad_enabled() and any(
                    isinstance(a, torch.Tensor) and a.requires_grad for a in args):
                stats.eager_calls += 1
                return self.sub(*args)
            runtime = [a for a, f in zip(args, self.mask) if not f]
            frozen = [a for a, f in zip(args, self.mask) if f]
            key = (tuple((tuple(a.shape), a.dtype) for a in runtime),
                   tuple((id(t), t._version) for t in frozen))
            if key not in self._compiled:
                if len(self._compiled) >= MAX_SIGNATURES:
                    self._compiled.pop(next(iter(self._compiled)))
                self._compiled[key] = self._compile(runtime, frozen)
            compiled = self._compiled[key]
            if compiled is None:
                stats.eager_calls += 1
                return self.sub(*args)
            model, taken = compiled
            stats.glow_calls += 1
            return tuple(torch.from_numpy(o) for o in model(*(runtime[i] for i in taken)))

        def _compile(self, runtime, frozen):
            """The compiled model and which runtime inputs it takes (their indices), or
            None when the compile failed."""
            from glow_mlir.runtime.torch_models import compile_torch

            stats = self._backend._stats
            names = [f"input_{i}" for i in range(len(runtime))]
            try:
                model = compile_torch(
                    _WithWeights(self.sub, self.mask, frozen), tuple(runtime),
                    backend=self.opts["backend"], exporter=self.opts["exporter"],
                    input_names=names, cache=self.opts["cache"], progress=False)
            except UserError as err:
                message = f"{self.label}: {str(err).splitlines()[0]}"
                stats.compile_failures.append(message)
                LOG.warning("glow could not compile %s; it runs eagerly", message)
                return None
            stats.compiles += 1
            # the exporter drops an input the graph never reads (one whose shape alone
            # mattered, fixed now): the model takes the others, by name
            return model, [names.index(n) for n in model.input_names]

    return Partition


def GlowPartition(sub, mask, opts, backend, label):  # noqa: N802 - a class made lazily
    """A `torch.nn.Module` running partition `sub` with glow (see `_make_partition_class`)."""
    global _PARTITION
    if _PARTITION is None:
        _PARTITION = _make_partition_class()
    return _PARTITION(sub, mask, opts, backend, label)


_PARTITION = None

torch_backend = GlowBackend()
"""The backend: `torch.compile(m, backend="glow")` (the entry point) or
`torch.compile(m, backend=glow_mlir.torch_backend)`."""
