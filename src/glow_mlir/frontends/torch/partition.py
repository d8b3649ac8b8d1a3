"""FX graphs from `torch.compile` (dynamo): which nodes the ONNX importer takes, and the
graph split into partitions of them, as Glow's `to_glow_selective` split a TorchScript
graph. `runtime/torch_backend.py` compiles each partition; the rest runs in
eager PyTorch.

Whether a node is supported is asked of the importer itself, not of a hand-kept table of
ops: the node alone, on tensors of its inputs' shapes and dtypes, is exported with the
TorchScript exporter (a few ms) and imported with `import_onnx`; the answer is cached by
the node's target, input shapes and dtypes and constant arguments. The importer accepting
an op does not promise the backend compiles the partition: a partition whose compile
fails runs eagerly (the caller counts it).

Parameters and buffers, which dynamo passes as graph inputs, are found by their source
(`frozen_inputs`) so that the partitions can hold them as weights (constants the graph
optimizer folds), as Glow's weights are.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Sequence

from glow_mlir.frontends.torch.loading import require_torch

NodeCheck = Callable[[object], "str | None"]
"""An exported ONNX model -> None if our compiler takes it, else the reason."""


def import_check(proto) -> str | None:
    """The ONNX importer's answer for one exported node."""
    from glow_mlir.frontends.onnx import import_onnx
    from glow_mlir.ir.errors import UserError

    try:
        import_onnx(proto)
    except UserError as err:
        return str(err).splitlines()[-1].strip()
    return None


def node_name(node) -> str:
    """How logs and stats name a node's operation (`torch.conv2d`, `Tensor.mean`)."""
    if node.op == "call_method":
        return f"Tensor.{node.target}"
    if node.op == "call_module":
        return f"module {node.target}"
    target = node.target
    module = getattr(target, "__module__", None) or ""
    if module.startswith("torch._ops"):  # an OpOverload: torch.ops.<namespace>.<op>.<overload>
        return f"torch.ops.{target}"
    name = getattr(target, "__name__", None) or str(target)
    module = {"_operator": "operator", "torch._C._nn": "torch.nn.functional",
              "torch._C._special": "torch.special", "torch._C._linalg": "torch.linalg",
              "torch._C._fft": "torch.fft"}.get(module, module)
    return f"{module}.{name}" if module else name


def _example(value):
    """The FakeTensor (or tuple of them) dynamo recorded for a node's value, or None."""
    return value.meta.get("example_value") if hasattr(value, "meta") else None


def _is_static_tensor(torch, value) -> bool:
    """A tensor of static shape on the CPU (or on `meta`, as `specialize` records)."""
    return (isinstance(value, torch.Tensor)
            and all(isinstance(d, int) for d in value.shape)
            and value.device.type in ("cpu", "meta"))


def specialize(gm, args):
    """A copy of `gm` (a graph dynamo made with symbolic shapes) for the concrete `args`:
    run once on them, each node's value recorded as its example value (a tensor on the
    `meta` device: shape and dtype, no data), and every value that is not a tensor (the
    ints given for the symbols, sizes read from tensors, arithmetic on them) put into
    its users as a constant. The copy is a static graph of the same torch-level ops, which
    `split` takes like any other; it is right for inputs of these shapes only."""
    torch = require_torch()
    from torch.fx.node import map_arg
    from torch.utils._pytree import tree_leaves, tree_map

    graph = torch.fx.Graph()
    output = graph.graph_copy(gm.graph, {})
    graph.output(output)
    static = torch.fx.GraphModule(gm, graph)

    class Record(torch.fx.Interpreter):
        def run_node(self, node):
            value = super().run_node(node)
            node.meta["example_value"] = tree_map(
                lambda v: v.detach().to("meta") if isinstance(v, torch.Tensor) else v, value)
            return value

    with torch.no_grad():
        Record(static).run(*args)
    for node in list(static.graph.nodes):
        if node.op == "output":
            continue
        value = node.meta["example_value"]
        leaves = tree_leaves(value)
        if any(isinstance(v, torch.Tensor) for v in leaves) or not all(
                isinstance(v, (int, float, bool, type(None))) for v in leaves):
            continue
        for user in list(node.users):
            if user.op == "output":
                continue
            user.args = map_arg(user.args, lambda n, node=node, value=value:
                                value if n is node else n)
            user.kwargs = map_arg(user.kwargs, lambda n, node=node, value=value:
                                  value if n is node else n)
        if node.op != "placeholder" and not node.users:
            static.graph.erase_node(node)
    static.recompile()
    return static


def has_dynamic_shapes(gm) -> bool:
    """Whether an input is not a CPU tensor of static shape: a SymInt or a symbolic
    dimension (dynamo's automatic dynamic shapes after a recompile), or a GPU tensor."""
    torch = require_torch()
    return any(not _is_static_tensor(torch, _example(n))
               for n in gm.graph.nodes if n.op == "placeholder")


def mutated_in_place(graph) -> set:
    """The nodes whose tensors an op of `graph` changes in place: the first argument of
    `operator.setitem` and of in-place methods and functions (`add_`, `torch.relu_`)."""
    out = set()
    for n in graph.nodes:
        if n.op not in ("call_function", "call_method") or not n.args:
            continue
        name = n.target if n.op == "call_method" else getattr(n.target, "__name__", "")
        in_place = (n.target is operator.setitem
                    or (isinstance(name, str) and name.endswith("_")
                        and not name.endswith("__")))
        if in_place and hasattr(n.args[0], "op"):
            out.add(n.args[0])
    return out


class ImporterSupport:
    """`torch.fx`'s `OperatorSupportBase` that asks our importer (`import_check`, or the
    `check` given) about each node through a one-node export. `reasons` keeps why each
    unsupported operation was refused."""

    def __init__(self, check: NodeCheck = import_check):
        self.check = check
        self.cache: dict[tuple, str | None] = {}
        self.reasons: dict[str, str] = {}
        self._mutated: tuple[object, set] = (None, set())  # the last graph's

    def is_node_supported(self, submodules, node) -> bool:
        if node.op not in ("call_function", "call_method", "call_module"):
            return False
        reason = self._reason(submodules, node)
        if reason is not None:
            self.reasons.setdefault(node_name(node), reason)
        return reason is None

    def _reason(self, submodules, node) -> str | None:
        torch = require_torch()
        from torch.fx.node import map_arg

        if self._mutated[0] is not node.graph:
            self._mutated = (node.graph, mutated_in_place(node.graph))
        mutated = self._mutated[1]
        if node in mutated or any(arg in mutated for arg in node.all_input_nodes):
            # the partition would hold its own copy: the eager op changing it (Swin's
            # attention mask, filled by `mask[h, w] = i`) would change nothing it reads
            return "a tensor it makes or reads is changed in place by an op left to eager"

        value = _example(node)
        source = node.args[0] if node.target is operator.getitem and node.args else None
        if isinstance(_example(source), (tuple, list)):
            # an element of a tuple result (split, chunk, max with indices): supported
            # with the op that makes the tuple, which then lands in the same partition
            if not _is_static_tensor(torch, value):
                return "its result is not one tensor of static shape"
            if not self.is_node_supported(submodules, source):
                return "it reads a result of an op left to eager"
            return None
        if isinstance(value, (tuple, list)):
            if not all(_is_static_tensor(torch, v) for v in value):
                return "its result is not tensors of static shape"
            if any(user.target is not operator.getitem for user in node.users):
                return "its tuple result is used whole"
        elif not _is_static_tensor(torch, value):
            return "its result is not one tensor of static shape"
        inputs = []
        bad = []

        def describe(arg):
            value = _example(arg)
            if arg.op == "get_attr":
                value = _attr(submodules, arg.target)
            if not _is_static_tensor(torch, value):
                bad.append(arg)
                return None
            inputs.append(arg)
            return ("tensor", tuple(value.shape), str(value.dtype))

        shapes = map_arg((node.args, node.kwargs), describe)
        if bad:
            return "an input is not a tensor of static shape"
        if node.op == "call_module":
            target = repr(submodules[node.target])
        elif node.op == "call_method":
            target = node.target
        else:
            target = node_name(node)
        key = (node.op, target, repr(shapes))
        if key not in self.cache:
            self.cache[key] = self._try(torch, submodules, node, inputs)
        return self.cache[key]

    def _try(self, torch, submodules, node, inputs) -> str | None:
        """Export the node alone and ask the check."""
        from glow_mlir.frontends.torch.errors import TorchExportError
        from glow_mlir.frontends.torch.export import export_to_onnx

        graph = torch.fx.Graph()
        env = {}
        unique = list(dict.fromkeys(inputs))
        for i, arg in enumerate(unique):
            env[arg] = graph.placeholder(f"x{i}")
        copy = graph.node_copy(node, lambda n: env[n])
        graph.output(copy)
        root = torch.nn.Module()
        if node.op == "call_module":
            _set_attr(root, node.target, submodules[node.target])
        one = torch.fx.GraphModule(root, graph)
        tensors = []
        for arg in unique:
            value = _attr(submodules, arg.target) if arg.op == "get_attr" else _example(arg)
            tensors.append(_sample(torch, value))
        try:
            exported = export_to_onnx(one, tuple(tensors), exporter="torchscript")
        except TorchExportError as err:
            return f"the TorchScript exporter: {err.reason}"
        return self.check(exported.proto)


def _sample(torch, fake):
    """A real tensor like `fake` (shape, dtype): random floats; zeros for integers and
    booleans, valid as indices."""
    shape, dtype = tuple(fake.shape), fake.dtype
    if dtype.is_floating_point:
        return torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(dtype)
    return torch.zeros(shape, dtype=dtype)


def _attr(submodules: dict, target: str):
    """A `get_attr` node's value, from the partitioner's table of submodules by name."""
    *path, last = target.split(".")
    owner = submodules.get(".".join(path))
    return getattr(owner, last, None) if owner is not None else None


def _set_attr(root, target: str, value) -> None:
    torch = require_torch()
    *path, last = target.split(".")
    obj = root
    for part in path:
        if not hasattr(obj, part):
            setattr(obj, part, torch.nn.Module())
        obj = getattr(obj, part)
    setattr(obj, last, value)


def dynamo_graph_breaks() -> int:
    """Graph breaks dynamo has counted in this process (all compiled functions)."""
    require_torch()
    from torch._dynamo.utils import counters

    return sum(counters["graph_break"].values())


def frozen_inputs(gm, example_inputs: Sequence) -> list[bool]:
    """For each placeholder: whether it is a parameter or buffer of a module (dynamo's
    source for it says so), which the partitions then hold as weights."""
    torch = require_torch()
    from torch._dynamo import source as sources

    flags = []
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for node, value in zip(placeholders, example_inputs):
        arg = node.meta.get("grapharg")
        src = getattr(arg, "source", None)
        frozen = isinstance(value, torch.nn.Parameter)
        while src is not None and not frozen:
            frozen = isinstance(src, (sources.ParamBufferSource,
                                      sources.UnspecializedParamBufferSource))
            src = getattr(src, "base", None)
        flags.append(frozen)
    return flags


def tensor_outputs(sub) -> bool:
    """Whether a fused partition returns plain tensors only (a tuple result of an op
    inside it leaving whole would not come back from the compiled model's flat outputs)."""
    torch = require_torch()
    out = next(n for n in sub.graph.nodes if n.op == "output")
    values = out.args[0] if isinstance(out.args[0], (tuple, list)) else (out.args[0],)
    return all(_is_static_tensor(torch, _example(v)) for v in values)


@dataclasses.dataclass
class Partition:
    """A fused submodule of the split graph and what it holds."""

    name: str  # the submodule's attribute name in the split graph module
    node: object  # its call_module node
    ops: list[str]  # node_name of each op in it


def _index_as_method(gm) -> None:
    """Tensor indexing `operator.getitem(x, i)` becomes the method call `x.__getitem__(i)`
    (the same op). The partitioner moves every `operator.getitem` into its source's
    partition, for tuple results; an index that is itself a tensor (`x[mask]`, as GPT-2's
    attention mask does) makes the getitem a user of two sources, and when those sit in
    different partitions torch 2.14's reassignment loop moves it back and forth forever."""
    torch = require_torch()
    changed = False
    for node in list(gm.graph.nodes):
        if (node.op == "call_function" and node.target is operator.getitem
                and isinstance(_example(node.args[0]), torch.Tensor)):
            with gm.graph.inserting_after(node):
                method = gm.graph.call_method("__getitem__", node.args, node.kwargs)
            method.meta = dict(node.meta)
            node.replace_all_uses_with(method)
            gm.graph.erase_node(node)
            changed = True
    if changed:
        gm.recompile()


def split(gm, support: ImporterSupport, min_ops: int = 2) -> tuple[object, list[Partition]]:
    """`gm` with its supported nodes fused into submodules `glow_0`, `glow_1`, ... (in
    place), and those partitions. A partition of fewer than `min_ops` ops (a lone op
    between unsupported ones) stays eager: a round trip through the compiler and numpy
    for one op is not worth it."""
    require_torch()
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
    from torch.fx.passes.utils.fuser_utils import fuse_by_partitions

    _index_as_method(gm)
    # ImporterSupport is an OperatorSupportBase by its methods: subclassing it would import
    # torch with this module, which must import without it
    partitioner = CapabilityBasedPartitioner(gm, support,  # type: ignore[arg-type]
                                             allows_single_node_partition=min_ops <= 1)
    proposed = [p for p in partitioner.propose_partitions()
                if sum(n.op != "get_attr" and n.target is not operator.getitem
                       for n in p.nodes) >= min_ops]
    ops = [[node_name(n) for n in p.nodes] for p in proposed]
    if not proposed:
        return gm, []
    fused = fuse_by_partitions(gm, [dict(p.nodes) for p in proposed], prefix="glow_",
                               always_return_tuple=True)
    calls = {n.target: n for n in fused.graph.nodes
             if n.op == "call_module" and str(n.target).startswith("glow_")}
    return fused, [Partition(f"glow_{i}", calls[f"glow_{i}"], names)
                   for i, names in enumerate(ops)]
